import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { blockedAddress, displayUrl, normalizeUrl } from '../browser/url';
import type { WorkspaceStore } from '../workspace/store';
import type { PaneModel } from '../workspace/model';

/**
 * The URL: host+path as text (the page title as its tooltip); a click opens a pre-selected
 * field. Enter navigates (a refused URL, or a blocked address, keeps the field open with the
 * reason under it and the pane as it was);
 * Escape or leaving the field discards the edit.
 */
export function UrlField({ store, pane }: { store: WorkspaceStore; pane: PaneModel }) {
  const b = pane.browser!;
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState('');
  const [error, setError] = useState<string | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const nonce = pane.editNonce ?? 0;

  const open = () => {
    setDraft(b.url);
    setError(null);
    setEditing(true);
  };
  const discard = () => {
    setEditing(false);
    setError(null);
  };

  useEffect(() => {
    if (nonce > 0) open();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [nonce]);

  useLayoutEffect(() => {
    if (editing && inputRef.current && document.activeElement !== inputRef.current) {
      inputRef.current.focus();
      inputRef.current.select();
    }
  }, [editing]);

  if (!editing) {
    return (
      <button
        className={`browser-url${b.loading ? ' loading' : ''}`}
        data-testid="browser-url"
        data-loading={b.loading ? 'true' : 'false'}
        title={b.title || b.url || 'Type a URL'}
        onMouseDown={(e) => e.stopPropagation()}
        onClick={(e) => {
          e.stopPropagation();
          store.focus(pane.id);
          open();
        }}
      >
        {b.url ? displayUrl(b.url) : <span className="browser-url-placeholder">Type a URL (localhost:5173, :8000, example.com)</span>}
      </button>
    );
  }
  return (
    <span className="browser-url-edit">
      <input
        ref={inputRef}
        data-testid="browser-url-input"
        className={error ? 'invalid' : ''}
        spellCheck={false}
        autoComplete="off"
        placeholder="localhost:5173"
        value={draft}
        aria-invalid={!!error}
        onMouseDown={(e) => e.stopPropagation()}
        onChange={(e) => {
          setDraft(e.target.value);
          setError(null);
        }}
        onKeyDown={(e) => {
          e.stopPropagation();
          if (e.key === 'Enter') {
            e.preventDefault();
            const r = normalizeUrl(draft);
            if (!r.ok) {
              setError(r.message);
              return;
            }
            const blocked = blockedAddress(r.url);
            if (blocked) {
              setError(blocked);
              return;
            }
            setEditing(false);
            setError(null);
            store.browser.navigate(pane.id, r.url);
            store.browser.focusBrowserBody(pane.id);
          } else if (e.key === 'Escape') {
            e.preventDefault();
            discard();
            store.browser.focusBrowserBody(pane.id);
          }
        }}
        onBlur={discard}
      />
      {error && (
        <span className="browser-url-error" data-testid="browser-url-error" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}
