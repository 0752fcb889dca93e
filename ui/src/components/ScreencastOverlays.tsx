// The screencast's pane-drawn chrome inside the body: tab strip, JavaScript dialog, the
// `<select>` popup, the "Chromium quit" panel, the starting notice, the error banner and
// the pop-out stub. State comes from the store; every answer goes through a store action
// (never a socket).
import { useEffect, useRef, useState } from 'react';
import { type ScreencastState, chromiumStopped } from '../pane/types';
import { dialogInPane, stubState } from '../browser/popout';
import type { WorkspaceStore } from '../workspace/store';
import { initialFocus, moveInList } from '../screencast/popup';
import { Banner } from './Banner';

/** Tabs, shown at two or more. */
export function TabStrip({ store, paneId, sc }: { store: WorkspaceStore; paneId: string; sc: ScreencastState }) {
  const ref = useRef<HTMLDivElement>(null);
  const many = sc.tabs.length >= 2;
  // The active tab is always in view (the strip scrolls to it); the wheel scrolls the strip.
  // (Again when a label changes: a longer title before it pushes it out.)
  const labels = sc.tabs.map((t) => t.title || t.url).join('\n');
  useEffect(() => {
    ref.current?.querySelector('.browser-tab.active')?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }, [sc.activeTab, labels, many]);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const wheel = (e: WheelEvent) => {
      const d = Math.abs(e.deltaX) > Math.abs(e.deltaY) ? e.deltaX : e.deltaY;
      if (!d || el.scrollWidth <= el.clientWidth) return;
      e.preventDefault();
      el.scrollLeft += e.deltaMode === 1 ? d * 16 : d;
    };
    el.addEventListener('wheel', wheel, { passive: false });
    return () => el.removeEventListener('wheel', wheel);
  }, [many]);
  if (!many) return null;
  return (
    <div className="browser-tabs" role="tablist" data-testid="browser-tabs" ref={ref}>
      {sc.tabs.map((t) => (
        <span key={t.id} className={`browser-tab${t.id === sc.activeTab ? ' active' : ''}`} role="tab" aria-selected={t.id === sc.activeTab}>
          <button className="browser-tab-title" data-testid="browser-tab" title={t.url} onMouseDown={(e) => e.stopPropagation()} onClick={() => store.browser.selectTab(paneId, t.id)}>
            {t.title || t.url || 'New tab'}
          </button>
          <button className="browser-tab-close" data-testid="browser-tab-close" aria-label="Close tab" title="Close tab" onMouseDown={(e) => e.stopPropagation()} onClick={() => store.browser.closeTab(paneId, t.id)}>
            ×
          </button>
        </span>
      ))}
    </div>
  );
}

const DIALOG_TITLE = { alert: 'The page says', confirm: 'The page asks', prompt: 'The page asks', beforeunload: 'Leave this page?' } as const;

/** A JavaScript dialog: answered only by the user, in the pane only while the browser is in it (popped out, the window shows it). */
export function PageDialogOverlay({ store, paneId, sc }: { store: WorkspaceStore; paneId: string; sc: ScreencastState }) {
  const d = sc.dialog;
  const [text, setText] = useState('');
  useEffect(() => setText(d?.default_prompt ?? ''), [d]);
  if (!d || !dialogInPane(sc)) return null;
  const answer = (accept: boolean) => store.browser.answerDialog(paneId, accept, d.kind === 'prompt' && accept ? text : undefined);
  return (
    <div className="browser-prompt-backdrop">
      <div className="browser-prompt" role="dialog" aria-label={DIALOG_TITLE[d.kind]} data-testid="page-dialog" data-kind={d.kind} onMouseDown={(e) => e.stopPropagation()}>
        <h3>{DIALOG_TITLE[d.kind]}</h3>
        {d.message && <p className="page-dialog-message">{d.message}</p>}
        {d.kind === 'prompt' && (
          <input
            data-testid="page-dialog-input"
            autoFocus
            value={text}
            onChange={(e) => setText(e.target.value)}
            onKeyDown={(e) => {
              e.stopPropagation();
              if (e.key === 'Enter') answer(true);
              if (e.key === 'Escape') answer(false);
            }}
          />
        )}
        <div className="browser-panel-actions">
          {d.kind !== 'alert' && (
            <button className="panel-btn" data-testid="page-dialog-cancel" onClick={() => answer(false)}>
              {d.kind === 'beforeunload' ? 'Stay' : 'Cancel'}
            </button>
          )}
          <button className="panel-btn primary" data-testid="page-dialog-ok" autoFocus={d.kind !== 'prompt'} onClick={() => answer(true)}>
            {d.kind === 'beforeunload' ? 'Leave' : 'OK'}
          </button>
        </div>
      </div>
    </div>
  );
}

