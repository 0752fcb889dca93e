// One browser pane's live parts in the screencast render mode, composed from pieces with one
// owner each: the sidecar browser behind it (`BrowserLifecycle`, over HTTP), its viewer socket
// (`ViewerSession`), the canvas view (`CanvasView`), the DOM input (`InputController`), the
// page's dialogs (`PageDialogs`), its `<select>` lists and pickers (`PagePopup`), the zoom (`ZoomState`) and the agent's marks
// (`AgentOverlay`); find in page is a message out (`find`) and its answer in. This class routes between them: the pane's requests to HTTP calls, the
// socket's messages to state patches, and visibility to parking.
//
// The element is created once and mounted once into the pane's body (never re-parented).
// Panes and components never touch the socket; they call the store, which calls this.
//
// About 600 lines, knowingly: every request a pane can make is a short method here that
// picks the piece (or the HTTP call) doing it; the pieces hold the state and the logic.
import { ApiError, api } from '../api/client';
import type { ViewerOut } from '../api/protocol';
import { writeClipboard } from '../clipboard';
import { appWindowRect, popErrorText, shouldRequestPop, statusClearsPopError } from '../browser/popout';
import { isHttpUrl } from '../browser/url';
import { DisposableStore } from '../lifecycle/disposable';
import type { BrowserEvents, CanvasMenuState, RestoreTabs, ScreencastState } from '../pane/types';
import { AgentOverlay } from './AgentOverlay';
import { CanvasView } from './CanvasView';
import { PageDialogs } from './dialogs';
import { browserErrorText } from './errors';
import { parseFrame } from './frame';
import { InputController } from './InputController';
import { PagePopup } from './PagePopup';
import { BrowserLifecycle } from './lifecycle';
import { VIEWPORT_SETTLE_MS, type ViewportChoice, syncMessage, viewportBody } from './viewport';
import { ViewerSession } from './ViewerSession';
import { ZoomState } from './zoom';

/** A hidden or off-screen pane closes its viewer socket after this long (DESIGN §7). */
export const PARK_AFTER_MS = 1000;
/** How long closing waits for the input already sent to reach the page, in ms. */
const UNLOAD_SETTLE_MS = 3000;

export interface ScreencastEvents extends Omit<BrowserEvents, 'onKey' | 'onOpenWindow'> {
  /** the sidecar browser this pane uses changed (persisted so a reloaded UI finds it) */
  onBrowserId: (id: string | null) => void;
  onScreencast: (patch: Partial<ScreencastState>) => void;
  /** the sidecar changed the viewport itself (a pop-in fixes it at the window's last size) */
  onViewport: (choice: ViewportChoice) => void;
  /** the user asked for the find bar (Ctrl+F, Cmd+F on a Mac) */
  onFind: () => void;
}

function errorText(e: unknown): string {
  return e instanceof ApiError ? e.message : String(e);
}

export class ScreencastRuntime {
  private readonly view: CanvasView;
  private readonly session: ViewerSession;
  private readonly browser: BrowserLifecycle;
  private readonly dialogs = new PageDialogs();
  private readonly popup = new PagePopup({
    sendInput: (m) => this.session.sendInput(m),
    show: (popup) => this.events.onScreencast({ popup }),
    fit: () => this.view.fit,
    refocus: () => this.focus(true),
  });
  private readonly zoom = new ZoomState();
  private readonly agent: AgentOverlay;
  private readonly store = new DisposableStore();
  private readonly parkTimer = this.store.timer();
  private readonly syncTimer = this.store.timer();
  private mounted = false;
  private url: string;
  /** the active tab's committed URL (the page shown); `url` may be a pending one while it loads */
  private committed = '';
  private viewport: ViewportChoice;
  /** the pane is on the wall (not minimized or zoomed away) */
  private paneVisible = true;
  /** pane visible and the document shown: the session runs */
  private visible = true;
  private menu: CanvasMenuState | null = null;
  private relaunching = false;
  /** popped out to a window: no sizes sent, never parked (the socket brings the window's URL and its close) */
  private poppedOut = false;
  private popping: 'out' | 'in' | null = null;
  /** Ctrl+F presses so far (ScreencastState.findFocus) */
  private findPresses = 0;

