// The question asked before closing a pane whose processes still run (as quitting asks).
import type { WorkspaceStore } from '../workspace/store';
import type { CloseQuestion, Snapshot } from '../workspace/model';
import { paneLabel } from './Pane';

/**
 * "Close "<pane>"? vim is running in this pane · python3 (pid 1234) still runs from this
 * pane's session. Closing stops them." Cancel has the keyboard (Enter or Escape keep the
 * pane); "Close and stop" closes it. Over the whole app, like the quit question.
 */
export function CloseConfirm({ store, snap, q }: { store: WorkspaceStore; snap: Snapshot; q: CloseQuestion }) {
  const p = snap.panes[q.paneId];
  return (
    <div className="browser-prompt-backdrop close-confirm-backdrop" onMouseDown={(e) => e.target === e.currentTarget && store.answerClose(false)}>
      <div
        className="browser-prompt"
        data-testid="close-confirm"
        role="alertdialog"
        aria-label="Close this pane?"
        onKeyDown={(e) => {
          e.stopPropagation();
          if (e.key === 'Escape') store.answerClose(false);
        }}
      >
        <p>
          <strong>Close “{p ? paneLabel(p) : q.paneId}”?</strong>
        </p>
        <ul className="close-confirm-reasons" data-testid="close-confirm-reasons">
          {q.reasons.map((r) => (
            <li key={r}>{r}</li>
          ))}
        </ul>
        <p>Closing the pane stops {q.reasons.length > 1 ? 'them' : 'it'}.</p>
        <div className="browser-panel-actions">
          <button className="panel-btn" data-testid="close-confirm-cancel" autoFocus onClick={() => store.answerClose(false)}>
            Cancel
          </button>
          <button className="panel-btn primary danger" data-testid="close-confirm-ok" onClick={() => store.answerClose(true)}>
            Close and stop
          </button>
        </div>
      </div>
    </div>
  );
}
