import { memo, useEffect, useLayoutEffect, useRef, useState, useSyncExternalStore } from 'react';
import { withHint } from '../keys/hints';
import { useKeymap } from './useKeymap';
import { RENDER_MODES } from '../browser/modes';
import { UrlField } from './UrlField';
import type { Rect } from '../layout/engine';
import type { WorkspaceStore } from '../workspace/store';
import type { PaneModel } from '../workspace/model';
import { Banner } from './Banner';
import { DevServerChip } from './DevServerChip';
import { CrashedPanel, DisconnectedPanel, PageDialogOverlay, PopoutStub, ScreencastErrorBanner, SelectPopupOverlay, StartingNotice, TabStrip } from './ScreencastOverlays';
import { type ViewportChoice, parseCustom } from '../screencast/viewport';
import { chromiumStopped } from '../pane/types';
import { DEFAULT_VIEWPORT_DPR, DEFAULT_VIEWPORT_HEIGHT_CSS_PX, DEFAULT_VIEWPORT_WIDTH_CSS_PX } from '../api/protocol';
import { FindBar, HandleLabel, ICONS, Icon } from './Pane';
import { findLabel } from '../screencast/find';
import { OverflowMenu } from './OverflowMenu';
import { PickerPopupOverlay } from './PickerPopup';
import { DownloadsShelf, FileChooserPanel } from './Transfers';
import { zoomLabel } from '../screencast/zoom';
import { forceOpenArmed } from '../config/sealed';
import { CanvasMenu } from './CanvasMenu';
import { HandoffBanner } from './HandoffBanner';
import { useProjectPresets } from '../project/presets';

interface BrowserPaneProps {
  store: WorkspaceStore;
  pane: PaneModel;
  rect: Rect;
  /** false for minimized panes, panes hidden behind a zoom and panes of other workspaces: they stay mounted */
  visible: boolean;
  focused: boolean;
  zoomed: boolean;
  /** opens the pane menu (split, zoom, move to a workspace, close) at viewport CSS px */
  onMenu: (paneId: string, x: number, y: number) => void;
}

/** Display → "Pop out to a window" (every render mode; embedded switches to screencast first): disabled with the reason shown under it. */
function PopoutItem({ store, pane, onClose }: { store: WorkspaceStore; pane: PaneModel; onClose: () => void }) {
  const offer = useSyncExternalStore(store.subscribe, () => store.getSnapshot().popout);
  const sc = pane.browser?.screencast;
  const out = !!sc && (sc.poppedOut || sc.popping !== null);
  const why = out ? 'already in its own window' : offer.available ? null : (offer.reason ?? 'not available');
  return (
    <button
      role="menuitem"
      className="menu-item"
      data-testid="display-popout"
      disabled={why !== null}
      onClick={() => {
        onClose();
        store.browser.popOut(pane.id);
      }}
    >
      <span>
        <span className="menu-check" />
        Pop out to a window
        <span className="menu-detail" data-testid="display-popout-reason">
          {why ??
            (pane.browser?.mode === 'screencast'
              ? "a real Chromium window with this pane's profile, cookies and page"
              : 'switches this pane to a screencast, then opens a real Chromium window')}
        </span>
      </span>
    </button>
  );
}

