// The offer of running terminals that no pane shows (a workspace document this UI could not
// read, a terminal made through the API): in the baseboard, so the wall keeps its size.
import type { Orphan } from '../workspace/survivors';
import { orphanText } from '../workspace/survivors';
import type { WorkspaceStore } from '../workspace/store';

/** "2 terminals running without a pane: bash (t3), npm (t5)" · Show · Stop · ✕ (nothing when there are none). */
export function OrphanNotice({ store, orphans }: { store: WorkspaceStore; orphans: Orphan[] }) {
  if (!orphans.length) return null;
  const text = orphanText(orphans);
  return (
    <span className="orphans" data-testid="orphans" role="status">
      <span className="orphans-text" data-testid="orphans-text" title={text}>
        {text}
      </span>
      <button className="chip" data-testid="orphans-show" title="Show each in a new pane" onClick={() => store.orphans.show()}>
        Show
      </button>
      <button className="chip" data-testid="orphans-stop" title={`Stop ${orphans.map((o) => o.id).join(', ')} (their processes end)`} onClick={() => store.orphans.stop()}>
        Stop
      </button>
      <button className="chip" data-testid="orphans-dismiss" title="Dismiss (they keep running)" aria-label="Dismiss" onClick={() => store.orphans.dismiss()}>
        ✕
      </button>
    </span>
  );
}
