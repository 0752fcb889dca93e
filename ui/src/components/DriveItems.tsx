import { useState, useSyncExternalStore } from 'react';
import type { WorkspaceStore } from '../workspace/store';
import type { Snapshot } from '../workspace/model';

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * A browser pane's menu section (issue 26): which terminal drives the pane (`ph browser`
 * from that terminal acts on it; another terminal's changing verbs are refused
 * `pane_in_use`), and "Let tN drive this" for each other terminal pane on the wall, which
 * hands the pane over (`PUT /api/drivers`). The menu closes once the sidecar took it; a
 * refusal stays in the menu with its reason.
 */
export function DriveItems({ store, snap, paneId, onDone }: { store: WorkspaceStore; snap: Snapshot; paneId: string; onDone: () => void }) {
  const drivers = useSyncExternalStore(store.drivers.subscribe, store.drivers.getSnapshot);
  const [failure, setFailure] = useState<string | null>(null);
  const [pending, setPending] = useState<string | null>(null);
  const handle = snap.panes[paneId]?.handle ?? null;
  if (!handle) return null;
  const driver = drivers[handle] ?? null;
  const terminals = Object.values(snap.panes)
    .map((p) => (p.kind === 'terminal' ? p.handle : null))
    .filter((h): h is string => !!h && h !== driver)
    .sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
  const hand = async (t: string) => {
    setPending(t);
    setFailure(null);
    try {
      await store.drivers.handOver(handle, t);
      onDone();
    } catch (e) {
      setFailure(`Couldn't hand ${handle} to ${t}: ${errorText(e)}`);
    } finally {
      setPending(null);
    }
  };
  return (
    <div className="menu-group" data-testid="drive-section">
      <div className="menu-heading" data-testid="drive-heading">
        {driver ? `Driven by ${driver}` : 'No terminal drives this pane'}
      </div>
      {terminals.map((t) => (
        <button key={t} role="menuitem" className="menu-item" data-testid={`menu-drive-${t}`} disabled={pending !== null} onMouseDown={(e) => e.preventDefault()} onClick={() => void hand(t)}>
          <span>{pending === t ? 'handing over…' : `Let ${t} drive this`}</span>
        </button>
      ))}
      {failure && (
        <div className="menu-note menu-error" data-testid="drive-failure" role="alert">
          {failure}
        </div>
      )}
    </div>
  );
}