  constructor(
    readonly paneId: string,
    url: string,
    opts: { browserId: string | null; viewport: ViewportChoice; restoreTabs?: RestoreTabs | null; isolated?: boolean; remoteLink?: (() => Promise<string>) | null },
    private readonly events: ScreencastEvents,
  ) {
    this.url = url;
    this.viewport = opts.viewport;
    // Disposed in reverse: the DOM input and the socket stop before the view and the browser go.
    this.browser = this.store.add(
      new BrowserLifecycle(
        paneId,
        opts,
        () => ({ url: this.url, viewport: this.viewport }),
        {
          onBrowserId: (id) => this.events.onBrowserId(id),
          onCreateFailed: (e) => this.events.onChange({ view: 'error', message: browserErrorText(e, true) }),
          onCallFailed: (e) => {
            if (e instanceof ApiError && e.code === 'disconnected') this.events.onScreencast({ connected: false });
            else if (!(e instanceof ApiError && e.status === 400)) this.events.onScreencast({ error: browserErrorText(e, false) });
          },
        },
        api,
      ),
    );
    this.view = this.store.add(new CanvasView(() => this.sendSync(false)));
    this.store.add(this.dialogs);
    this.session = this.store.add(
      new ViewerSession(() => this.grant(), {
        onOpen: () => {
          this.view.resetFrames();
          this.zoom.reconnected();
          this.element.dataset.socket = 'open';
          this.events.onScreencast({ parked: false, error: null });
          this.sendSync(true);
        },
        onFrame: (buf) => {
          const f = parseFrame(buf);
          if (f) this.view.push(f);
        },
        onMessage: (m) => this.onMessage(m),
        onClose: () => {
          this.element.dataset.socket = 'closed';
        },
        onGrantError: (e) => this.events.onScreencast({ error: errorText(e) }),
      }),
    );
    this.agent = this.store.add(new AgentOverlay(this.element, () => this.view.fit, (agent) => this.events.onScreencast({ agent })));
    this.store.add(
      new InputController(this.view.catcher, {
        pagePoint: (e) => this.view.pagePoint(e),
        fit: () => this.view.fit,
        sendInput: (m) => this.session.sendInput(m),
        onPress: () => {
          this.events.onFocus();
          this.focus(true);
        },
        zoom: () => this.zoom.current,
        setZoom: (f) => this.setZoom(f),
        openFind: () => {
          this.events.onScreencast({ findFocus: ++this.findPresses });
          this.events.onFind();
        },
        openMenu: (client, page) => {
          const at = this.view.bodyPoint(client);
          this.menu = { ...at, page, link: null, image: null, pending: true };
          this.events.onScreencast({ contextMenu: this.menu });
          this.session.send({ type: 'inspect', ...page });
        },
      }),
    );
    this.store.listen(document, 'visibilitychange', () => this.applyVisible());
  }

  /** the pane body's host element: canvas, scroll indicator, input catcher, agent marks */
  get element(): HTMLDivElement {
    return this.view.element;
  }

  get currentUrl(): string {
    return this.url;
  }

  /** Screencast panes have no frame window: shim messages never route here. */
  get frameWindow(): Window | null {
    return null;
  }

  handleShim(_origin: string, _msg: unknown): void {}

  private get disposed(): boolean {
    return this.store.isDisposed;
  }

  /** Puts the element into `container` (once) and starts the browser for the URL it has. */
  mount(container: HTMLElement): void {
    if (this.mounted || this.disposed) return;
    this.mounted = true;
    container.appendChild(this.element);
    this.view.observe();
    if (!this.url) {
      this.events.onChange({ view: 'empty' });
      return;
    }
    this.start();
  }

