import { memo, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { keyHint, withHint } from '../keys/hints';
import { useKeymap } from './useKeymap';
import type { Rect } from '../layout/engine';
import { paneLabel, runningLabel, shortCwd } from '../workspace/label';
import type { WorkspaceStore } from '../workspace/store';
import type { PaneModel } from '../workspace/model';
import { survivorBanner, survivorText } from '../workspace/survivors';
import { Banner } from './Banner';
import { ListeningChip } from './ListeningChip';
import { listeningHint } from '../ports/hint';
import { OverflowMenu } from './OverflowMenu';

export { paneLabel } from '../workspace/label';

interface PaneProps {
  store: WorkspaceStore;
  pane: PaneModel;
  rect: Rect;
  /** false for minimized panes, panes hidden behind a zoom and panes of other workspaces: they stay mounted */
  visible: boolean;
  focused: boolean;
  zoomed: boolean;
  /** asks for the context menu at viewport coordinates */
  onMenu: (paneId: string, x: number, y: number) => void;
}

/**
 * The pane's handle, small and muted in its header, so a human can name the pane to `ph`
 * (`ph close t3`); nothing until the pane has one.
 */
export function HandleLabel({ handle }: { handle: string | null }) {
  if (!handle) return null;
  return (
    <span className="pane-handle" data-testid="pane-handle" title={`Pane handle for ph: ${handle}`}>
      {handle}
    </span>
  );
}

export function Icon({ d }: { d: string }) {
  return (
    <svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true">
      <path d={d} fill="none" stroke="currentColor" strokeWidth="1.4" strokeLinecap="round" strokeLinejoin="round" />
    </svg>
  );
}

export const ICONS = {
  splitRight: 'M2.5 3.5h11v9h-11z M8 3.5v9',
  splitDown: 'M2.5 3.5h11v9h-11z M2.5 8h11',
  zoom: 'M3 6V3h3 M10 3h3v3 M13 10v3h-3 M6 13H3v-3',
  unzoom: 'M6 3v3H3 M13 6h-3V3 M10 13v-3h3 M3 10h3v3',
  minimize: 'M4 11.5h8',
  close: 'M4.5 4.5l7 7 M11.5 4.5l-7 7',
  browser: 'M2.5 3.5h11v9h-11z M2.5 6h11 M4.5 4.75h.01 M6 4.75h.01',
  back: 'M9.5 4L5.5 8l4 4',
  forward: 'M6.5 4l4 4-4 4',
  reload: 'M12.5 8a4.5 4.5 0 1 1-1.3-3.2 M12.5 3v2.5H10',
  display: 'M2.5 4.5h11v7h-11z M6 13.5h4',
};

/**
 * A find bar: typing searches anew (`onRun(text, false, false)`), Enter goes to the next match
 * and Shift+Enter to the previous one (`onRun(text, backwards, true)`), Escape closes.
 * `label` is the count shown beside the field ("2 of 7"), `missing` marks the field red,
 * and a new `focusKey` puts the caret back in the field with its text selected.
 */
export function FindBar(props: {
  onRun: (text: string, backwards: boolean, next: boolean) => void;
  onClose: () => void;
  missing: (text: string) => boolean;
  label?: (text: string) => string;
  maxLength?: number;
  focusKey?: number;
}) {
  const { onRun, onClose, missing, label, maxLength, focusKey } = props;
  const [text, setText] = useState('');
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (focusKey) input.current?.select();
  }, [focusKey]);
  const count = label?.(text) ?? '';
  return (
    <div className="find-bar" data-testid="find-bar" onMouseDown={(e) => e.stopPropagation()}>
      <input
        ref={input}
        autoFocus
        data-testid="find-input"
        className={text && missing(text) ? 'missing' : ''}
        placeholder="Find"
        spellCheck={false}
        maxLength={maxLength}
        value={text}
        onChange={(e) => {
          setText(e.target.value);
          onRun(e.target.value, false, false);
        }}
        onKeyDown={(e) => {
          e.stopPropagation();
          if (e.key === 'Enter') {
            e.preventDefault();
            if (text) onRun(text, e.shiftKey, true);
          } else if (e.key === 'Escape') {
            e.preventDefault();
            onClose();
          }
        }}
      />
      {count && (
        <span className="find-count" data-testid="find-count">
          {count}
        </span>
      )}
      <button className="pane-btn" title="Previous (Shift+Enter)" aria-label="Previous match" onClick={() => text && onRun(text, true, true)}>
        <Icon d="M4 10l4-4 4 4" />
      </button>
      <button className="pane-btn" title="Next (Enter)" aria-label="Next match" onClick={() => text && onRun(text, false, true)}>
        <Icon d="M4 6l4 4 4-4" />
      </button>
      <button className="pane-btn" title="Close (Escape)" aria-label="Close find" onClick={onClose}>
        <Icon d={ICONS.close} />
      </button>
    </div>
  );
}

/** The terminal's find bar: xterm's search addon, answered at once. */
function TerminalFindBar({ store, id }: { store: WorkspaceStore; id: string }) {
  const [missing, setMissing] = useState<string | null>(null);
  return (
    <FindBar
      onRun={(text, backwards) => setMissing(!!text && !store.terminals.find(id, text, backwards) ? text : null)}
      onClose={() => store.setFinding(id, false)}
      missing={(text) => missing === text}
    />
  );
}

