// The screencast canvas's context menu: Back, Forward, Reload, Copy link address, Copy image
// (the page's own menu is a native widget that never shows in frames). The link and image
// under the pointer come from the sidecar; until then their items wait.
import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { writeClipboard } from '../clipboard';
import { menuPosition } from '../screencast/menu';
import type { ScreencastState } from '../pane/types';
import type { WorkspaceStore } from '../workspace/store';

/** The menu of screencast pane `paneId`, at the pointer; any choice, Escape or a click elsewhere closes it. */
export function CanvasMenu({ store, paneId, sc }: { store: WorkspaceStore; paneId: string; sc: ScreencastState }) {
  const m = sc.contextMenu;
  const ref = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<string | null>(null);
  const [at, setAt] = useState<{ left: number; top: number } | null>(null);
  // Opened near the pane's bottom or right edge, the menu ran past it, where the pane clips
  // it and the wall's bottom hint strip covers it (its last item unreachable): it opens
  // up or left of the pointer instead, always inside the pane body.
  useLayoutEffect(() => {
    const el = ref.current;
    const box = el?.offsetParent as HTMLElement | null;
    if (!m || !el || !box) return setAt(null);
    setAt(menuPosition(m.x, m.y, el.offsetWidth, el.offsetHeight, box.clientWidth, box.clientHeight));
  }, [m, error]);
  useEffect(() => {
    if (!m) return;
    setError(null);
    const down = (e: MouseEvent) => {
      if (!ref.current?.contains(e.target as Node)) store.browser.closeCanvasMenu(paneId);
    };
    const key = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      e.preventDefault();
      e.stopPropagation();
      store.browser.closeCanvasMenu(paneId);
    };
    window.addEventListener('mousedown', down, true);
    window.addEventListener('keydown', key, true);
    return () => {
      window.removeEventListener('mousedown', down, true);
      window.removeEventListener('keydown', key, true);
    };
  }, [m, store, paneId]);
  if (!m) return null;
  const run = (f: () => void | Promise<void>) => () => {
    void Promise.resolve()
      .then(f)
      .then(
        () => store.browser.closeCanvasMenu(paneId),
        (e: unknown) => setError(`Couldn't copy: ${e instanceof Error ? e.message : String(e)}`),
      );
  };
  const item = (testid: string, label: string, f: () => void | Promise<void>, disabled = false) => (
    <button role="menuitem" className="menu-item" data-testid={testid} disabled={disabled} onClick={run(f)}>
      <span>{label}</span>
    </button>
  );
  return (
    <div
      className="menu canvas-menu"
      role="menu"
      data-testid="canvas-menu"
      data-pending={m.pending ? 'true' : 'false'}
      ref={ref}
      style={at ?? { left: m.x, top: m.y }}
      onMouseDown={(e) => e.stopPropagation()}
      onContextMenu={(e) => e.preventDefault()}
    >
      {item('canvas-back', 'Back', () => store.browser.browserGo(paneId, -1))}
      {item('canvas-forward', 'Forward', () => store.browser.browserGo(paneId, 1))}
      {item('canvas-reload', 'Reload', () => store.browser.browserReload(paneId))}
      <div className="menu-sep" />
      {item('canvas-copy-link', 'Copy link address', () => writeClipboard(m.link!), !m.link)}
      {item('canvas-copy-image', 'Copy image', () => store.browser.copyPageImage(paneId, m.image!), !m.image)}
      {error && (
        <div className="menu-error" role="alert" data-testid="canvas-menu-error">
          {error}
        </div>
      )}
    </div>
  );
}

