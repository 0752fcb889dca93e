// Files in and out of a screencast page: the page's file chooser (the user picks files: the
// desktop app's dialog, else a file input whose bytes go to the sidecar) and the downloads
// shelf (name, size, state, "Show in folder"; in web mode the saved path is shown instead).
import { useEffect, useReducer, useRef, useState } from 'react';
import type { Download, FileChooser } from '../api/protocol';
import { formatBytes, isDesktop, pickFilesNative, revealInFolder } from '../native';
import type { ScreencastState } from '../pane/types';
import { DOWNLOAD_FADE_MS, fadePlan, newFadeClock } from '../screencast/downloadFade';
import type { WorkspaceStore } from '../workspace/store';

/** Largest file the web-mode picker sends, in bytes (the sidecar's bound, protocol §8). */
export const MAX_UPLOAD_BYTES = 64 * 1024 * 1024;

/** The page asks for files: the user picks them here (or cancels). */
export function FileChooserPanel({ store, paneId, sc }: { store: WorkspaceStore; paneId: string; sc: ScreencastState }) {
  const c: FileChooser | null = sc.fileChooser;
  const input = useRef<HTMLInputElement>(null);
  const [tooBig, setTooBig] = useState<string | null>(null);
  if (!c) return null;
  const cancel = () => store.browser.answerFileChooser(paneId, c.id, { paths: [] });
  const choose = () => {
    if (!isDesktop()) {
      input.current?.click();
      return;
    }
    void pickFilesNative(c.multiple, c.accept).then(
      (paths) => store.browser.answerFileChooser(paneId, c.id, { paths }),
      () => input.current?.click(),
    );
  };
  return (
    <div className="browser-prompt-backdrop">
      <div className="browser-prompt" role="dialog" aria-label="The page asks for files" data-testid="file-chooser" onMouseDown={(e) => e.stopPropagation()}>
        <h3>{c.multiple ? 'The page asks for files' : 'The page asks for a file'}</h3>
        {c.accept && (
          <p className="page-dialog-message" data-testid="file-chooser-accept">
            Accepted: {c.accept}
          </p>
        )}
        <input
          ref={input}
          type="file"
          hidden
          data-testid="file-chooser-input"
          multiple={c.multiple}
          accept={c.accept || undefined}
          onChange={(e) => {
            const files = Array.from(e.target.files ?? []);
            e.target.value = '';
            if (!files.length) return;
            const big = files.find((f) => f.size > MAX_UPLOAD_BYTES);
            if (big) {
              setTooBig(`${big.name} is over ${formatBytes(MAX_UPLOAD_BYTES)}`);
              return;
            }
            setTooBig(null);
            store.browser.answerFileChooser(paneId, c.id, { files });
          }}
        />
        {(tooBig ?? sc.fileChooserError) && (
          <p className="browser-panel-error" role="alert" data-testid="file-chooser-error">
            {tooBig ?? sc.fileChooserError}
          </p>
        )}
        <div className="browser-panel-actions">
          <button className="panel-btn" data-testid="file-chooser-cancel" onClick={cancel}>
            Cancel
          </button>
          <button className="panel-btn primary" data-testid="file-chooser-choose" autoFocus onClick={choose}>
            {c.multiple ? 'Choose files…' : 'Choose a file…'}
          </button>
        </div>
      </div>
    </div>
  );
}

const STATE_TEXT: Record<Download['state'], string> = { in_progress: 'downloading', completed: 'done', canceled: 'cancelled', failed: 'failed' };

function DownloadRow({ d, fading, onPin, onDismiss }: { d: Download; fading: boolean; onPin: () => void; onDismiss: () => void }) {
  const [shown, setShown] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const size = d.state === 'in_progress' && d.total > 0 ? `${formatBytes(d.received)} of ${formatBytes(d.total)}` : formatBytes(d.state === 'completed' ? Math.max(d.received, d.total) : d.received);
  return (
    <div className={fading ? 'download fading' : 'download'} data-testid="download" data-state={d.state} data-name={d.name}>
      <span className="download-name" title={d.url}>
        {d.name}
      </span>
      <span className="download-size" data-testid="download-size">
        {size}
      </span>
      <span className="download-state" data-testid="download-state">
        {STATE_TEXT[d.state]}
        {d.error ? `: ${d.error}` : ''}
      </span>
      {d.state === 'completed' && d.path && (
        <button
          className="panel-btn"
          data-testid="download-show"
          onClick={() => {
            onPin();
            if (isDesktop()) void revealInFolder(d.path!).catch((e) => setError(String(e)));
            else setShown((s) => !s);
          }}
        >
          Show in folder
        </button>
      )}
      <button className="pane-btn" data-testid="download-dismiss" aria-label="Dismiss" title="Dismiss" onClick={onDismiss}>
        ×
      </button>
      {(shown || error) && (
        <span className="download-path" data-testid="download-path">
          {error ?? d.path}
        </span>
      )}
    </div>
  );
}

/**
 * The pane's downloads (those not dismissed), newest last. A finished one fades away after
 * a while unless the pointer is on the shelf or the user opened its folder (downloadFade.ts).
 */
export function DownloadsShelf({ sc }: { sc: ScreencastState }) {
  const [dismissed, setDismissed] = useState<ReadonlySet<string>>(new Set());
  const [hovered, setHovered] = useState(false);
  const [tick, wake] = useReducer((n: number) => n + 1, 0);
  const clock = useRef(newFadeClock());
  // id → ms its fade started; a hover brings every fading row back.
  const fadingAt = useRef(new Map<string, number>());
  const list = sc.downloads.filter((d) => !dismissed.has(d.id));
  useEffect(() => {
    const now = Date.now();
    const f = fadingAt.current;
    if (hovered) f.clear();
    const { fade, nextAt } = fadePlan(clock.current, list.filter((d) => !f.has(d.id)), hovered, now);
    for (const id of fade) f.set(id, now);
    const gone = [...f].filter(([, t]) => t + DOWNLOAD_FADE_MS <= now).map(([id]) => id);
    for (const id of gone) f.delete(id);
    if (gone.length) setDismissed((d) => new Set([...d, ...gone]));
    if (fade.length) wake();
    const at = [...f.values()].map((t) => t + DOWNLOAD_FADE_MS).concat(nextAt ?? []);
    if (!at.length) return;
    const timer = window.setTimeout(wake, Math.max(0, Math.min(...at) - now));
    return () => window.clearTimeout(timer);
    // `list` is derived from these; `tick` is a timer waking the plan up.
  }, [sc.downloads, dismissed, hovered, tick]); // eslint-disable-line react-hooks/exhaustive-deps
  if (!list.length) return null;
  return (
    <div
      className="downloads"
      data-testid="downloads"
      role="status"
      onMouseDown={(e) => e.stopPropagation()}
      onMouseEnter={() => setHovered(true)}
      onMouseLeave={() => setHovered(false)}
    >
      {list.map((d) => (
        <DownloadRow
          key={d.id}
          d={d}
          fading={fadingAt.current.has(d.id)}
          onPin={() => clock.current.pinned.add(d.id)}
          onDismiss={() => setDismissed(new Set([...dismissed, d.id]))}
        />
      ))}
    </div>
  );
}
