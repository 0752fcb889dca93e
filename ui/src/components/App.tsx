import { useEffect, useState, useSyncExternalStore } from 'react';
import { AgentAccess } from './AgentAccess';
import { keystrokeOf } from '../keys/prefix';
import { ConfigBanner } from './ConfigBanner';
import { RestoreBanner } from './RestoreBanner';
import type { WorkspaceStore } from '../workspace/store';
import { Baseboard } from './Baseboard';
import { CloseConfirm } from './CloseConfirm';
import { StoppedOverlay } from './StoppedOverlay';
import { paneLabel } from './Pane';
import { Wall } from './Wall';
import { TrustPrompt } from '../project/TrustPrompt';
import { projectPrompts } from '../project/prompts';

/**
 * Catches the prefix in the capture phase on window, before xterm sees the key (keys pressed
 * inside a framed page come through the shim instead: `WorkspaceStore.prefixKey`).
 */
function usePrefixKeys(store: WorkspaceStore) {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.isComposing) return;
      const d = store.prefixKey(keystrokeOf(e));
      if (d.kind === 'pass') return;
      e.preventDefault();
      e.stopImmediatePropagation();
    };
    window.addEventListener('keydown', onKey, { capture: true });
    return () => window.removeEventListener('keydown', onKey, { capture: true });
  }, [store]);
}

export function App({ store }: { store: WorkspaceStore }) {
  const snap = useSyncExternalStore(store.subscribe, store.getSnapshot);
  usePrefixKeys(store);
  const [agentAccess, setAgentAccess] = useState(false);
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
      <RestoreBanner />
      {!snap.ready && snap.loadError && (
        <div className="load-error" role="status" data-testid="load-error">
          Reading the saved wall failed ({snap.loadError}); trying again.
        </div>
      )}
      <Wall store={store} snap={snap} />
      <Baseboard store={store} snap={snap} onAgentAccess={() => setAgentAccess(true)} />
      {snap.closing && <CloseConfirm store={store} snap={snap} q={snap.closing} />}
      <TrustPrompt prompts={projectPrompts} />
      {agentAccess && <AgentAccess settings={store.settings} wall={snap} onClose={() => setAgentAccess(false)} />}
      {snap.liveness !== 'up' && <StoppedOverlay liveness={snap.liveness} />}
    </div>
  );
}
