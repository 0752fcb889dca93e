import type { WorkspaceStore } from '../workspace/store';
import type { Snapshot } from '../workspace/model';
import { OrphanNotice } from './OrphanNotice';
import { paneLabel } from './Pane';

/** Minimized panes as chips along the bottom; a click restores one. */
export function Baseboard({ store, snap }: { store: WorkspaceStore; snap: Snapshot }) {
  const mins = snap.layout.minimized;
  return (
    <div className="baseboard" data-testid="baseboard">
      <OrphanNotice store={store} orphans={snap.orphans} />
      {mins.length === 0 ? (
        <span className="baseboard-hint">
          <kbd>Ctrl-b</kbd> <kbd>%</kbd> split right · <kbd>"</kbd> down · <kbd>b</kbd> browser · <kbd>z</kbd> zoom · <kbd>m</kbd> minimize · <kbd>x</kbd> close
        </span>
      ) : (
        mins.map((id) => {
          const p = snap.panes[id];
          return (
            <button
              key={id}
              className="chip"
              data-testid="baseboard-chip"
              data-pane-id={id}
              title="Restore"
              onClick={() => store.restore(id)}
            >
              <span className="chip-dot" data-status={p?.status} />
              {p ? paneLabel(p) : id}
              {p?.attention && (
                <span className="chip-attention" data-testid="chip-attention" title="Wants your attention">
                  ●
                </span>
              )}
            </button>
          );
        })
      )}
      <span className="prefix-indicator" data-testid="prefix-indicator">
        <kbd>Ctrl-b</kbd> …
      </span>
    </div>
  );
}