  /** Creates (or finds) the browser, then shows it and connects the view. */
  private start(): void {
    this.events.onChange({ view: 'loading' });
    void this.browser.ensure().then((id) => {
      if (id && !this.disposed) {
        this.events.onChange({ view: 'ready' });
        if (this.visible) this.session.start();
      }
    });
  }

  /** Navigates to `url` (http/https, normalized): creates the browser on the first one. */
  navigate(url: string): void {
    if (this.disposed || !isHttpUrl(url)) return;
    const before = this.url;
    this.url = url;
    // Like Chrome: the address asked for shows at once, marked as loading, over the old page.
    this.events.onChange({ url, loading: true });
    if (!this.browser.id && !this.browser.busy) {
      this.start();
      return;
    }
    void this.browser.run(async (id) => {
      try {
        await api.browserNavigate(id, url);
      } catch (e) {
        // Refused (a blocked address, a bad URL): the page stays where it was, and so does the header.
        if (e instanceof ApiError && e.status >= 400 && e.status < 500 && e.code !== 'disconnected' && this.url === url) {
          this.url = before;
          this.events.onChange({ url: before, loading: false });
        }
        throw e;
      }
      // A navigation that went through ends the last failure's banner.
      if (!this.disposed) this.events.onScreencast({ error: null });
    });
  }

  go(delta: -1 | 1): void {
    void this.browser.run((id) => api.browserHistory(id, delta));
  }

  reload(): void {
    void this.browser.run((id) => api.browserReload(id));
  }

  /** Reloads the page; with no browser (its creation failed: "Try again") creates it again. */
  hardReload(): void {
    if (this.disposed) return;
    if (!this.browser.id && !this.browser.busy && this.url) this.start();
    else this.reload();
  }

  /**
   * Applies a viewport choice (Resize with pane: the pane's size follows at once). The choice
   * is reported through `onViewport` (and so recorded) only once the sidecar took it; one it
   * refused (popped out: `409 popped_out`) is dropped and the previous one stays.
   */
  setViewport(choice: ViewportChoice): void {
    if (this.poppedOut || this.popping) return;
    const prev = this.viewport;
    this.viewport = choice;
    this.syncTimer.clear();
    void this.browser.run(async (id) => {
      try {
        await api.browserViewport(id, viewportBody(choice));
      } catch (e) {
        if (this.viewport === choice) this.viewport = prev;
        if (e instanceof ApiError && e.code === 'popped_out') return this.setPoppedOut(true);
        throw e;
      }
      this.events.onViewport(choice);
      this.sendSync(true);
      // The host sends a capture after a viewport write; ask again in case it raced a frame.
      this.session.send({ type: 'repaint' });
    });
  }

  selectTab(tab: string): void {
    void this.browser.run((id) => api.browserSelectTab(id, tab));
  }

  closeTab(tab: string): void {
    void this.browser.run((id) => api.browserCloseTab(id, tab));
  }

  /**
   * Starts a new Chromium on the same profile (after it stopped); the session reconnects.
   * One at a time: a second call while one runs does nothing. A browser the sidecar no
   * longer knows (deleted elsewhere) is created again at the pane's URL. A failure is
   * reported as `relaunchError`. With `url` (the user navigated while it was stopped), the
   * new Chromium goes there once it is up.
   */
  relaunch(url?: string): void {
    if (this.relaunching || this.disposed) return;
    const to = url !== undefined && isHttpUrl(url) ? url : undefined;
    if (to !== undefined) {
      this.url = to;
      this.events.onChange({ url: to });
    }
    this.relaunching = true;
    this.events.onScreencast({ relaunching: true, relaunchError: null });
    void (async () => {
      try {
        const id = await this.browser.current();
        if (!id) throw new Error('no browser');
        await api.browserRelaunch(id, to);
        if (this.disposed) return;
        this.events.onScreencast({ connected: true, popError: null });
        this.session.stop();
        if (this.visible) this.session.start();
      } catch (e) {
        if (this.disposed) return;
        if (e instanceof ApiError && e.status === 404) {
          this.session.stop();
          this.browser.forget();
          this.events.onScreencast({ connected: true, error: null });
          this.start();
        } else this.events.onScreencast({ relaunchError: errorText(e) });
      } finally {
        this.relaunching = false;
        if (!this.disposed) this.events.onScreencast({ relaunching: false });
      }
    })();
  }

