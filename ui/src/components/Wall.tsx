import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { type Gap, type Rect, computeLayout } from '../layout/engine';
import type { WorkspaceStore } from '../workspace/store';
import { GAP_PX, type Snapshot } from '../workspace/model';
import { BrowserPane } from './BrowserPane';
import { ContextMenu, type MenuAt } from './ContextMenu';
import { Pane } from './Pane';

function GapHandle({ store, gap }: { store: WorkspaceStore; gap: Gap }) {
  const last = useRef<number | null>(null);
  const horizontal = gap.dir === 'row';
  return (
    <div
      className={`gap gap-${gap.dir}`}
      data-testid="gap"
      data-dir={gap.dir}
      data-path={gap.path.join('.')}
      data-index={gap.index}
      style={{ left: gap.rect.x, top: gap.rect.y, width: gap.rect.w, height: gap.rect.h }}
      onPointerDown={(e) => {
        e.preventDefault();
        e.currentTarget.setPointerCapture(e.pointerId);
        last.current = horizontal ? e.clientX : e.clientY;
        document.body.classList.add(horizontal ? 'dragging-col' : 'dragging-row');
      }}
      onPointerMove={(e) => {
        if (last.current === null) return;
        const pos = horizontal ? e.clientX : e.clientY;
        const delta = pos - last.current;
        if (delta === 0) return;
        last.current = pos;
        store.resizeGap(gap.path, gap.index, delta);
      }}
      onPointerUp={(e) => {
        last.current = null;
        e.currentTarget.releasePointerCapture(e.pointerId);
        document.body.classList.remove('dragging-col', 'dragging-row');
        store.focusTerminal();
      }}
    />
  );
}

/** The wall: every pane is a sibling here, in creation order, positioned from the engine's rectangles. */
export function Wall({ store, snap }: { store: WorkspaceStore; snap: Snapshot }) {
  const ref = useRef<HTMLDivElement>(null);
  const [size, setSize] = useState<{ w: number; h: number }>({ w: 0, h: 0 });
  // Last rectangle each pane had: hidden panes keep it, so their terminal size does not change.
  const lastRects = useRef(new Map<string, Rect>());
  const [menu, setMenu] = useState<MenuAt | null>(null);
  const onMenu = useCallback((paneId: string, x: number, y: number) => setMenu({ paneId, x, y }), []);
  const closeMenu = useCallback(() => setMenu(null), []);

  useLayoutEffect(() => {
    const el = ref.current!;
    const measure = () => {
      const w = el.clientWidth;
      const h = el.clientHeight;
      store.setWall(w, h);
      setSize((s) => (s.w === w && s.h === h ? s : { w, h }));
    };
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, [store]);

  const layout = useMemo(
    () => computeLayout(snap.layout, { x: 0, y: 0, w: size.w, h: size.h }, { gap: GAP_PX }),
    [snap.layout, size],
  );

  // Ctrl-b >: the menu opens near the pane's top-left corner.
  const req = snap.menuRequest;
  useEffect(() => {
    if (!req) return;
    const r = layout.panes.get(req.paneId);
    const box = ref.current?.getBoundingClientRect();
    if (r && box) setMenu({ paneId: req.paneId, x: box.left + r.x + 24, y: box.top + r.y + 36 });
    // Only a new request opens it, not a layout change.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [req?.nonce]);

  const { focused, zoomed } = snap.layout;
  return (
    <div className={`wall${zoomed ? ' zoomed' : ''}`} data-testid="wall" ref={ref}>
      {size.w > 0 &&
        snap.order.map((id) => {
          const pane = snap.panes[id];
          if (!pane) return null;
          const r = layout.panes.get(id);
          if (r) lastRects.current.set(id, r);
          const rect = r ?? lastRects.current.get(id) ?? { x: 0, y: 0, w: size.w, h: size.h };
          // A browser pane and a terminal pane take the same props.
          const Kind = pane.kind === 'browser' ? BrowserPane : Pane;
          return (
            <Kind
              key={id}
              store={store}
              pane={pane}
              rect={rect}
              visible={!!r}
              focused={focused === id}
              zoomed={zoomed === id}
              onMenu={onMenu}
            />
          );
        })}
      {layout.gaps.map((g) => (
        <GapHandle key={`${g.path.join('.')}:${g.index}`} store={store} gap={g} />
      ))}
      {menu && snap.panes[menu.paneId] && <ContextMenu store={store} snap={snap} at={menu} onClose={closeMenu} />}
    </div>
  );
}