/** The page's `<select>` list, drawn under the element's box; Escape or a click elsewhere dismisses it. */
export function SelectPopupOverlay({ store, paneId, sc }: { store: WorkspaceStore; paneId: string; sc: ScreencastState }) {
  const p = sc.popup?.kind === 'select' ? sc.popup : null;
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!p) return;
    const down = (e: MouseEvent) => {
      if (!ref.current?.contains(e.target as Node)) store.browser.choosePopup(paneId, null);
    };
    const buttons = () => Array.from(ref.current?.querySelectorAll<HTMLButtonElement>('button[role=option]') ?? []);
    const enabled = p.options.map((o) => !o.disabled);
    const key = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        e.stopPropagation();
        store.browser.choosePopup(paneId, null);
        return;
      }
      const list = buttons();
      const to = moveInList(enabled, list.indexOf(document.activeElement as HTMLButtonElement), e.key);
      if (to === null) return; // Enter and Space click the focused option (it is a button)
      e.preventDefault();
      e.stopPropagation();
      list[to]?.focus();
    };
    window.addEventListener('mousedown', down, true);
    window.addEventListener('keydown', key, true);
    const first = initialFocus(enabled, p.selected);
    if (first !== null) buttons()[first]?.focus();
    return () => {
      window.removeEventListener('mousedown', down, true);
      window.removeEventListener('keydown', key, true);
    };
  }, [p, store, paneId]);
  if (!p) return null;
  return (
    <div
      className="menu select-popup"
      role="listbox"
      data-testid="select-popup"
      ref={ref}
      style={{ left: p.box.x, top: p.box.y + p.box.height, minWidth: Math.max(80, p.box.width) }}
      onMouseDown={(e) => e.stopPropagation()}
    >
      {p.options.map((o, i) => (
        <button
          key={i}
          role="option"
          aria-selected={i === p.selected}
          className={`menu-item${i === p.selected ? ' selected' : ''}`}
          data-testid="select-option"
          disabled={o.disabled}
          onClick={() => store.browser.choosePopup(paneId, i)}
        >
          {o.label}
        </button>
      ))}
    </div>
  );
}

/** Chromium stopped (crashed or killed): offer a relaunch on the same profile. */
export function DisconnectedPanel({ store, paneId, sc }: { store: WorkspaceStore; paneId: string; sc: ScreencastState }) {
  // Not while a launch is under way (nothing stopped), nor popped out (the stub says it).
  if (!chromiumStopped(sc) || stubState(sc)) return null;
  return (
    <div className="browser-panel" data-testid="screencast-disconnected" role="alert">
      <h3>Chromium quit</h3>
      <p>The Chromium behind this pane crashed or was closed. Relaunch starts it again with the same profile at its last page; an address typed above starts it there.</p>
      {sc.relaunchError && !sc.relaunching && (
        <p className="browser-panel-error" data-testid="screencast-relaunch-error">
          Relaunch failed: {sc.relaunchError}
        </p>
      )}
      <div className="browser-panel-actions">
        <button className="panel-btn primary" data-testid="screencast-relaunch" disabled={sc.relaunching} onClick={() => store.browser.relaunchBrowser(paneId)}>
          {sc.relaunching ? 'Relaunching…' : 'Relaunch'}
        </button>
      </div>
    </div>
  );
}

