// "New remote workspace…": a host field (an ssh config alias or `user@host[:port]`) and
// Connect. While the link is made it says "Connecting to HOST…"; a failure shows the
// sidecar's message and code (with ssh's stderr tail: a host key's fingerprint is there) and
// creates nothing; success makes a workspace named after the host with one remote terminal.
import { useEffect, useRef, useState } from 'react';
import { ApiError } from '../api/client';
import type { WorkspaceStore } from '../workspace/store';
import { HOST_RE } from './links';

type Phase = { kind: 'idle' } | { kind: 'connecting'; host: string } | { kind: 'error'; code: string; message: string; stderr: string | null };

/**
 * `initialHost` (`porthole --ssh HOST`, `?ssh=HOST`): the field starts with it and the dialog
 * connects at once, so a failure (an unknown host key) is shown as a click's would be.
 */
export function RemoteDialog({ store, onClose, initialHost }: { store: WorkspaceStore; onClose: () => void; initialHost?: string }) {
  const [host, setHost] = useState(initialHost ?? '');
  const [phase, setPhase] = useState<Phase>({ kind: 'idle' });
  const closed = useRef(false);
  const close = () => {
    closed.current = true;
    onClose();
  };
  const connect = async (h = host.trim()) => {
    if (!HOST_RE.test(h)) {
      setPhase({ kind: 'error', code: 'bad_host', message: 'Enter an ssh config alias or user@host[:port].', stderr: null });
      return;
    }
    setPhase({ kind: 'connecting', host: h });
    try {
      await store.newRemoteWorkspace(h, () => closed.current);
      if (!closed.current) close();
    } catch (e) {
      if (closed.current) return;
      if (e instanceof ApiError) setPhase({ kind: 'error', code: e.code, message: e.message, stderr: e.stderr });
      else setPhase({ kind: 'error', code: 'error', message: e instanceof Error ? e.message : String(e), stderr: null });
    }
  };
  const started = useRef(false);
  useEffect(() => {
    // Once (StrictMode runs effects twice): a host given at launch connects by itself.
    if (initialHost === undefined || started.current) return;
    started.current = true;
    void connect(initialHost.trim());
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  const busy = phase.kind === 'connecting';
  return (
    <div className="browser-prompt-backdrop close-confirm-backdrop" onMouseDown={(e) => e.target === e.currentTarget && close()}>
      <form
        className="browser-prompt remote-dialog"
        data-testid="remote-dialog"
        role="dialog"
        aria-label="New remote workspace"
        onKeyDown={(e) => {
          e.stopPropagation();
          if (e.key === 'Escape') close();
        }}
        onSubmit={(e) => {
          e.preventDefault();
          if (!busy) void connect();
        }}
      >
        <p>
          <strong>New remote workspace</strong>
        </p>
        <label className="remote-host-label">
          Host{' '}
          <input
            className="remote-host"
            data-testid="remote-host"
            autoFocus
            spellCheck={false}
            placeholder="ssh config alias or user@host[:port]"
            value={host}
            disabled={busy}
            onChange={(e) => setHost(e.currentTarget.value)}
          />
        </label>
        {phase.kind === 'connecting' && (
          <p className="remote-status" data-testid="remote-connecting" role="status">
            Connecting to {phase.host}…
          </p>
        )}
        {phase.kind === 'error' && (
          <div className="remote-error" data-testid="remote-error" data-code={phase.code} role="alert">
            <p>
              {phase.message} <code>({phase.code})</code>
            </p>
            {phase.stderr && !phase.message.includes(phase.stderr.trim()) && <pre className="remote-stderr" data-testid="remote-stderr">{phase.stderr.trim()}</pre>}
          </div>
        )}
        <div className="browser-panel-actions">
          <button type="button" className="panel-btn" data-testid="remote-cancel" onClick={close}>
            Cancel
          </button>
          <button type="submit" className="panel-btn primary" data-testid="remote-connect" disabled={busy || host.trim() === ''}>
            Connect
          </button>
        </div>
      </form>
    </div>
  );
}