  /** Hides the last failure's banner. */
  dismissError(): void {
    if (!this.disposed) this.events.onScreencast({ error: null });
  }

  /**
   * Pops the browser out to a headed window (creating it first if it does not exist yet).
   * Repeats while one is pending are ignored, and so is a pop-out of a browser already out;
   * a failure shows as the pane's error.
   */
  popOut(): void {
    this.pop('out');
  }

  /** Pops the browser back into the pane; frames resume once its headless Chromium is up. */
  popIn(): void {
    this.pop('in');
  }

  private pop(dir: 'out' | 'in'): void {
    if (this.disposed || !shouldRequestPop({ poppedOut: this.poppedOut, popping: this.popping }, dir)) return;
    this.popping = dir;
    this.events.onScreencast({ popping: dir, popError: null });
    void this.browser.run(async (id) => {
      try {
        await (dir === 'out' ? api.browserPopout(id, appWindowRect(window)) : api.browserPopin(id));
      } catch (e) {
        // The sidecar's state decides (a failed pop-out falls back to the pane; if even that
        // launch failed, its status says disconnected and the Relaunch panel shows).
        if (e instanceof ApiError && (e.code === 'popped_out' || e.code === 'not_popped_out')) this.setPoppedOut(e.code === 'popped_out');
        if (!this.disposed) this.events.onScreencast({ popError: popErrorText(dir, errorText(e)) });
        return;
      }
      // The socket says so too; set it now so the stub does not wait for the status.
      this.setPoppedOut(dir === 'out');
      this.events.onScreencast({ connected: true });
      if (dir === 'in' && this.visible) this.session.send({ type: 'repaint' });
    }).finally(() => {
      this.popping = null;
      if (!this.disposed) this.events.onScreencast({ popping: null });
    });
  }

  private setPoppedOut(out: boolean): void {
    if (out === this.poppedOut) return;
    this.poppedOut = out;
    this.events.onScreencast({ poppedOut: out });
    if (!out) {
      this.sendSync(true);
      if (this.viewport.mode === 'fixed') this.adoptFixedViewport(this.viewport.dpr);
      // Hidden meanwhile: park now that nothing else needs the socket.
      if (!this.visible && !this.parkTimer.pending) this.schedulePark();
    }
  }

  /** After a pop-in in fixed mode: the sidecar fixed the window's last size (same DPR); show and keep it. */
  private adoptFixedViewport(dpr: number): void {
    void this.browser.run(async (id) => {
      const info = await api.getBrowser(id);
      if (info.mode !== 'fixed' || !info.viewport || this.viewport.mode !== 'fixed') return;
      const choice: ViewportChoice = { mode: 'fixed', width: info.viewport.width, height: info.viewport.height, dpr };
      this.viewport = choice;
      this.events.onViewport(choice);
    });
  }

  /**
   * Before the pane closes: runs the page's `beforeunload` as closing a window does (every
   * tab asked in turn; a dialog shows in the pane). Resolves true when the pane may close
   * (every tab left, or the browser cannot be asked), false when the human chose Stay.
   */
  async unload(): Promise<boolean> {
    const id = this.browser.id;
    if (!id || this.disposed || this.poppedOut) return true;
    // The human's last click may still be on its way (on the socket, or queued behind a
    // crisp capture): it goes first, as it was given first; it is also what lets the page's
    // beforeunload ask. The close itself goes over HTTP and could overtake it.
    await this.session.settleInput(UNLOAD_SETTLE_MS);
    for (;;) {
      let r: { closed: boolean };
      const answered = this.dialogs.answers;
      try {
        r = await api.browserUnload(id);
      } catch {
        return true; // stopped, gone, busy: nothing can ask
      }
      if (r.closed || this.disposed) return true;
      // The dialog's message may come (and be answered) before this answer does.
      if (!(await this.dialogs.leaveAnswer(answered))) return false;
      // The answer went over the viewer socket, the next ask goes over HTTP: it waits for the
      // dialog to be gone, or the sidecar could still find it pending and say so again.
      await this.dialogs.gone(UNLOAD_SETTLE_MS);
    }
  }

