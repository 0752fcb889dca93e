import { useEffect, useState, useSyncExternalStore } from 'react';
import { loopbackTarget } from '../ports/ports';
import type { WorkspaceStore } from '../workspace/store';
import type { PaneModel } from '../workspace/model';
import { paneLabel } from './Pane';

/** How often a visible browser pane on a loopback URL asks again which terminal serves it. */
export const DEV_SERVER_POLL_MS = 3000;

/**
 * The dev-server chip in a browser pane's header: the title of the one terminal pane whose
 * processes listen on the page's loopback port. Asks on mount, on a URL change, and every
 * `DEV_SERVER_POLL_MS` while the pane is visible; shows nothing when zero or two-plus
 * terminals serve the port. A click focuses that terminal.
 */
export function DevServerChip({ store, pane, visible }: { store: WorkspaceStore; pane: PaneModel; visible: boolean }) {
  const url = pane.browser?.url ?? '';
  const loopback = loopbackTarget(url) !== null;
  const [owner, setOwner] = useState<string | null>(null);

  useEffect(() => {
    if (!loopback) {
      setOwner(null);
      return;
    }
    if (!visible) return; // keep the last answer; ask again once shown
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      const id = await store.ports.findServingPane(url).catch(() => null);
      if (!live) return;
      setOwner(id);
      timer = setTimeout(() => void tick(), DEV_SERVER_POLL_MS);
    };
    void tick();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [store, url, loopback, visible]);

  const served = useSyncExternalStore(store.subscribe, () => (owner ? store.getSnapshot().panes[owner] : undefined));
  if (!owner || !served || served.kind !== 'terminal') return null;
  const label = paneLabel(served);
  return (
    <button
      className="dev-chip"
      data-testid="dev-server-chip"
      data-pane={owner}
      title={`Served by the terminal pane "${label}": click to focus it`}
      data-overflow-label={`Go to "${label}" (serves this page)`}
      onMouseDown={(e) => e.stopPropagation()}
      onClick={(e) => {
        e.stopPropagation();
        store.showPane(owner);
      }}
    >
      <span className="dev-chip-dot" aria-hidden="true" />
      <span className="dev-chip-label">{label}</span>
    </button>
  );
}
