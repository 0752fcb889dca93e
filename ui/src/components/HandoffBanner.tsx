import { useState, useSyncExternalStore } from 'react';
import type { WorkspaceStore } from '../workspace/store';

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * An agent handed this pane to the human (issue 26, `ph browser handoff`): its reason, and
 * "Done, hand back" / "Decline". The page stays live under it for the human to finish the
 * step (type a code, solve a CAPTCHA); what they type goes to the page only.
 */
export function HandoffBanner({ store, handle }: { store: WorkspaceStore; handle: string | null }) {
  const st = useSyncExternalStore(store.drivers.subscribe, store.drivers.getState);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const h = handle ? st.handoffs[handle] : undefined;
  if (!h || !handle) return null;
  const answer = async (a: 'done' | 'decline') => {
    setBusy(true);
    setError(null);
    try {
      await store.drivers.answer(handle, a);
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="handoff-banner" data-testid="handoff-banner" role="alert">
      <span className="handoff-text">
        <strong>{h.by}</strong> hands you this step: <span data-testid="handoff-reason">{h.reason}</span>
      </span>
      <button className="panel-btn primary" data-testid="handoff-done" disabled={busy} onMouseDown={(e) => e.stopPropagation()} onClick={() => void answer('done')}>
        Done, hand back
      </button>
      <button className="panel-btn" data-testid="handoff-decline" disabled={busy} onMouseDown={(e) => e.stopPropagation()} onClick={() => void answer('decline')}>
        Decline
      </button>
      {error && <span className="handoff-error">{error}</span>}
    </div>
  );
}