/** The Display menu: the render modes, Pop out, and in screencast mode the viewport choices. */
function DisplayMenu({ store, pane, onClose }: { store: WorkspaceStore; pane: PaneModel; onClose: () => void }) {
  const ref = useRef<HTMLDivElement>(null);
  const b = pane.browser!;
  const fixed = b.viewport.mode === 'fixed' ? b.viewport : null;
  const [w, setW] = useState(String(fixed?.width ?? DEFAULT_VIEWPORT_WIDTH_CSS_PX));
  const [h, setH] = useState(String(fixed?.height ?? DEFAULT_VIEWPORT_HEIGHT_CSS_PX));
  const [d, setD] = useState(String(fixed?.dpr ?? DEFAULT_VIEWPORT_DPR));
  const [error, setError] = useState<string | null>(null);
  const projectPresets = useProjectPresets(b.url);
  useEffect(() => store.refreshPopout(), [store]);
  useEffect(() => {
    const down = (e: MouseEvent) => {
      if (!ref.current?.contains(e.target as Node)) onClose();
    };
    const key = (e: KeyboardEvent) => {
      if (e.key === 'Escape') onClose();
    };
    window.addEventListener('mousedown', down, true);
    window.addEventListener('keydown', key, true);
    return () => {
      window.removeEventListener('mousedown', down, true);
      window.removeEventListener('keydown', key, true);
    };
  }, [onClose]);
  const pick = (c: ViewportChoice) => {
    store.browser.setViewport(pane.id, c);
    onClose();
  };
  const isPreset = (name: string) => fixed?.preset === name;
  // While popped out the window's size is the user's: the sidecar refuses viewport writes.
  const out = !!b.screencast && (b.screencast.poppedOut || b.screencast.popping !== null);
  return (
    <div className="menu display-menu" role="menu" data-testid="browser-display-menu" ref={ref}>
      {RENDER_MODES.map((m) => (
        <button
          key={m.mode}
          role="menuitemradio"
          aria-checked={b.mode === m.mode}
          className="menu-item"
          data-testid={`display-${m.mode}`}
          onClick={() => {
            onClose();
            store.browser.setRenderMode(pane.id, m.mode);
          }}
        >
          <span>
            <span className="menu-check">{b.mode === m.mode ? '✓' : ''}</span>
            {m.label}
            <span className="menu-detail">{m.detail}</span>
          </span>
        </button>
      ))}
      <PopoutItem store={store} pane={pane} onClose={onClose} />
      {b.mode === 'screencast' && (
        <>
          <div className="menu-sep" />
          <div className="menu-label">Viewport</div>
          {out && (
            <div className="menu-note" data-testid="viewport-disabled-reason">
              {b.viewport.mode === 'pane'
                ? "Popped out: the window's size is yours. The pane's size applies again when it pops back in."
                : "Popped out: the window's size is yours. It becomes the fixed viewport when it pops back in."}
            </div>
          )}
          <button
            role="menuitemradio"
            aria-checked={b.viewport.mode === 'pane'}
            className="menu-item"
            data-testid="viewport-pane"
            disabled={out}
            onClick={() => pick({ mode: 'pane' })}
          >
            <span>
              <span className="menu-check">{b.viewport.mode === 'pane' ? '✓' : ''}</span>Resize with pane
            </span>
          </button>
          {(projectPresets ?? store.settings.config.presets).map((p) => (
            <button
              key={p.name}
              role="menuitemradio"
              aria-checked={isPreset(p.name)}
              className="menu-item"
              data-testid={`viewport-${p.name.toLowerCase()}`}
              disabled={out}
              onClick={() => pick({ mode: 'fixed', width: p.width, height: p.height, dpr: p.dpr, preset: p.name, ...(p.mobile ? { mobile: true } : {}) })}
            >
              <span>
                <span className="menu-check">{isPreset(p.name) ? '✓' : ''}</span>
                {p.name} <span className="menu-detail-inline">{p.width}×{p.height} @{p.dpr}x</span>
              </span>
            </button>
          ))}
          <form
            className="viewport-custom"
            data-testid="viewport-custom"
            onSubmit={(e) => {
              e.preventDefault();
              const r = parseCustom(w, h, d);
              if (!r.ok) setError(r.message);
              else pick(r.choice);
            }}
            onKeyDown={(e) => e.stopPropagation()}
          >
            <span className="menu-check">{fixed && !fixed.preset ? '✓' : ''}</span>
            Custom
            <input aria-label="width" data-testid="viewport-w" disabled={out} value={w} size={4} onChange={(e) => (setW(e.target.value), setError(null))} />×
            <input aria-label="height" data-testid="viewport-h" disabled={out} value={h} size={4} onChange={(e) => (setH(e.target.value), setError(null))} />@
            <input aria-label="device pixel ratio" data-testid="viewport-dpr" disabled={out} value={d} size={2} onChange={(e) => (setD(e.target.value), setError(null))} />
            <button className="panel-btn" type="submit" data-testid="viewport-apply" disabled={out}>
              Apply
            </button>
            {error && (
              <span className="browser-url-error" role="alert" data-testid="viewport-error">
                {error}
              </span>
            )}
          </form>
        </>
      )}
    </div>
  );
}

