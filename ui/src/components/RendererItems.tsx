import { useState, useSyncExternalStore } from 'react';
import { api } from '../api/client';
import type { RendererSetting } from '../terminal/renderer';
import type { WorkspaceStore } from '../workspace/store';

const CHOICES: { setting: RendererSetting; label: string }[] = [
  { setting: 'auto', label: 'Automatic' },
  { setting: 'webgl', label: 'WebGL' },
  { setting: 'dom', label: 'DOM' },
];

/**
 * A terminal pane's menu section (issue 27): which xterm renderer draws this pane and why
 * (a software GL, WebKitGTK, a lost WebGL context…), and the `terminal.renderer` choice for
 * every terminal (`PATCH /api/config/terminal`: written into config.toml, applied live).
 */
export function RendererItems({ store, paneId, onDone }: { store: WorkspaceStore; paneId: string; onDone: () => void }) {
  const settings = store.settings;
  const view = useSyncExternalStore(settings.subscribe, settings.getSnapshot);
  const [failure, setFailure] = useState<string | null>(null);
  const now = store.terminalRenderer(paneId);
  const setting = view.config.terminalRenderer;
  const choose = async (s: RendererSetting) => {
    setFailure(null);
    try {
      settings.apply(await api.patchTerminal({ renderer: s }));
      onDone();
    } catch (e) {
      setFailure(`Couldn't save terminal.renderer: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  return (
    <div className="menu-group" data-testid="renderer-section">
      <div className="menu-heading" data-testid="renderer-now">
        {now ? `Renderer: ${now.kind === 'webgl' ? 'WebGL' : 'DOM'}` : 'Renderer: not started'}
      </div>
      {now && (
        <div className="menu-note" data-testid="renderer-why">
          {now.why}
        </div>
      )}
      {CHOICES.map((c) => (
        <button
          key={c.setting}
          role="menuitemradio"
          aria-checked={setting === c.setting}
          className="menu-item renderer-item"
          data-testid={`menu-renderer-${c.setting}`}
          onMouseDown={(e) => e.preventDefault()}
          onClick={() => void choose(c.setting)}
        >
          <span>
            <span className="menu-check">{setting === c.setting ? '✓' : ''}</span>
            {c.label}
          </span>
        </button>
      ))}
      {failure && (
        <div className="menu-note menu-error" role="alert">
          {failure}
        </div>
      )}
    </div>
  );
}