/** The active tab's renderer crashed (out of memory, killed): Chromium is up, the page is gone; Reload brings it back. */
export function CrashedPanel({ store, paneId, sc }: { store: WorkspaceStore; paneId: string; sc: ScreencastState }) {
  if (!sc.crashed || !sc.connected || stubState(sc)) return null;
  return (
    <div className="browser-panel" data-testid="screencast-crashed" role="alert">
      <h3>The page crashed</h3>
      <p>Its renderer ran out of memory or was killed. What it showed is gone; Reload loads it again.</p>
      <div className="browser-panel-actions">
        <button className="panel-btn primary" data-testid="screencast-crashed-reload" onClick={() => store.browser.browserReload(paneId)}>
          Reload
        </button>
      </div>
    </div>
  );
}

/** Chromium is starting (before the browser exists and its first frame): a quiet notice, not a black box. */
export function StartingNotice({ view }: { view: string }) {
  if (view !== 'loading') return null;
  return (
    <div className="screencast-starting" data-testid="screencast-starting" role="status">
      Starting Chromium…
    </div>
  );
}

/** An operation on a live browser failed (navigate, tab, viewport, viewer grant): say so until dismissed or the next success. */
export function ScreencastErrorBanner({ store, paneId, sc }: { store: WorkspaceStore; paneId: string; sc: ScreencastState }) {
  if (!sc.error || !sc.connected) return null;
  return (
    <Banner testid="screencast-error" role="alert" text={sc.error}>
      <button className="panel-btn" data-testid="screencast-error-dismiss" onClick={() => store.browser.dismissScreencastError(paneId)}>
        Dismiss
      </button>
    </Banner>
  );
}

const STUB_TEXT = {
  opening: ['Opening a window…', 'Chromium is starting in its own window with this pane\'s profile and page.'],
  out: ['Popped out to a window', 'The page lives in its own Chromium window now. Closing that window brings it back here.'],
  returning: ['Coming back…', 'Chromium is returning to this pane at the window\'s page and size.'],
  crashed: ['The window\'s Chromium stopped', 'Relaunch opens the window again at its last page; Pop back in brings the page here.'],
} as const;

/**
 * The pane's stub while its browser is popped out (DESIGN §4.4): what happened and "Pop back
 * in" (a focusable button; Enter works). While the window opens or returns it offers nothing.
 * A failed pop-out or pop-in shows its reason as a banner over the screencast.
 */
export function PopoutStub({ store, paneId, sc }: { store: WorkspaceStore; paneId: string; sc: ScreencastState }) {
  const state = stubState(sc);
  if (!state) {
    return sc.popError ? <Banner testid="popout-error" role="alert" text={sc.popError} /> : null;
  }
  const [title, detail] = STUB_TEXT[state];
  return (
    <div className="browser-panel popout-stub" data-testid="popout-stub" data-state={state} role="status">
      <h3>{title}</h3>
      <p>{detail}</p>
      {state === 'out' && sc.dialog && (
        <p className="browser-panel-note" data-testid="popout-dialog-note">
          A dialog is waiting in the window.
        </p>
      )}
      {sc.popError && (
        <p className="menu-error" data-testid="popout-error" role="alert">
          {sc.popError}
        </p>
      )}
      {(state === 'out' || state === 'crashed') && (
        <div className="browser-panel-actions">
          {state === 'crashed' && (
            <button className="panel-btn" data-testid="popout-relaunch" disabled={sc.relaunching} onClick={() => store.browser.relaunchBrowser(paneId)}>
              {sc.relaunching ? 'Relaunching…' : 'Relaunch'}
            </button>
          )}
          <button className="panel-btn primary" data-testid="popout-popin" onClick={() => store.browser.popIn(paneId)}>
            Pop back in
          </button>
        </div>
      )}
    </div>
  );
}