/** A navigation the frame waits on names its address after this long (a hung upstream otherwise shows blank white for the proxy's 30 s bound). */
export const WAITING_NOTE_MS = 3000;

/** True once `on` has held for `ms` without a break; false again as soon as it ends. */
function useHeldFor(on: boolean, ms: number): boolean {
  const [held, setHeld] = useState(false);
  useEffect(() => {
    setHeld(false);
    if (!on) return;
    const t = setTimeout(() => setHeld(true), ms);
    return () => clearTimeout(t);
  }, [on, ms]);
  return on && held;
}

/** `host[:port]` of an http(s) URL ('' when it is not one). */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

/** The banner's text for a `blocked` report. */
function blockedText(url: string): string {
  return `Loading ${url} failed: the page names its server's own address, which inside the embedded view is another origin, so the browser most likely blocked it (CORS). The page may be incomplete; a screencast shows it at its own origin.`;
}

const UNFOLLOWED =
  "Porthole can't follow this page (not HTML, not served through its proxy, or its grant expired): the address above may lag behind and Back/Forward reload the frame.";

/** Who acts in the agent chip: the driving terminal's handle (issue 26), else "agent". */
function AgentName({ store, handle }: { store: WorkspaceStore; handle: string | null }) {
  const drivers = useSyncExternalStore(store.drivers.subscribe, store.drivers.getSnapshot);
  return <>{(handle && drivers[handle]) || 'agent'}</>;
}

/** The terminal driving this pane (issue 26): its `ph browser` verbs act here; the pane menu hands it to another. */
function DriverChip({ store, handle }: { store: WorkspaceStore; handle: string | null }) {
  const drivers = useSyncExternalStore(store.drivers.subscribe, store.drivers.getSnapshot);
  const driver = handle ? drivers[handle] : undefined;
  if (!driver) return null;
  return (
    <span className="driver-chip" data-testid="pane-driver" title={`${driver}'s agent drives this pane (ph browser); another terminal may watch it but not change it. Hand it over from the pane menu.`}>
      {driver}
    </span>
  );
}

/** The red chip of a screencast pane while force-open is armed (issue 24): its next documents get closed shadow roots opened. */
function ForceOpenChip({ store }: { store: BrowserPaneProps['store'] }) {
  const s = store.settings;
  const armed = useSyncExternalStore(s.subscribe, () => forceOpenArmed(s.config.sealed, s.getSnapshot().snapshot?.envLocks.includes('agent.sealed') ?? false));
  if (!armed) return null;
  return (
    <span className="force-open-chip" data-testid="force-open-chip" role="status" title="Force-open is armed (Agent access): this pane's next pages get closed shadow roots opened at load, which the page can detect.">
      force-open
    </span>
  );
}

