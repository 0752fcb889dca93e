import { useEffect, useSyncExternalStore } from 'react';
import { IDLE, keystrokeOf, step } from '../keys/prefix';
import { ConfigBanner } from './ConfigBanner';
import type { WorkspaceStore } from '../workspace/store';
import { Baseboard } from './Baseboard';
import { CloseConfirm } from './CloseConfirm';
import { StoppedOverlay } from './StoppedOverlay';
import { paneLabel } from './Pane';
import { Wall } from './Wall';

/** Catches the prefix in the capture phase on window, before xterm sees the key. */
function usePrefixKeys(store: WorkspaceStore) {
  useEffect(() => {
    let state = IDLE;
    const onKey = (e: KeyboardEvent) => {
      // Nothing to act on while Porthole doesn't answer (the overlay says so).
      if (e.isComposing || store.getSnapshot().liveness !== 'up') return;
      const r = step(state, keystrokeOf(e), store.settings.config);
      state = r.state;
      document.body.classList.toggle('prefix-armed', state.armed);
      if (r.decision.kind === 'pass') return;
      e.preventDefault();
      e.stopImmediatePropagation();
      if (r.decision.kind === 'action') store.dispatch(r.decision.action);
    };
    window.addEventListener('keydown', onKey, { capture: true });
    return () => window.removeEventListener('keydown', onKey, { capture: true });
  }, [store]);
}

export function App({ store }: { store: WorkspaceStore }) {
  const snap = useSyncExternalStore(store.subscribe, store.getSnapshot);
  usePrefixKeys(store);
  const focused = snap.layout.focused ? snap.panes[snap.layout.focused] : undefined;
  const title = focused ? paneLabel(focused) : '';
  useEffect(() => {
    document.title = title ? `${title} — Porthole` : 'Porthole';
  }, [title]);
  useEffect(() => {
    const flush = () => void store.saveNow(true);
    window.addEventListener('pagehide', flush);
    return () => window.removeEventListener('pagehide', flush);
  }, [store]);
  return (
    <div className="app" data-testid="app" data-ready={snap.ready ? 'true' : 'false'}>
      <ConfigBanner settings={store.settings} />
      <Wall store={store} snap={snap} />
      <Baseboard store={store} snap={snap} />
      {snap.closing && <CloseConfirm store={store} snap={snap} q={snap.closing} />}
      {snap.liveness !== 'up' && <StoppedOverlay liveness={snap.liveness} />}
    </div>
  );
}
