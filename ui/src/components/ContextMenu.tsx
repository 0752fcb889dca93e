import { type ReactNode, useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { keyHint } from '../keys/hints';
import { useKeymap } from './useKeymap';
import { leaves } from '../layout/engine';
import { type PortOpenMode, type PortRow, portRows } from '../ports/ports';
import type { WorkspaceStore } from '../workspace/store';
import type { Snapshot } from '../workspace/model';
import { workspaceLabel } from '../workspace/label';
import { WORKSPACES_MAX, workspaceNumber, workspaceOf } from '../workspace/workspaces';
import { LayoutItems } from '../project/LayoutItems';
import { DriveItems } from './DriveItems';
import { RendererItems } from './RendererItems';

export interface MenuAt {
  paneId: string;
  /** viewport coordinates in CSS pixels */
  x: number;
  y: number;
}

interface Item {
  id: string;
  label: string;
  keys?: string | null;
  disabled?: boolean;
  run: () => void;
}

/** One menu row running `item` (the mouse-down keeps the focus where it is). */
function ItemButton({ item, run, children }: { item: Item; run: (item: Item) => void; children: ReactNode }) {
  return (
    <button role="menuitem" className="menu-item" data-testid={`menu-${item.id}`} disabled={item.disabled} onMouseDown={(e) => e.preventDefault()} onClick={() => run(item)}>
      {children}
    </button>
  );
}

type Scan = { kind: 'scanning' } | { kind: 'ok'; rows: PortRow[] } | { kind: 'error'; message: string };

/** The open actions offered for the selected port, in menu order. */
const OPEN_ACTIONS: { mode: PortOpenMode; label: string }[] = [
  { mode: 'iframe', label: 'Open embedded' },
  { mode: 'screencast', label: 'Open as screencast' },
  { mode: 'popout', label: 'Pop out' },
  { mode: 'system', label: 'Open in system browser' },
];

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Every enabled item of the menu, in DOM order (arrow keys walk these). */
function items(menu: HTMLElement | null): HTMLButtonElement[] {
  return menu ? Array.from(menu.querySelectorAll<HTMLButtonElement>('button[role^=menuitem]:not(:disabled)')) : [];
}

/**
 * A pane's context menu. A terminal's: its listening ports (scanned when the menu opens)
 * with their open actions, its project's layouts, then copy, paste, find, split, zoom,
 * minimize, move to a workspace, close. A browser pane's (its header, or the prefix key):
 * split, zoom, minimize, move to a workspace, close (the page has its own menu). Keys: 1–9
 * pick a port, arrows move, Enter activates, Escape closes.
 */
/** The open actions with the config's default render mode first (`browser.default_mode`; Enter opens it). */
function openActions(first: PortOpenMode) {
  return [...OPEN_ACTIONS.filter((a) => a.mode === first), ...OPEN_ACTIONS.filter((a) => a.mode !== first)];
}

export function ContextMenu({ store, snap, at, onClose }: { store: WorkspaceStore; snap: Snapshot; at: MenuAt; onClose: () => void }) {
  const keymap = useKeymap(store.settings);
  const ref = useRef<HTMLDivElement>(null);
  const [pos, setPos] = useState({ x: at.x, y: at.y });
  const id = at.paneId;
  const terminal = snap.panes[id]?.kind === 'terminal';
  const zoomed = snap.layout.zoomed === id;
  const visibleCount = leaves(snap.layout.root).length;
  const canMinimize = snap.layout.zoomed === null && visibleCount > 1;
  const canZoom = zoomed || visibleCount > 1;

  const [scan, setScan] = useState<Scan>(terminal ? { kind: 'scanning' } : { kind: 'ok', rows: [] });
  /** the project section appeared (it loads on its own): the menu may need to move to stay inside */
  const [projectShown, setProjectShown] = useState(false);
  const [selected, setSelected] = useState(0);
  const [pending, setPending] = useState<PortOpenMode | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  /** the "Move to workspace" list is open */
  const [moving, setMoving] = useState(false);
  const pendingRef = useRef(false);
  /** set when the menu goes away: a late open result must not act or dismiss another menu */
  const cancelled = useRef({ cancelled: false });

  useEffect(() => {
    const token = { cancelled: false };
    cancelled.current = token;
    if (!terminal) return;
    store.refreshPopout();
    store.ports.listPorts(id).then(
      (ports) => !token.cancelled && setScan({ kind: 'ok', rows: portRows(ports) }),
      (e) => !token.cancelled && setScan({ kind: 'error', message: errorText(e) }),
    );
    return () => {
      token.cancelled = true;
    };
  }, [store, id, terminal]);

  useLayoutEffect(() => {
    // Keep the menu inside the window (again once the ports section has its size, and when the workspace list opens).
    const r = ref.current!.getBoundingClientRect();
    setPos({ x: Math.max(4, Math.min(at.x, innerWidth - r.width - 4)), y: Math.max(4, Math.min(at.y, innerHeight - r.height - 4)) });
  }, [at.x, at.y, scan.kind, projectShown, moving]);

  useLayoutEffect(() => {
    // Take the keyboard from the terminal so keys drive the menu.
    ref.current?.focus();
  }, []);

  const rows = scan.kind === 'ok' ? scan.rows : [];
  const row: PortRow | undefined = rows[selected];

  const close = useCallback(
    (refocus: boolean) => {
      cancelled.current.cancelled = true;
      onClose();
      if (refocus) store.focusTerminal();
    },
    [onClose, store],
  );

  const open = useCallback(
    async (mode: PortOpenMode) => {
      if (!row || pendingRef.current) return; // repeats are ignored while one is pending
      const token = cancelled.current;
      pendingRef.current = true;
      setPending(mode);
      setFailure(null);
      try {
        await store.ports.openPort(id, row, mode, token);
        if (token.cancelled) return;
        onClose(); // placed or reused: the browser pane has the focus
        if (mode === 'system') store.focusTerminal();
      } catch (e) {
        if (token.cancelled) return;
        setFailure(`Couldn't open ${row.url}: ${errorText(e)}`);
      } finally {
        pendingRef.current = false;
        if (!token.cancelled) setPending(null);
      }
    },
    [row, store, id, onClose],
  );

  useEffect(() => {
    const down = (e: MouseEvent) => {
      if (!ref.current?.contains(e.target as Node)) close(false);
    };
    const key = (e: KeyboardEvent) => {
      const menu = ref.current;
      if (!menu) return;
      const active = document.activeElement;
      let handled = true;
      if (e.key === 'Escape') {
        close(true);
      } else if (/^[1-9]$/.test(e.key) && !e.ctrlKey && !e.altKey && !e.metaKey) {
        const n = Number(e.key) - 1;
        if (n < rows.length) {
          setSelected(n);
          setFailure(null);
          // Focus lands on the row's first action once React rendered the selection.
          requestAnimationFrame(() => menu.querySelector<HTMLButtonElement>('[data-testid=port-open-iframe]')?.focus());
        }
      } else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        const list = items(menu);
        if (list.length) {
          const i = list.indexOf(active as HTMLButtonElement);
          const next = e.key === 'ArrowDown' ? (i + 1) % list.length : i <= 0 ? list.length - 1 : i - 1;
          list[next].focus();
        }
      } else if (e.key === 'Enter') {
        if (active instanceof HTMLButtonElement && menu.contains(active)) active.click();
        else if (row) void open(store.settings.config.defaultMode);
      } else {
        handled = false;
      }
      if (handled) {
        e.preventDefault();
        e.stopPropagation();
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
  }, [onClose, close, rows.length, row, open]);

  const terminalItems: Item[] = [
    { id: 'copy', label: 'Copy', keys: 'Ctrl+Shift+C', disabled: !store.terminals.hasSelection(id), run: () => void store.terminals.copy(id) },
    { id: 'paste', label: 'Paste', keys: 'Ctrl+Shift+V', run: () => void store.terminals.paste(id) },
    {
      id: 'copy-output',
      label: "Copy last command's output",
      disabled: store.terminals.lastOutput(id) === null,
      run: () => void store.terminals.copyLastOutput(id),
    },
    { id: 'find', label: 'Find…', keys: 'Ctrl+Shift+F', run: () => store.terminals.setFinding(id, true) },
  ];
  const groups: Item[][] = [
    ...(terminal ? [terminalItems] : []),
    [
      { id: 'split-right', label: 'Split right', keys: keyHint(keymap, { kind: 'splitRight' }), run: () => store.split(id, 'right') },
      { id: 'split-down', label: 'Split down', keys: keyHint(keymap, { kind: 'splitDown' }), run: () => store.split(id, 'down') },
      { id: 'zoom', label: zoomed ? 'Unzoom' : 'Zoom', keys: keyHint(keymap, { kind: 'zoom' }), disabled: !canZoom, run: () => store.toggleZoom(id) },
      { id: 'minimize', label: 'Minimize', keys: keyHint(keymap, { kind: 'minimize' }), disabled: !canMinimize, run: () => store.minimize(id) },
    ],
    [{ id: 'close', label: 'Close', keys: keyHint(keymap, { kind: 'close' }), run: () => void store.requestClose(id) }],
  ];
  const home = workspaceOf(snap.workspaces, id)?.id;
  const destinations: Item[] = [
    ...snap.workspaces
      .map((w, i) => ({ w, i }))
      .filter(({ w }) => w.id !== home)
      .map(({ w, i }) => ({
        id: `move-${w.id}`,
        label: `${workspaceNumber(i)} ${workspaceLabel(w, snap.panes)}`.trim(),
        // A terminal pane stays on its host.
        disabled: terminal && (w.host ?? null) !== (snap.panes[id]?.remote ?? null),
        run: () => store.ws.movePane(id, w.id),
      })),
    { id: 'move-new', label: 'New workspace', disabled: snap.workspaces.length >= WORKSPACES_MAX, run: () => store.ws.movePane(id, 'new') },
  ];
  const runItem = (item: Item) => {
    close(false);
    item.run();
    if (item.id !== 'find') store.focusTerminal();
  };

  return (
    <div
      className="menu context-menu"
      role="menu"
      tabIndex={-1}
      data-testid="context-menu"
      ref={ref}
      style={{ left: pos.x, top: pos.y }}
      onContextMenu={(e) => e.preventDefault()}
    >
      {terminal && (
        <div className="menu-group ports-section" data-testid="ports-section" data-state={scan.kind}>
          <div className="menu-heading">Listening ports</div>
          {scan.kind === 'scanning' && (
            <div className="menu-note" data-testid="ports-scanning">
              Scanning…
            </div>
          )}
          {scan.kind === 'error' && (
            <div className="menu-note menu-error" data-testid="ports-error" role="alert">
              Couldn't scan: {scan.message}
            </div>
          )}
          {scan.kind === 'ok' && rows.length === 0 && (
            <div className="menu-note" data-testid="ports-empty">
              No listening ports
            </div>
          )}
          {rows.map((r, i) => (
            <button
              key={r.port}
              role="menuitemradio"
              aria-checked={i === selected}
              className={`menu-item port-row${i === selected ? ' selected' : ''}`}
              data-testid="port-row"
              data-port={r.port}
              title={r.url}
              onMouseDown={(e) => e.preventDefault()}
              onClick={() => {
                setSelected(i);
                setFailure(null);
              }}
            >
              <span className="port-main">
                {i < 9 && <kbd className="menu-keys port-key">{i + 1}</kbd>}
                <span className="port-number">:{r.port}</span>
                <span className="port-process">{r.process || `pid ${r.pid}`}</span>
              </span>
              <span className="port-address">{i === selected && pending ? 'opening…' : r.addresses.join(', ')}</span>
            </button>
          ))}
          {row && (
            <div className="port-actions" data-testid="port-actions" data-port={row.port}>
              {openActions(store.settings.config.defaultMode).map((a) => {
                // Only pop-out depends on the sidecar (a display); its reason is shown, not just a tooltip.
                const why = a.mode === 'popout' && !snap.popout.available ? (snap.popout.reason ?? 'not available') : null;
                return (
                  <button
                    key={a.mode}
                    role="menuitem"
                    className="menu-item port-action"
                    data-testid={`port-open-${a.mode}`}
                    disabled={why !== null}
                    aria-busy={pending === a.mode}
                    title={why ?? row.url}
                    onMouseDown={(e) => e.preventDefault()}
                    onClick={() => void open(a.mode)}
                  >
                    <span>{pending === a.mode ? 'opening…' : a.label}</span>
                    {why && (
                      <span className="menu-detail-inline" data-testid={`port-open-${a.mode}-reason`}>
                        {why}
                      </span>
                    )}
                  </button>
                );
              })}
            </div>
          )}
          {failure && (
            <div className="menu-note menu-error" data-testid="ports-failure" role="alert">
              {failure}
            </div>
          )}
        </div>
      )}
      {terminal && (
        <LayoutItems terminal={snap.panes[id]?.remote ? null : (snap.panes[id]?.terminalId ?? null)} handle={snap.panes[id]?.handle ?? null} onPicked={() => close(false)} onShown={() => setProjectShown(true)} />
      )}
      {snap.panes[id]?.kind === 'browser' && <DriveItems store={store} snap={snap} paneId={id} onDone={() => close(false)} />}
      {terminal && <RendererItems store={store} paneId={id} onDone={() => close(true)} />}
      {groups.map((g, i) => (
        <div className="menu-group" key={i}>
          {g.map((item) => (
            <ItemButton key={item.id} item={item} run={runItem}>
              <span>{item.label}</span>
              {item.keys && <kbd className="menu-keys">{item.keys}</kbd>}
            </ItemButton>
          ))}
          {i === groups.length - 2 && (
            <>
              <button
                role="menuitem"
                className="menu-item"
                data-testid="menu-move"
                aria-haspopup="menu"
                aria-expanded={moving}
                onMouseDown={(e) => e.preventDefault()}
                onClick={() => setMoving((m) => !m)}
              >
                <span>Move to workspace</span>
                <span className="menu-keys">{moving ? '▾' : '▸'}</span>
              </button>
              {moving && (
                <div className="menu-sub" role="menu" aria-label="Move to workspace" data-testid="menu-move-list">
                  {destinations.map((item) => (
                    <ItemButton key={item.id} item={item} run={runItem}>
                      <span className="menu-sub-label">{item.label}</span>
                    </ItemButton>
                  ))}
                </div>
              )}
            </>
          )}
        </div>
      ))}
    </div>
  );
}
