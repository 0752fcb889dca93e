import type { WorkspaceStore } from '../workspace/store';
import type { Snapshot } from '../workspace/model';
import { keyCap, boundKey, prefixCap } from '../keys/hints';
import type { Action } from '../keys/prefix';
import { OrphanNotice } from './OrphanNotice';
import { useKeymap } from './useKeymap';
import { paneLabel } from './Pane';
import { WorkspaceStrip } from './WorkspaceStrip';

/** The workspace strip, then the workspace's minimized panes as chips along the bottom; a click restores one. */
/** The actions the idle baseboard reminds of, with their short names. */
const HINTS: [Action, string][] = [
  [{ kind: 'splitRight' }, 'split right'],
  [{ kind: 'splitDown' }, 'down'],
  [{ kind: 'openBrowser' }, 'browser'],
  [{ kind: 'zoom' }, 'zoom'],
  [{ kind: 'minimize' }, 'minimize'],
  [{ kind: 'close' }, 'close'],
  [{ kind: 'newWorkspace' }, 'workspace'],
];

/** `onAgentAccess`: opens the "Agent access" settings panel (App owns whether it is open). */
export function Baseboard({ store, snap, onAgentAccess }: { store: WorkspaceStore; snap: Snapshot; onAgentAccess: () => void }) {
  const mins = snap.layout.minimized;
  const keymap = useKeymap(store.settings);
  const hints = HINTS.flatMap(([a, label]) => {
    const key = boundKey(keymap, a);
    return key === null ? [] : [{ key, label }];
  });
  return (
    <div className="baseboard" data-testid="baseboard">
      <WorkspaceStrip store={store} snap={snap} />
      <OrphanNotice store={store} orphans={snap.orphans} />
      {mins.length === 0 ? (
        <span className="baseboard-hint">
          <kbd>{prefixCap(keymap)}</kbd>{' '}
          {hints.map((h, i) => (
            <span key={h.label}>
              {i > 0 && ' · '}
              <kbd>{keyCap(h.key)}</kbd> {h.label}
            </span>
          ))}
          <span data-testid="hint-right-click">
            {' · '}
            <kbd>right-click</kbd> a terminal: open its ports
          </span>
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
      <button className="baseboard-settings" data-testid="open-agent-access" title="Agent access: what an agent may do with sealed content" onClick={onAgentAccess}>
        Agent access
      </button>
      <span className="prefix-indicator" data-testid="prefix-indicator">
        <kbd>{prefixCap(keymap)}</kbd> …
      </span>
    </div>
  );
}
