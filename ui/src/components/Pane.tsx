import { memo, useLayoutEffect, useRef } from 'react';
import type { Rect } from '../layout/engine';
import type { PaneModel, WorkspaceStore } from '../workspace/store';

export function paneLabel(p: PaneModel): string {
  return p.title || p.command || 'terminal';
}

interface PaneProps {
  store: WorkspaceStore;
  pane: PaneModel;
  rect: Rect;
  /** false for minimized panes and panes hidden behind a zoom: they stay mounted */
  visible: boolean;
  focused: boolean;
  zoomed: boolean;
  /** asks for the context menu at viewport coordinates */
  onMenu: (paneId: string, x: number, y: number) => void;
}

function Icon({ d }: { d: string }) {
  return (
    <svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true">
      <path d={d} fill="none" stroke="currentColor" strokeWidth="1.4" strokeLinecap="round" strokeLinejoin="round" />
    </svg>
  );
}

const ICONS = {
  splitRight: 'M2.5 3.5h11v9h-11z M8 3.5v9',
  splitDown: 'M2.5 3.5h11v9h-11z M2.5 8h11',
  zoom: 'M3 6V3h3 M10 3h3v3 M13 10v3h-3 M6 13H3v-3',
  unzoom: 'M6 3v3H3 M13 6h-3V3 M10 13v-3h3 M3 10h3v3',
  minimize: 'M4 11.5h8',
  close: 'M4.5 4.5l7 7 M11.5 4.5l-7 7',
};

/** A terminal pane: header + xterm body. Positioned absolutely; never re-parented. */
export const Pane = memo(function Pane({ store, pane, rect, visible, focused, zoomed, onMenu }: PaneProps) {
  const bodyRef = useRef<HTMLDivElement>(null);
  const id = pane.id;

  useLayoutEffect(() => {
    if (bodyRef.current) store.runtime(id)?.mount(bodyRef.current);
  }, [store, id]);

  useLayoutEffect(() => {
    store.runtime(id)?.host.setVisible(visible);
  }, [store, id, visible]);

  const label = paneLabel(pane);
  const btn = (testid: string, title: string, icon: string, onClick: () => void) => (
    <button
      className="pane-btn"
      data-testid={testid}
      title={title}
      aria-label={title}
      onMouseDown={(e) => e.preventDefault() /* keep the terminal's focus */}
      onClick={(e) => {
        e.stopPropagation();
        onClick();
      }}
    >
      <Icon d={icon} />
    </button>
  );

  return (
    <section
      className={`pane${focused ? ' focused' : ''}${visible ? '' : ' hidden'}`}
      data-testid="pane"
      data-pane-id={id}
      data-terminal-id={pane.terminalId ?? ''}
      data-status={pane.status}
      data-focused={focused ? 'true' : 'false'}
      data-visible={visible ? 'true' : 'false'}
      aria-hidden={!visible}
      style={{ left: rect.x, top: rect.y, width: rect.w, height: rect.h }}
      onMouseDown={() => store.focus(id)}
    >
      <header className="pane-header" data-testid="pane-header" onDoubleClick={() => store.toggleZoom(id)}>
        <span className="pane-status" data-status={pane.status} title={pane.status} />
        <span className="pane-title" data-testid="pane-title" title={label}>
          {label}
        </span>
        {pane.status === 'exited' && <span className="pane-badge">exited {pane.exitCode}</span>}
        {pane.status === 'reconnecting' && <span className="pane-badge">reconnecting…</span>}
        <span className="pane-actions">
          {btn('pane-split-right', 'Split right (Ctrl-b %)', ICONS.splitRight, () => store.split(id, 'right'))}
          {btn('pane-split-down', 'Split down (Ctrl-b ")', ICONS.splitDown, () => store.split(id, 'down'))}
          {btn('pane-zoom', zoomed ? 'Unzoom (Ctrl-b z)' : 'Zoom (Ctrl-b z)', zoomed ? ICONS.unzoom : ICONS.zoom, () => store.toggleZoom(id))}
          {btn('pane-minimize', 'Minimize (Ctrl-b m)', ICONS.minimize, () => store.minimize(id))}
          {btn('pane-close', 'Close (Ctrl-b x)', ICONS.close, () => store.close(id))}
        </span>
      </header>
      <div
        className="pane-body"
        data-testid="terminal-body"
        ref={bodyRef}
        onContextMenu={(e) => {
          e.preventDefault();
          store.focus(id);
          onMenu(id, e.clientX, e.clientY);
        }}
      />
    </section>
  );
});
