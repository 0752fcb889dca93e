import { useEffect, useState, useSyncExternalStore } from 'react';
import { listeningHint, listeningHintText } from '../ports/hint';
import { portRows } from '../ports/ports';
import { runningLabel } from '../workspace/label';
import type { PaneModel } from '../workspace/model';
import type { WorkspaceStore } from '../workspace/store';

/** How often a visible terminal pane running a program asks again which ports it listens on, in ms. */
export const LISTENING_POLL_MS = 3000;

/**
 * The listening-port chip in a terminal pane's header (issue 22, item 15): the lowest port the
 * pane's processes listen on (`:8000`, `+N` for more). Asks `GET /api/terminals/{id}/ports`
 * every `LISTENING_POLL_MS` while the pane is visible and a program other than its shell
 * runs in it (no scan for an idle shell); keeps the last answer while hidden; a failed scan
 * shows nothing. A click opens the pane's context menu, where its ports are. The first time,
 * a one-line hint says so, until dismissed or used (`listeningHint`).
 */
export function ListeningChip({ store, pane, visible, onMenu }: { store: WorkspaceStore; pane: PaneModel; visible: boolean; onMenu: (paneId: string, x: number, y: number) => void }) {
  const id = pane.id;
  const running = runningLabel(pane) !== null;
  const terminal = pane.terminalId;
  const [ports, setPorts] = useState<number[]>([]);
  const pending = useSyncExternalStore(listeningHint.subscribe, () => listeningHint.pending);

  useEffect(() => {
    if (!running || !terminal) {
      setPorts([]);
      return;
    }
    if (!visible) return; // keep the last answer; ask again once shown
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      const rows = await store.ports.listPorts(id).then(portRows, () => []);
      if (!live) return;
      const next = rows.map((r) => r.port);
      setPorts((prev) => (prev.join(',') === next.join(',') ? prev : next));
      timer = setTimeout(() => void tick(), LISTENING_POLL_MS);
    };
    void tick();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [store, id, terminal, running, visible]);

  if (!ports.length) return null;
  const [first, ...more] = ports;
  const names = ports.map((p) => `:${p}`).join(', ');
  return (
    <span className="listening">
      <button
        className="dev-chip"
        data-testid="listening-chip"
        data-port={first}
        title={`Listening on ${names}: click (or right-click the terminal) to open it`}
        onMouseDown={(e) => e.stopPropagation()}
        onClick={(e) => {
          e.stopPropagation();
          listeningHint.done();
          const r = e.currentTarget.getBoundingClientRect();
          store.focus(id);
          onMenu(id, r.left, r.bottom);
        }}
      >
        <span className="dev-chip-dot" aria-hidden="true" />
        <span className="dev-chip-label">
          :{first}
          {more.length ? ` +${more.length}` : ''}
        </span>
      </button>
      {pending && (
        <span className="listening-hint" data-testid="listening-hint" role="status">
          <span className="listening-hint-text">{listeningHintText(first)}</span>
          <button
            className="listening-hint-close"
            data-testid="listening-hint-dismiss"
            title="Got it"
            aria-label="Dismiss"
            onMouseDown={(e) => e.stopPropagation()}
            onClick={(e) => {
              e.stopPropagation();
              listeningHint.done();
            }}
          >
            ×
          </button>
        </span>
      )}
    </span>
  );
}