/** A browser pane: header (URL, back/forward/reload, Display) over an iframe. Never re-parented. */
export const BrowserPane = memo(function BrowserPane({ store, pane, rect, visible, focused, zoomed, onMenu }: BrowserPaneProps) {
  const keymap = useKeymap(store.settings);
  const hostRef = useRef<HTMLDivElement>(null);
  const [menu, setMenu] = useState(false);
  const id = pane.id;
  const b = pane.browser!;

  useLayoutEffect(() => {
    if (hostRef.current) store.browser.mount(id, hostRef.current);
  }, [store, id]);
  useEffect(() => {
    store.browser.browserVisible(id, visible);
  }, [store, id, visible]);
  const sc = b.screencast;
  // A page's popup (select list, picker) closes when the pane loses focus, as a native one does.
  const popupOpen = !!sc?.popup;
  useEffect(() => {
    if (!focused && popupOpen) store.browser.dismissPopup(id);
  }, [store, id, focused, popupOpen]);
  const menuOpen = !!sc?.contextMenu;
  useEffect(() => {
    if (!focused && menuOpen) store.browser.closeCanvasMenu(id);
  }, [store, id, focused, menuOpen]);

  const btn = (testid: string, title: string, icon: string, onClick: () => void, disabled = false) => (
    <button
      className="pane-btn"
      data-testid={testid}
      title={title}
      aria-label={title}
      disabled={disabled}
      onMouseDown={(e) => e.preventDefault()}
      onClick={(e) => {
        e.stopPropagation();
        onClick();
      }}
    >
      <Icon d={icon} />
    </button>
  );
  const noUrl = !b.url;
  // Back/forward/reload need a running Chromium; an address typed in the field relaunches it.
  const stopped = sc !== null && chromiumStopped(sc);
  const navOff = noUrl || stopped;
  const why = (label: string) => (stopped ? `${label} (Chromium stopped: Relaunch first)` : label);
  // The iframe renderer's banners take their own row above the frame (the frame slot moves
  // down), one at a time: a page the shim can't follow sends no `blocked` either.
  const banner = b.uninstrumented && b.view === 'ready' && !sc;
  const blockedBanner = !banner && !!b.blocked && b.view === 'ready' && !sc;
  const noticeBanner = !banner && !blockedBanner && !!b.notice && b.view === 'ready' && !sc;
  // A page the frame waits on (URL field, reload, a link): its address after a few seconds.
  const waitingFor = useHeldFor(b.loading && !sc && b.view === 'ready', WAITING_NOTE_MS) ? hostOf(b.url) : '';

  return (
    <section
      className={`pane browser-pane${focused ? ' focused' : ''}${visible ? '' : ' hidden'}${sc && sc.tabs.length >= 2 ? ' has-tabs' : ''}${banner || blockedBanner || noticeBanner ? ' has-banner' : ''}`}
      data-testid="pane"
      data-pane-id={id}
      data-kind="browser"
      data-status={pane.status}
      data-view={b.view}
      data-mode={b.mode}
      data-browser-id={b.browserId ?? undefined}
      data-handle={pane.handle ?? ''}
      data-remote={pane.remote ?? undefined}
      data-attention={pane.attention ? 'true' : 'false'}
      data-focused={focused ? 'true' : 'false'}
      data-visible={visible ? 'true' : 'false'}
      aria-hidden={!visible}
      style={{ left: rect.x, top: rect.y, width: rect.w, height: rect.h }}
      onMouseDown={() => store.focus(id)}
    >
      <header
        className="pane-header browser-header"
        data-testid="pane-header"
        onDoubleClick={() => store.toggleZoom(id)}
        onContextMenu={(e) => {
          // The address field keeps its own menu (cut, copy, paste).
          if (e.target instanceof HTMLInputElement) return;
          e.preventDefault();
          store.focus(id);
          onMenu(id, e.clientX, e.clientY);
        }}
      >
        <span className="browser-nav">
          {btn('browser-back', why('Back'), ICONS.back, () => store.browser.browserGo(id, -1), navOff)}
          {btn('browser-forward', why('Forward'), ICONS.forward, () => store.browser.browserGo(id, 1), navOff)}
          {btn('browser-reload', why('Reload'), ICONS.reload, () => store.browser.browserReload(id), navOff)}
        </span>
        <DevServerChip store={store} pane={pane} visible={visible} />
        {sc?.agent && (
          <span
            className="agent-chip"
            data-testid="agent-chip"
            data-acting={sc.agent.acting ? 'true' : 'false'}
            role="status"
            title="An agent (ph browser) is driving this page. Click or type in the page to stop its action."
          >
            <span className="agent-chip-dot" />
            <AgentName store={store} handle={pane.handle} />: {sc.agent.verb}
          </span>
        )}
        {b.mode === 'screencast' && <ForceOpenChip store={store} />}
        <DriverChip store={store} handle={pane.handle} />
        {b.isolated && (
          <span className="driver-chip" data-testid="pane-isolated" title="This pane's browser keeps its own cookies: a login here is not shared with the other browser panes (ph browser open --isolated).">
            isolated
          </span>
        )}
        <UrlField store={store} pane={pane} />
        {sc && sc.zoom !== 1 && (
          <button className="browser-zoom" data-testid="browser-zoom" title="Page zoom: click to reset (Ctrl+0)" onMouseDown={(e) => e.preventDefault()} onClick={(e) => (e.stopPropagation(), store.browser.setZoom(id, 1))}>
            {zoomLabel(sc.zoom)}
          </button>
        )}
        <HandleLabel handle={pane.handle} />
        <span className="pane-actions">
          <span className="display-anchor">
            <button
              className="pane-btn display-btn"
              data-testid="browser-display"
              title="Display: how this page is rendered"
              aria-haspopup="menu"
              aria-expanded={menu}
              onMouseDown={(e) => e.preventDefault()}
              onClick={(e) => {
                e.stopPropagation();
                setMenu((m) => !m);
              }}
            >
              <Icon d={ICONS.display} />
            </button>
            {menu && <DisplayMenu store={store} pane={pane} onClose={() => setMenu(false)} />}
          </span>
          {btn('pane-open-browser', withHint('Open another browser pane', keymap, { kind: 'openBrowser' }), ICONS.browser, () => store.openBrowser(id))}
          {btn('pane-zoom', withHint(zoomed ? 'Unzoom' : 'Zoom', keymap, { kind: 'zoom' }), zoomed ? ICONS.unzoom : ICONS.zoom, () => store.toggleZoom(id))}
          {btn('pane-minimize', withHint('Minimize', keymap, { kind: 'minimize' }), ICONS.minimize, () => store.minimize(id))}
          <OverflowMenu />
          {btn('pane-close', withHint('Close', keymap, { kind: 'close' }), ICONS.close, () => void store.requestClose(id))}
        </span>
        {b.loading && <span className="browser-progress" data-testid="browser-progress" role="progressbar" aria-label="Loading the page" />}
      </header>
      <HandoffBanner store={store} handle={pane.handle} />
      <div className="pane-body browser-body" data-testid="browser-body">
        {/* The runtime mounts its frame here once; React renders nothing inside this div. */}
        {sc && <TabStrip store={store} paneId={id} sc={sc} />}
        <div className="frame-slot" ref={hostRef} />
        {sc && <SelectPopupOverlay store={store} paneId={id} sc={sc} />}
        {sc?.popup?.kind === 'input' && <PickerPopupOverlay store={store} paneId={id} popup={sc.popup} />}
        {sc && <PageDialogOverlay store={store} paneId={id} sc={sc} />}
        {sc && <FileChooserPanel store={store} paneId={id} sc={sc} />}
        {sc && <DownloadsShelf sc={sc} />}
        {sc && <CanvasMenu store={store} paneId={id} sc={sc} />}
        {sc && pane.finding && (
          <FindBar
            onRun={(text, backwards, next) => store.browser.find(id, text, backwards, next)}
            onClose={() => store.setFinding(id, false)}
            missing={(text) => sc.find?.text === text && sc.find.count === 0}
            label={(text) => findLabel(text, sc.find)}
            maxLength={256}
            focusKey={sc.findFocus}
          />
        )}
        {sc && <StartingNotice view={b.view} />}
        {sc && <ScreencastErrorBanner store={store} paneId={id} sc={sc} />}
        {sc && <DisconnectedPanel store={store} paneId={id} sc={sc} />}
        {sc && <CrashedPanel store={store} paneId={id} sc={sc} />}
        {sc && <PopoutStub store={store} paneId={id} sc={sc} />}
        {b.view === 'empty' && (
          <div className="browser-panel browser-empty" data-testid="browser-empty">
            <p>Type a URL above: a dev server on this machine (<code>localhost:5173</code>, <code>:8000</code>) opens embedded; an <code>https://</code> site opens as a screencast.</p>
          </div>
        )}
        {b.view === 'https' && (
          <div className="browser-panel" data-testid="browser-https-panel" role="alert">
            <h3>This page can't be embedded</h3>
            <p>{b.message}</p>
            <p className="browser-panel-url">{b.url}</p>
            <div className="browser-panel-actions">
              <button className="panel-btn primary" data-testid="browser-open-screencast" onClick={() => store.browser.setRenderMode(id, 'screencast')}>
                Open as screencast
              </button>
            </div>
            <p className="browser-panel-note" data-testid="browser-screencast-note">
              A screencast renders the page in a real headless Chromium and paints it here.
            </p>
          </div>
        )}
        {b.view === 'error' && (
          <div className="browser-panel" data-testid="browser-error-panel" role="alert">
            <h3>Couldn't open this page</h3>
            <p>{b.message}</p>
            <div className="browser-panel-actions">
              <button className="panel-btn" data-testid="browser-error-retry" onClick={() => store.browser.browserReload(id, true)}>
                Try again
              </button>
            </div>
          </div>
        )}
        {banner && (
          <Banner testid="browser-banner" role="status" text={UNFOLLOWED}>
            <button className="panel-btn" data-testid="browser-banner-reload" onClick={() => store.browser.browserReload(id, true)}>
              Reload
            </button>
            <button
              className="pane-btn"
              data-testid="browser-banner-dismiss"
              title="Dismiss"
              aria-label="Dismiss"
              onClick={() => store.browser.dismissBanner(id)}
            >
              <Icon d={ICONS.close} />
            </button>
          </Banner>
        )}
        {blockedBanner && b.blocked && (
          <Banner testid="browser-blocked" role="alert" text={blockedText(b.blocked.url)}>
            <button className="panel-btn primary" data-testid="browser-blocked-screencast" onClick={() => store.browser.setRenderMode(id, 'screencast')}>
              Open as screencast
            </button>
            <button
              className="pane-btn"
              data-testid="browser-blocked-dismiss"
              title="Dismiss"
              aria-label="Dismiss"
              onClick={() => store.browser.dismissBlocked(id)}
            >
              <Icon d={ICONS.close} />
            </button>
          </Banner>
        )}
        {noticeBanner && b.notice && (
          <Banner testid="browser-notice" role="status" text={b.notice}>
            <button className="panel-btn primary" data-testid="browser-notice-screencast" onClick={() => store.browser.setRenderMode(id, 'screencast')}>
              Open as screencast
            </button>
            <button
              className="pane-btn"
              data-testid="browser-notice-dismiss"
              title="Dismiss"
              aria-label="Dismiss"
              onClick={() => store.browser.dismissNotice(id)}
            >
              <Icon d={ICONS.close} />
            </button>
          </Banner>
        )}
        {waitingFor && (
          <div className="browser-waiting" data-testid="browser-waiting" role="status">
            Waiting for {waitingFor}…
          </div>
        )}
        {b.prompt && (
          <div className="browser-prompt-backdrop">
            <div className="browser-prompt" data-testid="browser-prompt" role="dialog" aria-label="Open in a new pane">
              <p>
                Open <span className="browser-prompt-url">{b.prompt}</span> in a new pane?
              </p>
              <div className="browser-panel-actions">
                <button className="panel-btn" data-testid="browser-prompt-cancel" onClick={() => store.browser.answerPrompt(id, false)}>
                  Cancel
                </button>
                <button className="panel-btn primary" data-testid="browser-prompt-accept" autoFocus onClick={() => store.browser.answerPrompt(id, true)}>
                  Open
                </button>
              </div>
            </div>
          </div>
        )}
      </div>
    </section>
  );
});
