import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import type { Snapshot, WorkspaceStore } from '../workspace/store';

export interface MenuAt {
  paneId: string;
  /** viewport coordinates in CSS pixels */
  x: number;
  y: number;
}

interface Item {
  id: string;
  label: string;
  keys?: string;
  disabled?: boolean;
  run: () => void;
}

/** The terminal pane's context menu: copy, paste, split, zoom, minimize, close. */
export function ContextMenu({ store, snap, at, onClose }: { store: WorkspaceStore; snap: Snapshot; at: MenuAt; onClose: () => void }) {
  const ref = useRef<HTMLDivElement>(null);
  const [pos, setPos] = useState({ x: at.x, y: at.y });
  const id = at.paneId;
  const zoomed = snap.layout.zoomed === id;
  const visibleCount = Object.keys(snap.panes).length - snap.layout.minimized.length;
  const canMinimize = snap.layout.zoomed === null && visibleCount > 1;
  const canZoom = zoomed || visibleCount > 1;

  useLayoutEffect(() => {
    // Keep the menu inside the window.
    const r = ref.current!.getBoundingClientRect();
    setPos({ x: Math.max(4, Math.min(at.x, innerWidth - r.width - 4)), y: Math.max(4, Math.min(at.y, innerHeight - r.height - 4)) });
  }, [at.x, at.y]);

  useEffect(() => {
    const down = (e: MouseEvent) => {
      if (!ref.current?.contains(e.target as Node)) onClose();
    };
    const key = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        onClose();
      }
    };
    window.addEventListener('mousedown', down, true);
    window.addEventListener('keydown', key, true);
    window.addEventListener('blur', onClose);
    return () => {
      window.removeEventListener('mousedown', down, true);
      window.removeEventListener('keydown', key, true);
      window.removeEventListener('blur', onClose);
    };
  }, [onClose]);

  const groups: Item[][] = [
    [
      { id: 'copy', label: 'Copy', keys: 'Ctrl+Shift+C', disabled: !store.hasSelection(id), run: () => void store.copy(id) },
      { id: 'paste', label: 'Paste', keys: 'Ctrl+Shift+V', run: () => void store.paste(id) },
      { id: 'find', label: 'Find…', keys: 'Ctrl+Shift+F', run: () => store.setFinding(id, true) },
    ],
    [
      { id: 'split-right', label: 'Split right', keys: 'Ctrl-b %', run: () => store.split(id, 'right') },
      { id: 'split-down', label: 'Split down', keys: 'Ctrl-b "', run: () => store.split(id, 'down') },
      { id: 'zoom', label: zoomed ? 'Unzoom' : 'Zoom', keys: 'Ctrl-b z', disabled: !canZoom, run: () => store.toggleZoom(id) },
      { id: 'minimize', label: 'Minimize', keys: 'Ctrl-b m', disabled: !canMinimize, run: () => store.minimize(id) },
    ],
    [{ id: 'close', label: 'Close', keys: 'Ctrl-b x', run: () => store.close(id) }],
  ];

  return (
    <div className="menu" role="menu" data-testid="context-menu" ref={ref} style={{ left: pos.x, top: pos.y }} onContextMenu={(e) => e.preventDefault()}>
      {groups.map((g, i) => (
        <div className="menu-group" key={i}>
          {g.map((item) => (
            <button
              key={item.id}
              role="menuitem"
              className="menu-item"
              data-testid={`menu-${item.id}`}
              disabled={item.disabled}
              onMouseDown={(e) => e.preventDefault()}
              onClick={() => {
                onClose();
                item.run();
                if (item.id !== 'find') store.focusTerminal();
              }}
            >
              <span>{item.label}</span>
              {item.keys && <kbd className="menu-keys">{item.keys}</kbd>}
            </button>
          ))}
        </div>
      ))}
    </div>
  );
}