/** The attention dot's tooltip: what it means and the keys that jump to the next one. */
function attentionTitle(hint: string | null): string {
  return hint ? `Wants your attention (${hint} jumps here)` : 'Wants your attention';
}

/** A terminal pane: header + xterm body. Positioned absolutely; never re-parented. */
export const Pane = memo(function Pane({ store, pane, rect, visible, focused, zoomed, onMenu }: PaneProps) {
  const keymap = useKeymap(store.settings);
  const bodyRef = useRef<HTMLDivElement>(null);
  const id = pane.id;

  // Visibility first, so a pane mounted hidden (another workspace, minimized) opens its xterm
  // only when it is first shown (TerminalHost.open).
  useLayoutEffect(() => {
    store.runtime(id)?.setVisible(visible);
  }, [store, id, visible]);

  useLayoutEffect(() => {
    if (bodyRef.current) store.runtime(id)?.mount(bodyRef.current);
  }, [store, id]);

  const label = paneLabel(pane);
  const running = runningLabel(pane);
  const cwd = pane.shell?.cwd ?? null;
  const cwdShort = shortCwd(cwd);
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
      data-kind="terminal"
      data-terminal-id={pane.terminalId ?? ''}
      data-handle={pane.handle ?? ''}
      data-remote={pane.remote ?? undefined}
      data-status={pane.status}
      data-focused={focused ? 'true' : 'false'}
      data-visible={visible ? 'true' : 'false'}
      aria-hidden={!visible}
      style={{ left: rect.x, top: rect.y, width: rect.w, height: rect.h }}
      onMouseDown={() => store.focus(id)}
    >
      <header className="pane-header" data-testid="pane-header" onDoubleClick={() => store.toggleZoom(id)}>
        <span className="pane-status" data-status={pane.status} title={pane.status} />
        <span className={`pane-title${running ? ' running' : ''}`} data-testid="pane-title" data-running={running ? 'true' : 'false'} title={running ? `Running: ${running}` : label}>
          {label}
        </span>
        {pane.remote && (
          <span className="pane-remote" data-testid="pane-remote" title={`This terminal runs on ${pane.remote}`}>
            {pane.remote}
          </span>
        )}
        {cwdShort && (
          <span className="pane-cwd" data-testid="pane-cwd" title={cwd ?? ''}>
            {cwdShort}
          </span>
        )}
        <ListeningChip store={store} pane={pane} visible={visible} onMenu={onMenu} />
        {pane.attention && (
          <span className="pane-attention" data-testid="pane-attention" role="status" title={attentionTitle(keyHint(keymap, { kind: 'nextAttention' }))}>
            ●
          </span>
        )}
        {pane.status === 'exited' && (
          <span className="pane-badge" title="Press Enter in the terminal for a new shell">
            exited {pane.exitCode} · Enter restarts
          </span>
        )}
        {pane.status === 'reconnecting' && <span className="pane-badge">reconnecting…</span>}
        {!!pane.keptSurvivors?.length && (
          <span
            className="pane-badge pane-kept"
            data-testid="pane-kept"
            title={`${survivorText(pane.keptSurvivors)} still ${pane.keptSurvivors.length > 1 ? 'run' : 'runs'} from an earlier session in this pane (kept at a restart); closing the pane asks before stopping ${pane.keptSurvivors.length > 1 ? 'them' : 'it'}`}
          >
            + {pane.keptSurvivors.map((k) => k.name).join(', ')}
          </span>
        )}
        <HandleLabel handle={pane.handle} />
        <span className="pane-actions">
          {btn('pane-split-right', withHint('Split right', keymap, { kind: 'splitRight' }), ICONS.splitRight, () => store.split(id, 'right'))}
          {btn('pane-split-down', withHint('Split down', keymap, { kind: 'splitDown' }), ICONS.splitDown, () => store.split(id, 'down'))}
          {btn('pane-open-browser', withHint('Open a browser pane', keymap, { kind: 'openBrowser' }), ICONS.browser, () => store.openBrowser(id))}
          {btn('pane-zoom', withHint(zoomed ? 'Unzoom' : 'Zoom', keymap, { kind: 'zoom' }), zoomed ? ICONS.unzoom : ICONS.zoom, () => store.toggleZoom(id))}
          {btn('pane-minimize', withHint('Minimize', keymap, { kind: 'minimize' }), ICONS.minimize, () => store.minimize(id))}
          <OverflowMenu />
          {btn('pane-close', withHint('Close', keymap, { kind: 'close' }), ICONS.close, () => void store.requestClose(id))}
        </span>
      </header>
      {pane.status === 'exited' && !!pane.survivors?.length && (
        <Banner testid="pane-survivors" role="status" text={survivorBanner(pane.exitCode, pane.survivors)}>
          <button className="panel-btn" data-testid="pane-survivors-stop" title="Stop what still runs from this session" onClick={() => store.terminals.stopSurvivors(id)}>
            Stop it
          </button>
        </Banner>
      )}
      {pane.finding && <TerminalFindBar store={store} id={id} />}
      <div
        className="pane-body"
        data-testid="terminal-body"
        ref={bodyRef}
        onContextMenu={(e) => {
          e.preventDefault();
          listeningHint.done(); // the hint's advice, used
          store.focus(id);
          onMenu(id, e.clientX, e.clientY);
        }}
      />
    </section>
  );
});