  /** Answers the pending JavaScript dialog (only ever on the user's word). */
  answerDialog(accept: boolean, text?: string): void {
    this.dialogs.answer(accept);
    this.session.send(text === undefined ? { type: 'dialog', accept } : { type: 'dialog', accept, text });
  }

  /** Picks option `index` of the `<select>` popup shown, or dismisses it (null). */
  choosePopup(index: number | null): void {
    this.popup.choose(index);
  }

  /**
   * Answers the page's file chooser `chooser` with `files` (web mode: their bytes go to the
   * sidecar first) or `paths` (the desktop app's dialog), or cancels it (`[]`). A failure
   * shows in the chooser's panel.
   */
  answerFileChooser(chooser: number, pick: { files: File[] } | { paths: string[] }): void {
    void this.browser.run(async (id) => {
      try {
        const paths = 'paths' in pick ? pick.paths : await Promise.all(pick.files.map((f) => api.browserUploadFile(id, chooser, f)));
        await api.browserAnswerChooser(id, chooser, paths);
      } catch (e) {
        if (!this.disposed) this.events.onScreencast({ fileChooserError: errorText(e) });
      }
    });
  }

  /** Closes the popup shown without answering and without taking the keyboard (the pane lost focus). */
  dismissPopup(): void {
    this.popup.dismiss();
  }

  /** Sets the picker input shown to `value` (as HTML spells its type's values), or dismisses it (null). */
  setPopupValue(value: string | null): void {
    this.popup.setValue(value);
  }

  /**
   * The pane is shown (true) or hidden/minimized/off-screen (false). Hidden for
   * `PARK_AFTER_MS` parks: the socket closes, the browser lives, the last frame stays
   * painted. Shown again: a fresh grant and socket (the host sends a crisp frame).
   */
  setVisible(paneVisible: boolean): void {
    this.paneVisible = paneVisible;
    this.applyVisible();
  }

  private applyVisible(): void {
    const visible = this.paneVisible && document.visibilityState !== 'hidden';
    if (this.disposed || visible === this.visible) return;
    this.visible = visible;
    this.parkTimer.clear();
    if (!visible) {
      this.schedulePark();
    } else if (this.browser.id) {
      // The canvas kept its picture while hidden; a fresh socket brings a crisp one.
      this.session.start();
    }
  }

  private schedulePark(): void {
    this.parkTimer.set(() => {
      if (this.poppedOut) return; // never parked while popped out; a pop-in parks it then
      this.session.stop();
      this.element.dataset.socket = 'parked';
      this.events.onScreencast({ parked: true });
    }, PARK_AFTER_MS);
  }

  focus(force = false): void {
    if (this.disposed || !this.element.isConnected) return;
    // The pane's own header (its URL field) keeps the keyboard it just took.
    const pane = this.element.closest('[data-testid=pane]') ?? this.element;
    if (!force && pane.contains(document.activeElement)) return;
    this.view.catcher.focus({ preventScroll: true });
  }

  /** Stops for good: input, socket, timers, view, and the sidecar browser (DELETE). Idempotent. */
  dispose(): void {
    this.store.dispose();
  }

  private async grant(): Promise<string> {
    const id = await this.browser.current();
    if (!id) throw new Error('no browser');
    return api.browserViewer(id);
  }

