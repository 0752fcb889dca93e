import { useEffect, useSyncExternalStore } from 'react';
import { IDLE, keystrokeOf, step } from '../keys/prefix';
import type { WorkspaceStore } from '../workspace/store';
import { Baseboard } from './Baseboard';
import { paneLabel } from './Pane';
import { Wall } from './Wall';

/** Catches the prefix in the capture phase on window, before xterm sees the key. */
function usePrefixKeys(store: WorkspaceStore) {
  useEffect(() => {
    let state = IDLE;
    const onKey = (e: KeyboardEvent) => {
      if (e.isComposing) return;
      const r = step(state, keystrokeOf(e));
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
      <Wall store={store} snap={snap} />
      <Baseboard store={store} snap={snap} />
    </div>
  );
}