  private onMessage(m: ViewerOut) {
    switch (m.type) {
      case 'status':
        this.events.onScreencast({ connected: m.connected, launching: m.launching === true, crashed: m.crashed === true, ...(statusClearsPopError(m) ? { popError: null } : {}) });
        this.setPoppedOut(m.popped_out === true);
        break;
      case 'tabs':
        this.events.onScreencast({ tabs: m.tabs, activeTab: m.active });
        break;
      case 'url':
        if (isHttpUrl(m.url)) this.url = this.committed = m.url;
        this.events.onChange({ url: this.url, title: m.title });
        break;
      case 'loading':
        // While loading, the field shows where the tab is going (marked as loading); once
        // nothing is pending (committed, stopped, or refused by "Stay") the page's own URL.
        if (m.loading && m.url && isHttpUrl(m.url)) this.url = m.url;
        else if (this.committed) this.url = this.committed;
        this.events.onChange({ url: this.url, loading: m.loading });
        break;
      case 'sync':
        this.element.dataset.sync = m.state;
        // The page has the pane's size now: ask for a capture of it (a static page sends no
        // screencast frames, and the last frame may show the size before).
        if (m.state === 'synced') this.session.send({ type: 'repaint' });
        break;
      case 'dialog':
        this.dialogs.onDialog(m.dialog?.kind ?? null);
        this.events.onScreencast({ dialog: m.dialog });
        break;
      case 'popup': {
        const { type: _t, ...p } = m;
        this.popup.opened(p);
        break;
      }
      case 'file_chooser':
        this.events.onScreencast({ fileChooser: m.chooser, fileChooserError: null });
        break;
      case 'downloads':
        this.events.onScreencast({ downloads: m.downloads });
        break;
      case 'inspect':
        if (this.menu && this.menu.pending && this.menu.page.x === m.x && this.menu.page.y === m.y) {
          this.menu = { ...this.menu, link: m.link, image: m.image, pending: false };
          this.events.onScreencast({ contextMenu: this.menu });
        }
        break;
      case 'find': {
        const { type: _t, ...f } = m;
        this.events.onScreencast({ find: f });
        break;
      }
      case 'zoom':
        // While presses of ours are on their way, an echo of an earlier one is not the truth:
        // the sidecar applies them in order and its last word is the last factor sent.
        if (this.zoom.reported(m.factor)) this.events.onScreencast({ zoom: m.factor });
        break;
      case 'scroll':
        this.view.setScroll({ y: m.y, height: m.height, view_height: m.view_height });
        break;
      case 'clipboard':
        if (m.text) void writeClipboard(m.text).catch(() => {});
        break;
      case 'agent': {
        const { type: _t, ...a } = m;
        this.agent.activity(a);
        break;
      }
      case 'error':
        console.warn(`screencast ${this.paneId}: ${m.message}`);
        break;
      default:
        break;
    }
  }

  /** Closes the canvas's context menu. */
  closeMenu(): void {
    if (!this.menu) return;
    this.menu = null;
    this.events.onScreencast({ contextMenu: null });
  }

  /** Copies the image the context menu was opened on (see `CanvasView.copyImage`). */
  copyImage(box: { x: number; y: number; width: number; height: number }): Promise<void> {
    return this.view.copyImage(box);
  }

  /**
   * Find in page: searches `text` anew, or moves to the `next` match (the previous one when
   * `backwards`); "" clears the page's highlights. The answer comes as `find` in the state.
   */
  find(text: string, backwards = false, next = false): void {
    if (!text) this.events.onScreencast({ find: null });
    this.session.send({ type: 'find', text, backwards, next });
  }

  /** Sets the page zoom of every tab (a factor in `MIN_ZOOM..=MAX_ZOOM`; 1 resets). */
  setZoom(factor: number): void {
    this.zoom.request(factor, (f) => this.session.send({ type: 'zoom', factor: f }));
  }

  /** Resize with pane: tells the host the body's size (`now`, or after the settle). */
  private sendSync(now: boolean) {
    if (this.viewport.mode !== 'pane' || this.poppedOut) return;
    this.syncTimer.clear();
    const go = () => {
      if (this.viewport.mode !== 'pane') return;
      const { width, height } = this.view.size;
      const m = syncMessage(width, height, window.devicePixelRatio || 1);
      if (m) this.session.send(m);
    };
    if (now) go();
    else this.syncTimer.set(go, VIEWPORT_SETTLE_MS);
  }
}
