// One browser pane's live parts in the screencast render mode: the sidecar browser behind
// it (created, navigated, deleted over HTTP), its viewer session, the canvas the frames are
// painted on, and the transparent input catcher over the canvas.
//
// The element is created once and mounted once into the pane's body (never re-parented).
// Panes and components never touch the socket; they call the store, which calls this.
import { ApiError, api } from '../api/client';
import type { AgentActivity, BrowserTab, Download, FileChooser, InputPopup, PageDialog, SelectPopup, ViewerOut } from '../api/protocol';
import { readClipboard, writeClipboard } from '../clipboard';
import type { BrowserEvents, RestoreTabs } from '../browser/BrowserRuntime';
import { browserErrorText } from './errors';
import { appWindowRect, popErrorText, shouldRequestPop, statusClearsPopError } from '../browser/popout';
import { isHttpUrl } from '../browser/url';
import { type Frame, LatestOnlyQueue, parseFrame } from './frame';
import {
  ClickCounter,
  type FitRect,
  buttonName,
  editChord,
  fitFrame,
  fromPage,
  heldButton,
  keyMessage,
  modifiers,
  textChunks,
  toPage,
  wheelPx,
} from './input';
import { MARK_MS, VERB_LINGER_MS, markFor, markKey } from './agent';
import { ViewerSession } from './ViewerSession';
import { zoomChord } from './zoom';
import { findChord } from './find';
import { VIEWPORT_SETTLE_MS, type ViewportChoice, syncMessage, viewportBody } from './viewport';

/** A hidden or off-screen pane closes its viewer socket after this long (DESIGN §7). */
export const PARK_AFTER_MS = 1000;
/** Frame decodes running at once (`LatestOnlyQueue` depth): two keep the decoder busy while a
 * result travels back to the page, which one at a time cannot. */
const DECODE_DEPTH = 2;
/** How long closing waits for the input already sent to reach the page, in ms. */
const UNLOAD_SETTLE_MS = 3000;

/** How often, and how many times, a create refused with `profile_in_use` is asked again (the pane's previous browser is being deleted). */
const PROFILE_RETRY_MS = 250;
const PROFILE_RETRIES = 20;

/** The screencast's state as the pane's React view reads it (high-rate facts live on DOM attributes). */
export interface ScreencastState {
  /** Chromium is up and connected (false and not `launching`: it stopped; the pane offers Relaunch) */
  connected: boolean;
  /** a launch, relaunch, pop-out or pop-in is under way on the sidecar (not a stop) */
  launching: boolean;
  tabs: BrowserTab[];
  activeTab: string | null;
  dialog: PageDialog | null;
  /** a `<select>` or picker input the page asked to open, with its box mapped to the pane body's CSS px */
  popup: ((SelectPopup | InputPopup) & { box: { x: number; y: number; width: number; height: number } }) | null;
  /** a page's file input waiting for the user's files */
  fileChooser: FileChooser | null;
  /** why answering the file chooser failed (shown in its panel) */
  fileChooserError: string | null;
  /** this browser's downloads, oldest first */
  downloads: Download[];
  /** the page zoom factor of every tab (1 = none) */
  zoom: number;
  /** the canvas's context menu: where (pane body CSS px), and the link and image under it once the sidecar said (`pending` until then) */
  contextMenu: CanvasMenuState | null;
  /** the viewer socket is closed because the pane is hidden */
  parked: boolean;
  /** a relaunch asked for by the user is under way (its button is disabled) */
  relaunching: boolean;
  /** why the last relaunch failed (shown in the "Chromium quit" panel) */
  relaunchError: string | null;
  /** the last failure on a live browser (navigate, tab, viewport, grant): a banner until dismissed or the socket reopens */
  error: string | null;
  /** the browser is popped out to a window (the sidecar's `status`); the pane shows a stub */
  poppedOut: boolean;
  /** the active tab's renderer crashed (the sidecar's `status`): the pane says so and offers Reload */
  crashed: boolean;
  /** a pop-out or pop-in this pane asked for and the sidecar has not answered yet */
  popping: 'out' | 'in' | null;
  /** why the last pop-out or pop-in failed (cleared by the next one) */
  popError: string | null;
  /** an agent's action (`ph browser`) running, or just ended (shown for a moment): the header names its verb */
  agent: { verb: string; acting: boolean } | null;
  /** the find bar's last answer from the page (null until one came, or once the bar closed) */
  find: FindAnswer | null;
  /** grows by one each time the user asks for the find bar (its field takes the caret again) */
  findFocus: number;
}

/** What find in page found (protocol §8.4 `find`). */
export interface FindAnswer {
  text: string;
  /** the active match, 1-based; 0 when nothing matched */
  index: number;
  count: number;
  /** the count stopped at its bound: there are more */
  capped: boolean;
}

/** The canvas's context menu (see `ScreencastState.contextMenu`). */
export interface CanvasMenuState {
  /** where it opened, in pane body CSS px */
  x: number;
  y: number;
  /** the page point (CSS px) it was opened on */
  page: { x: number; y: number };
  link: string | null;
  /** the image's box in page CSS px */
  image: { x: number; y: number; width: number; height: number } | null;
  /** the sidecar has not said yet what is there */
  pending: boolean;
}

/** Chromium has stopped (crashed, killed, closed) and nothing is starting it: Relaunch (or a navigation) brings it back. */
export function chromiumStopped(sc: ScreencastState): boolean {
  return !sc.connected && !sc.launching;
}

export const EMPTY_SCREENCAST: ScreencastState = {
  connected: true,
  launching: false,
  tabs: [],
  activeTab: null,
  dialog: null,
  popup: null,
  fileChooser: null,
  fileChooserError: null,
  downloads: [],
  zoom: 1,
  contextMenu: null,
  parked: false,
  relaunching: false,
  relaunchError: null,
  error: null,
  poppedOut: false,
  crashed: false,
  popping: null,
  popError: null,
  agent: null,
  find: null,
  findFocus: 0,
};

export interface ScreencastEvents extends Omit<BrowserEvents, 'onKey' | 'onOpenWindow'> {
  /** the sidecar browser this pane uses changed (persisted so a reloaded UI finds it) */
  onBrowserId: (id: string | null) => void;
  onScreencast: (patch: Partial<ScreencastState>) => void;
  /** the sidecar changed the viewport itself (a pop-in fixes it at the window's last size) */
  onViewport: (choice: ViewportChoice) => void;
  /** the user asked for the find bar (Ctrl+F, Cmd+F on a Mac) */
  onFind: () => void;
}

const MAC = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform);

function errorText(e: unknown): string {
  return e instanceof ApiError ? e.message : String(e);
}

export class ScreencastRuntime {
  readonly element: HTMLDivElement;
  readonly canvas: HTMLCanvasElement;
  /** takes keyboard focus (and IME composition) for the page; pointer events land here too */
  readonly catcher: HTMLTextAreaElement;
  private readonly session: ViewerSession;
  private readonly queue: LatestOnlyQueue<Frame, ImageBitmap>;
  private readonly disposers: (() => void)[] = [];
  private mounted = false;
  private disposed = false;
  private url: string;
  /** the active tab's committed URL (the page shown); `url` may be a pending one while it loads */
  private committed = '';
  private browserId: string | null;
  /** a restored pane's tabs, opened with its browser's creation; null once created */
  private restoreTabs: RestoreTabs | null;
  private creating: Promise<string | null> | null = null;
  private viewport: ViewportChoice;
  /** the last painted bitmap and its frame (redrawn on resize; kept while parked) */
  private last: { bmp: ImageBitmap; frame: Frame } | null = null;
  /** pane body size in CSS px */
  private cssW = 0;
  private cssH = 0;
  private fit: FitRect | undefined;
  /** the pane's background (the letterbox colour), read once per size or scheme: reading it
   * per frame would force a style recalculation on every paint */
  private background: string | null = null;
  /** the pane is on the wall (not minimized or zoomed away) */
  private paneVisible = true;
  /** pane visible and the document shown: the session runs */
  private visible = true;
  private parkTimer: ReturnType<typeof setTimeout> | null = null;
  private syncTimer: ReturnType<typeof setTimeout> | null = null;
  /** key codes sent down and not yet up (an up is sent only for these) */
  private readonly down = new Set<string>();
  private readonly clicks = new ClickCounter();
  /** an IME composition is in progress in the catcher (its text goes on compositionend) */
  private composing = false;
  private pendingMove: PointerEvent | null = null;
  private moveFrame = 0;
  private popup: SelectPopup | InputPopup | null = null;
  private menu: CanvasMenuState | null = null;
  /** the page zoom: the last factor sent, else the one the sidecar last reported */
  private zoom = 1;
  /** Ctrl+F presses so far (ScreencastState.findFocus). */
  private findPresses = 0;
  /** the last factor sent that the sidecar has not reported back yet */
  private zoomSent: number | null = null;
  /** the scroll indicator (a thumb on the right edge; headless Chromium draws no scrollbars) */
  private readonly scrollBar: HTMLDivElement;
  private readonly scrollThumb: HTMLDivElement;
  /** the page's last scroll position (CSS px), from the sidecar's `scroll` */
  private scroll: { y: number; height: number; view_height: number } | null = null;
  private relaunching = false;
  /** popped out to a window: no sizes sent, never parked (the socket brings the window's URL and its close) */
  private poppedOut = false;
  private popping: 'out' | 'in' | null = null;
  /** the pending dialog's kind (from the socket) */
  private dialogKind: string | null = null;
  /** waiting for the pending dialog to be gone (`waitDialogGone`): each called once */
  private dialogGoneWaiters: (() => void)[] = [];
  /** a close waiting for the user's answer to the page's beforeunload: resolves with it */
  private unloadAnswer: ((leave: boolean) => void) | null = null;
  /** answers given to beforeunload dialogs so far, and the last one (the dialog can be answered before the unload call returns) */
  private unloadAnswers = 0;
  private lastUnloadAnswer = false;
  /** the last agent mark drawn (`markKey`): each is drawn once */
  private lastMark: string | null = null;
  /** clears the header's verb a moment after the action ended */
  private verbTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly markTimers = new Set<ReturnType<typeof setTimeout>>();

  constructor(
    readonly paneId: string,
    url: string,
    opts: { browserId: string | null; viewport: ViewportChoice; restoreTabs?: RestoreTabs | null },
    private readonly events: ScreencastEvents,
  ) {
    this.url = url;
    this.browserId = opts.browserId;
    this.restoreTabs = opts.restoreTabs ?? null;
    this.viewport = opts.viewport;
    this.element = document.createElement('div');
    this.element.className = 'screencast-host';
    this.element.dataset.socket = 'closed';
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'screencast-canvas';
    this.canvas.dataset.testid = 'screencast-canvas';
    this.canvas.setAttribute('data-testid', 'screencast-canvas');
    this.canvas.dataset.frame = '0';
    this.catcher = document.createElement('textarea');
    this.catcher.className = 'screencast-input';
    this.catcher.setAttribute('data-testid', 'screencast-input');
    this.catcher.setAttribute('aria-label', 'page (screencast)');
    this.catcher.autocapitalize = 'off';
    this.catcher.spellcheck = false;
    this.catcher.tabIndex = -1;
    this.scrollBar = document.createElement('div');
    this.scrollBar.className = 'screencast-scroll';
    this.scrollBar.setAttribute('data-testid', 'scroll-indicator');
    this.scrollBar.hidden = true;
    this.scrollThumb = document.createElement('div');
    this.scrollThumb.className = 'screencast-scroll-thumb';
    this.scrollBar.append(this.scrollThumb);
    this.element.append(this.canvas, this.scrollBar, this.catcher);

    this.queue = new LatestOnlyQueue<Frame, ImageBitmap>(
      (f) => createImageBitmap(new Blob([f.jpeg as BlobPart], { type: 'image/jpeg' })),
      (bmp, f) => this.paint(bmp, f),
      (bmp) => bmp.close(),
      DECODE_DEPTH,
    );
    this.session = new ViewerSession(() => this.grant(), {
      onOpen: () => {
        this.queue.reset();
        this.zoomSent = null;
        this.element.dataset.socket = 'open';
        this.events.onScreencast({ parked: false, error: null });
        this.sendSync(true);
      },
      onFrame: (buf) => {
        const f = parseFrame(buf);
        if (f) this.queue.push(f);
      },
      onMessage: (m) => this.onMessage(m),
      onClose: () => {
        this.element.dataset.socket = 'closed';
      },
      onGrantError: (e) => this.events.onScreencast({ error: errorText(e) }),
    });
    this.listen();
    const vis = () => this.applyVisible();
    document.addEventListener('visibilitychange', vis);
    this.disposers.push(() => document.removeEventListener('visibilitychange', vis));
    // The letterbox colour follows the theme: read again when the scheme changes.
    const scheme = window.matchMedia('(prefers-color-scheme: dark)');
    const rescheme = () => {
      this.background = null;
      this.redraw();
    };
    scheme.addEventListener('change', rescheme);
    this.disposers.push(() => scheme.removeEventListener('change', rescheme));
  }

  get currentUrl(): string {
    return this.url;
  }

  /** Screencast panes have no frame window: shim messages never route here. */
  get frameWindow(): Window | null {
    return null;
  }

  handleShim(_origin: string, _msg: unknown): void {}

  /** Puts the element into `container` (once) and starts the browser for the URL it has. */
  mount(container: HTMLElement): void {
    if (this.mounted || this.disposed) return;
    this.mounted = true;
    container.appendChild(this.element);
    const ro = new ResizeObserver(() => this.measure());
    ro.observe(this.element);
    this.disposers.push(() => ro.disconnect());
    this.measure();
    if (!this.url) {
      this.events.onChange({ view: 'empty' });
      return;
    }
    this.start();
  }

  /** Creates (or finds) the browser, then shows it and connects the view. */
  private start(): void {
    this.events.onChange({ view: 'loading' });
    void this.ensureBrowser().then((id) => {
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
    if (!this.browserId && !this.creating) {
      this.start();
      return;
    }
    void this.withBrowser(async (id) => {
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
    void this.withBrowser((id) => api.browserHistory(id, delta));
  }

  reload(): void {
    void this.withBrowser((id) => api.browserReload(id));
  }

  /** Reloads the page; with no browser (its creation failed: "Try again") creates it again. */
  hardReload(): void {
    if (this.disposed) return;
    if (!this.browserId && !this.creating && this.url) this.start();
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
    if (this.syncTimer) clearTimeout(this.syncTimer);
    this.syncTimer = null;
    void this.withBrowser(async (id) => {
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
    void this.withBrowser((id) => api.browserSelectTab(id, tab));
  }

  closeTab(tab: string): void {
    void this.withBrowser((id) => api.browserCloseTab(id, tab));
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
        const id = this.browserId ?? (await this.ensureBrowser());
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
          this.browserId = null;
          this.events.onBrowserId(null);
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
    void this.withBrowser(async (id) => {
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
      if (!this.visible && !this.parkTimer) this.schedulePark();
    }
  }

  /** After a pop-in in fixed mode: the sidecar fixed the window's last size (same DPR); show and keep it. */
  private adoptFixedViewport(dpr: number): void {
    void this.withBrowser(async (id) => {
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
    const id = this.browserId;
    if (!id || this.disposed || this.poppedOut) return true;
    // The human's last click may still be on its way (on the socket, or queued behind a
    // crisp capture): it goes first, as it was given first; it is also what lets the page's
    // beforeunload ask. The close itself goes over HTTP and could overtake it.
    await this.session.settleInput(UNLOAD_SETTLE_MS);
    for (;;) {
      let r: { closed: boolean };
      const answered = this.unloadAnswers;
      try {
        r = await api.browserUnload(id);
      } catch {
        return true; // stopped, gone, busy: nothing can ask
      }
      if (r.closed || this.disposed) return true;
      // The dialog's message may come (and be answered) before this answer does.
      const leave =
        this.unloadAnswers !== answered
          ? this.lastUnloadAnswer
          : await new Promise<boolean>((res) => {
              this.unloadAnswer = res;
            });
      if (!leave) return false;
      // The answer went over the viewer socket, the next ask goes over HTTP: it waits for the
      // dialog to be gone, or the sidecar could still find it pending and say so again.
      await this.waitDialogGone(UNLOAD_SETTLE_MS);
    }
  }

  /** Resolves once no dialog is pending (at once when none is), or after `timeoutMs`. */
  private waitDialogGone(timeoutMs: number): Promise<void> {
    if (this.dialogKind === null) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.dialogGoneWaiters = this.dialogGoneWaiters.filter((w) => w !== done);
        resolve();
      }, timeoutMs);
      this.dialogGoneWaiters.push(done);
    });
  }

  /** Answers the pending JavaScript dialog (only ever on the user's word). */
  answerDialog(accept: boolean, text?: string): void {
    if (this.dialogKind === 'beforeunload') {
      this.unloadAnswers++;
      this.lastUnloadAnswer = accept;
    }
    if (this.unloadAnswer && this.dialogKind === 'beforeunload') {
      const answer = this.unloadAnswer;
      this.unloadAnswer = null;
      queueMicrotask(() => answer(accept));
    }
    this.session.send(text === undefined ? { type: 'dialog', accept } : { type: 'dialog', accept, text });
  }

  /** Picks option `index` of the `<select>` popup shown, or dismisses it (null). */
  choosePopup(index: number | null): void {
    if (index !== null && this.popup?.kind === 'select') this.session.sendInput({ type: 'popup_choice', index });
    this.popup = null;
    this.events.onScreencast({ popup: null });
    this.focus(true);
  }

  /**
   * Answers the page's file chooser `chooser` with `files` (web mode: their bytes go to the
   * sidecar first) or `paths` (the desktop app's dialog), or cancels it (`[]`). A failure
   * shows in the chooser's panel.
   */
  answerFileChooser(chooser: number, pick: { files: File[] } | { paths: string[] }): void {
    void this.withBrowser(async (id) => {
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
    if (!this.popup) return;
    this.popup = null;
    this.events.onScreencast({ popup: null });
  }

  /** Sets the picker input shown to `value` (as HTML spells its type's values), or dismisses it (null). */
  setPopupValue(value: string | null): void {
    if (value !== null && this.popup?.kind === 'input') this.session.sendInput({ type: 'popup_value', value });
    this.popup = null;
    this.events.onScreencast({ popup: null });
    this.focus(true);
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
    if (this.parkTimer) clearTimeout(this.parkTimer);
    this.parkTimer = null;
    if (!visible) {
      this.schedulePark();
    } else if (this.browserId) {
      this.redraw();
      this.session.start();
    }
  }

  private schedulePark(): void {
    this.parkTimer = setTimeout(() => {
      this.parkTimer = null;
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
    this.catcher.focus({ preventScroll: true });
  }

  /** Stops for good: socket, observers, timers, bitmap, and the sidecar browser (DELETE). Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    if (this.parkTimer) clearTimeout(this.parkTimer);
    if (this.syncTimer) clearTimeout(this.syncTimer);
    if (this.verbTimer) clearTimeout(this.verbTimer);
    for (const t of this.markTimers) clearTimeout(t);
    cancelAnimationFrame(this.moveFrame);
    this.session.dispose();
    this.queue.close();
    for (const d of this.disposers.splice(0).reverse()) d();
    this.last?.bmp.close();
    this.last = null;
    this.element.remove();
    const id = this.browserId;
    this.browserId = null;
    // A create still in flight deletes its browser itself when it sees `disposed`.
    if (id) void api.deleteBrowser(id).catch(() => {});
  }

  // --- internals

  private async grant(): Promise<string> {
    const id = this.browserId ?? (await this.ensureBrowser());
    if (!id) throw new Error('no browser');
    return api.browserViewer(id);
  }

  /** The browser id, creating the browser (or checking the persisted one) first. Null on failure (reported). */
  private ensureBrowser(): Promise<string | null> {
    if (this.creating) return this.creating;
    this.creating = (async () => {
      try {
        if (this.browserId) {
          try {
            await api.getBrowser(this.browserId);
            return this.browserId;
          } catch (e) {
            if (!(e instanceof ApiError) || e.status !== 404) throw e;
            this.browserId = null;
          }
        }
        const id = await this.createBrowser();
        if (this.disposed) {
          void api.deleteBrowser(id).catch(() => {});
          return null;
        }
        this.browserId = id;
        this.events.onBrowserId(id);
        return id;
      } catch (e) {
        if (!this.disposed) {
          this.events.onChange({ view: 'error', message: browserErrorText(e, true) });
        }
        return null;
      } finally {
        this.creating = null;
      }
    })();
    return this.creating;
  }

  /**
   * Creates the pane's browser on its kept profile (keyed by the pane id, protocol §8), with
   * the restored tabs when there are any (then at the active one's URL). A `409
   * profile_in_use` means this pane's previous browser is still being deleted (a mode switch
   * back and forth): asked again every PROFILE_RETRY_MS, at most PROFILE_RETRIES times.
   */
  private async createBrowser(): Promise<string> {
    const r = this.restoreTabs;
    const first = r ? (r.tabs[0] ?? this.url) : this.url;
    const more = r ? { profile: this.paneId, tabs: r.tabs.slice(1), active: r.active } : { profile: this.paneId };
    for (let attempt = 0; ; attempt++) {
      try {
        const id = await api.createBrowser(first, viewportBody(this.viewport), more);
        this.restoreTabs = null;
        return id;
      } catch (e) {
        if (!(e instanceof ApiError && e.code === 'profile_in_use') || attempt >= PROFILE_RETRIES || this.disposed) throw e;
        await new Promise((done) => setTimeout(done, PROFILE_RETRY_MS));
      }
    }
  }

  private async withBrowser(f: (id: string) => Promise<unknown>) {
    if (this.disposed) return;
    const id = this.browserId ?? (await this.ensureBrowser());
    if (!id || this.disposed) return;
    try {
      await f(id);
    } catch (e) {
      if (e instanceof ApiError && e.code === 'disconnected') this.events.onScreencast({ connected: false });
      else if (!(e instanceof ApiError && e.status === 400)) this.events.onScreencast({ error: browserErrorText(e, false) });
    }
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
        this.dialogKind = m.dialog?.kind ?? null;
        if (!m.dialog) for (const w of this.dialogGoneWaiters.splice(0)) w();
        this.events.onScreencast({ dialog: m.dialog });
        break;
      case 'popup': {
        const { type: _t, ...p } = m;
        this.popup = p;
        const box = this.fit ? fromPage(this.fit, p) : { x: p.x, y: p.y, width: p.width, height: p.height };
        this.events.onScreencast({ popup: { ...p, box } });
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
        if (this.zoomSent !== null && m.factor !== this.zoomSent) break;
        this.zoomSent = null;
        this.zoom = m.factor;
        this.events.onScreencast({ zoom: m.factor });
        break;
      case 'scroll':
        this.scroll = { y: m.y, height: m.height, view_height: m.view_height };
        this.placeScroll();
        break;
      case 'clipboard':
        if (m.text) void writeClipboard(m.text).catch(() => {});
        break;
      case 'agent': {
        const { type: _t, ...a } = m;
        this.onAgent(a);
        break;
      }
      case 'error':
        console.warn(`screencast ${this.paneId}: ${m.message}`);
        break;
      default:
        break;
    }
  }

  /**
   * An agent acts (or acted) in this browser: its verb goes to the header (kept for
   * `VERB_LINGER_MS` after it ends, so a quick click is seen), and each point or box it
   * acts on gets a mark over the canvas that fades in `MARK_MS`. Nothing is drawn into the
   * page: the mark is an element over the canvas, placed through the frame's fit.
   */
  private onAgent(a: AgentActivity) {
    if (this.verbTimer) clearTimeout(this.verbTimer);
    this.verbTimer = null;
    this.events.onScreencast({ agent: { verb: a.verb, acting: a.acting } });
    this.element.dataset.agentVerb = a.verb;
    this.element.dataset.agentActing = String(a.acting);
    if (!a.acting)
      this.verbTimer = setTimeout(() => {
        this.verbTimer = null;
        if (this.disposed) return;
        this.events.onScreencast({ agent: null });
        delete this.element.dataset.agentVerb;
        delete this.element.dataset.agentActing;
      }, VERB_LINGER_MS);
    const key = markKey(a);
    if (!key || key === this.lastMark || !this.fit) return;
    const mark = markFor(this.fit, a);
    if (!mark) return;
    this.lastMark = key;
    const el = document.createElement('div');
    el.className = `agent-mark agent-mark-${mark.kind}`;
    el.setAttribute('data-testid', 'agent-mark');
    el.dataset.kind = mark.kind;
    el.dataset.verb = a.verb;
    el.style.left = `${mark.x}px`;
    el.style.top = `${mark.y}px`;
    el.style.width = `${mark.width}px`;
    el.style.height = `${mark.height}px`;
    el.style.animationDuration = `${MARK_MS}ms`;
    this.element.append(el);
    // For tests and debugging: how many marks were drawn, and the last one's box (host CSS px).
    this.element.dataset.agentMarks = String(Number(this.element.dataset.agentMarks ?? '0') + 1);
    this.element.dataset.agentMark = [mark.x, mark.y, mark.width, mark.height].map((n) => Math.round(n * 100) / 100).join(',');
    const t = setTimeout(() => {
      this.markTimers.delete(t);
      el.remove();
    }, MARK_MS);
    this.markTimers.add(t);
  }

  private paint(bmp: ImageBitmap, f: Frame) {
    const old = this.last;
    this.last = { bmp, frame: f };
    if (old && old.bmp !== bmp) old.bmp.close();
    this.redraw();
    this.canvas.dataset.frame = String(f.id);
    this.canvas.dataset.crisp = f.crisp ? 'true' : 'false';
    this.canvas.dataset.painted = String(Number(this.canvas.dataset.painted ?? '0') + 1);
  }

  /** Closes the canvas's context menu. */
  closeMenu(): void {
    if (!this.menu) return;
    this.menu = null;
    this.events.onScreencast({ contextMenu: null });
  }

  /**
   * Copies the image the context menu was opened on, as PNG, from the frame on screen (the
   * pixels the user sees; no refetch that could differ or be refused). Throws when there is
   * none or the clipboard refuses it.
   */
  async copyImage(box: { x: number; y: number; width: number; height: number }): Promise<void> {
    const last = this.last;
    if (!last) throw new Error('nothing painted yet');
    const s = last.bmp.width / last.frame.width;
    const c = document.createElement('canvas');
    c.width = Math.max(1, Math.round(box.width * s));
    c.height = Math.max(1, Math.round(box.height * s));
    c.getContext('2d')!.drawImage(last.bmp, box.x * s, box.y * s, box.width * s, box.height * s, 0, 0, c.width, c.height);
    const blob = await new Promise<Blob | null>((res) => c.toBlob(res, 'image/png'));
    if (!blob) throw new Error('could not encode the image');
    await navigator.clipboard.write([new ClipboardItem({ 'image/png': blob })]);
  }

  /**
   * Find in page: searches `text` anew, or moves to the `next` match (the previous one when
   * `backwards`); "" clears the page's highlights. The answer comes as `find` in the state.
   */
  find(text: string, backwards = false, next = false) {
    if (!text) this.events.onScreencast({ find: null });
    this.session.send({ type: 'find', text, backwards, next });
  }

  /** Sets the page zoom of every tab (a factor in 0.25..=5; 1 resets). */
  setZoom(factor: number): void {
    if (factor === this.zoom) return;
    // Taken at once, so presses faster than the sidecar's answer step from each other.
    if (this.session.send({ type: 'zoom', factor })) {
      this.zoom = factor;
      this.zoomSent = factor;
    }
  }

  /**
   * Places the scroll indicator's thumb over the painted frame's right edge: its top and
   * height are the viewport's share of the page's height. Hidden when nothing scrolls.
   */
  private placeScroll() {
    const s = this.scroll;
    const fit = this.fit;
    const scrollable = !!s && !!fit && s.height > s.view_height + 1;
    // Called at every paint: an unchanged attribute is not written again (no style work).
    if (this.scrollBar.hidden === scrollable) this.scrollBar.hidden = !scrollable;
    if (!scrollable || !s || !fit) return;
    const h = Math.max(16, (s.view_height / s.height) * fit.h);
    const top = (s.y / Math.max(1, s.height - s.view_height)) * (fit.h - h);
    this.scrollBar.style.left = `${fit.x + fit.w - 6}px`;
    this.scrollBar.style.top = `${fit.y}px`;
    this.scrollBar.style.height = `${fit.h}px`;
    this.scrollThumb.style.top = `${Math.max(0, Math.min(fit.h - h, top))}px`;
    this.scrollThumb.style.height = `${h}px`;
    this.scrollBar.dataset.y = String(Math.round(s.y));
  }

  /** Sizes the canvas to the body's CSS size × devicePixelRatio. */
  private measure() {
    const r = this.element.getBoundingClientRect();
    if (!(r.width > 0 && r.height > 0)) return; // hidden or unmeasurable: keep what we have
    const dpr = window.devicePixelRatio || 1;
    const changed = r.width !== this.cssW || r.height !== this.cssH;
    this.background = null;
    this.cssW = r.width;
    this.cssH = r.height;
    const w = Math.round(r.width * dpr);
    const h = Math.round(r.height * dpr);
    if (this.canvas.width !== w || this.canvas.height !== h) {
      this.canvas.width = w;
      this.canvas.height = h;
    }
    this.redraw();
    if (changed) this.sendSync(false);
  }

  private redraw() {
    const ctx = this.canvas.getContext('2d', { alpha: false });
    if (!ctx) return;
    const dpr = this.canvas.width / (this.cssW || 1);
    this.background ??= getComputedStyle(this.element).backgroundColor || '#000';
    ctx.fillStyle = this.background;
    ctx.fillRect(0, 0, this.canvas.width, this.canvas.height);
    if (!this.last) return;
    const f = this.last.frame;
    this.fit = fitFrame(f.width, f.height, this.cssW, this.cssH);
    if (!this.fit) return;
    // Where page CSS px land in the body (for tests and debugging): x, y, scale.
    const fit = `${this.fit.x},${this.fit.y},${this.fit.scale}`;
    if (this.canvas.dataset.fit !== fit) this.canvas.dataset.fit = fit;
    // A provisional frame is replaced within a frame interval (or by the crisp capture once
    // the page rests): bilinear scaling is enough for it; the crisp one gets the best.
    ctx.imageSmoothingQuality = f.crisp ? 'high' : 'low';
    ctx.drawImage(this.last.bmp, this.fit.x * dpr, this.fit.y * dpr, this.fit.w * dpr, this.fit.h * dpr);
    this.placeScroll();
  }

  /** Resize with pane: tells the host the body's size (`now`, or after the settle). */
  private sendSync(now: boolean) {
    if (this.viewport.mode !== 'pane' || this.poppedOut) return;
    if (this.syncTimer) clearTimeout(this.syncTimer);
    this.syncTimer = null;
    const go = () => {
      if (this.viewport.mode !== 'pane') return;
      const m = syncMessage(this.cssW, this.cssH, window.devicePixelRatio || 1);
      if (m) this.session.send(m);
    };
    if (now) go();
    else
      this.syncTimer = setTimeout(() => {
        this.syncTimer = null;
        go();
      }, VIEWPORT_SETTLE_MS);
  }

  /** Page CSS px for a pointer event, or undefined before the first frame. */
  private pagePoint(e: MouseEvent) {
    if (!this.fit) return undefined;
    const r = this.element.getBoundingClientRect();
    return toPage(this.fit, e.clientX - r.left, e.clientY - r.top);
  }

  private on<K extends keyof HTMLElementEventMap>(el: HTMLElement, type: K, f: (e: HTMLElementEventMap[K]) => void, opts?: AddEventListenerOptions) {
    el.addEventListener(type, f as EventListener, opts);
    this.disposers.push(() => el.removeEventListener(type, f as EventListener, opts));
  }

  private listen() {
    const c = this.catcher;
    this.on(c, 'pointerdown', (e) => {
      e.preventDefault();
      this.events.onFocus();
      this.focus(true);
      // A move still waiting for its animation frame happened before this press: send it first.
      this.flushMove();
      const p = this.pagePoint(e);
      if (!p) return;
      try {
        c.setPointerCapture(e.pointerId);
      } catch {
        /* not capturable: moves outside are lost */
      }
      const clicks = this.clicks.down(e.timeStamp, e.clientX, e.clientY, e.button);
      this.session.sendInput({ type: 'input_mouse', event: 'down', ...p, button: buttonName(e.button), clicks, modifiers: modifiers(e) });
    });
    this.on(c, 'pointerup', (e) => {
      const p = this.pagePoint(e);
      this.flushMove();
      if (!p) return;
      this.session.sendInput({ type: 'input_mouse', event: 'up', ...p, button: buttonName(e.button), clicks: this.clicks.current, modifiers: modifiers(e) });
    });
    this.on(c, 'pointermove', (e) => {
      // Latest-only: one move per animation frame.
      this.pendingMove = e;
      if (!this.moveFrame) this.moveFrame = requestAnimationFrame(() => this.flushMove());
    });
    this.on(
      c,
      'wheel',
      (e) => {
        e.preventDefault();
        this.flushMove();
        const p = this.pagePoint(e);
        if (!p) return;
        const h = this.fit ? this.fit.h / this.fit.scale : 800;
        this.session.sendInput({ type: 'input_mouse', event: 'wheel', ...p, modifiers: modifiers(e), deltaX: wheelPx(e.deltaX, e.deltaMode, h), deltaY: wheelPx(e.deltaY, e.deltaMode, h) });
      },
      { passive: false },
    );
    this.on(c, 'contextmenu', (e) => {
      e.preventDefault();
      const p = this.pagePoint(e);
      if (!p) return;
      const r = this.element.getBoundingClientRect();
      this.menu = { x: e.clientX - r.left, y: e.clientY - r.top, page: p, link: null, image: null, pending: true };
      this.events.onScreencast({ contextMenu: this.menu });
      this.session.send({ type: 'inspect', ...p });
    });
    this.on(c, 'keydown', (e) => {
      if (e.isComposing || this.composing || e.keyCode === 229) return; // the IME owns it: the text comes on compositionend
      if (findChord(e, MAC)) {
        e.preventDefault();
        this.events.onScreencast({ findFocus: ++this.findPresses });
        this.events.onFind();
        return;
      }
      const zoom = zoomChord(e, MAC, this.zoom);
      if (zoom !== null) {
        e.preventDefault();
        this.setZoom(zoom);
        return;
      }
      const chord = editChord(e, MAC);
      if (chord) {
        e.preventDefault();
        if (chord === 'paste')
          void readClipboard().then((text) => {
            if (text) this.sendText(text);
          });
        else this.session.sendInput({ type: 'edit', op: chord });
        return;
      }
      const m = keyMessage('down', e);
      if (!m) return;
      e.preventDefault();
      this.down.add(e.code || e.key);
      this.session.sendInput(m);
    });
    this.on(c, 'keyup', (e) => {
      const k = e.code || e.key;
      if (!this.down.delete(k)) return; // never an up for a down the page did not get
      const m = keyMessage('up', e);
      if (m) this.session.sendInput(m);
    });
    // IME: the catcher holds the composition while it lasts (touching its value then would
    // cancel it); the committed text goes to the page once, as `input_text`.
    this.on(c, 'compositionstart', () => {
      this.composing = true;
    });
    this.on(c, 'compositionend', (e) => {
      this.composing = false;
      if (e.data) this.sendText(e.data);
      c.value = '';
    });
    this.on(c, 'input', (e) => {
      if (this.composing || (e as InputEvent).isComposing) return;
      // Text the browser typed without a key we forwarded (an IME commit without a
      // composition, a virtual keyboard, dictation) goes to the page as text. A composition's
      // own input events have other input types, so nothing is sent twice.
      const ie = e as InputEvent;
      if (ie.inputType === 'insertText' && ie.data) this.sendText(ie.data);
      c.value = '';
    });
    // The browser's own Edit menu (web mode) lands here as clipboard events on the catcher.
    this.on(c, 'paste', (e) => {
      e.preventDefault();
      const text = e.clipboardData?.getData('text/plain');
      if (text) this.sendText(text);
    });
    this.on(c, 'copy', (e) => {
      e.preventDefault();
      this.session.sendInput({ type: 'edit', op: 'copy' });
    });
    this.on(c, 'cut', (e) => {
      e.preventDefault();
      this.session.sendInput({ type: 'edit', op: 'cut' });
    });
    this.on(c, 'blur', () => {
      this.composing = false; // a composition ends with the focus (its compositionend may not come)
      // Keys held when focus leaves: release them in the page.
      for (const code of this.down) this.session.sendInput({ type: 'input_keyboard', event: 'up', key: code.startsWith('Key') ? code.slice(3).toLowerCase() : code, code, text: '', modifiers: 0 });
      this.down.clear();
    });
  }

  /** A paste (or committed IME text) as `input_text` pieces under the message cap, in order. */
  private sendText(text: string) {
    for (const t of textChunks(text)) this.session.sendInput({ type: 'input_text', text: t });
  }

  private flushMove() {
    cancelAnimationFrame(this.moveFrame);
    this.moveFrame = 0;
    const e = this.pendingMove;
    this.pendingMove = null;
    if (!e) return;
    const p = this.pagePoint(e);
    if (p) this.session.sendInput({ type: 'input_mouse', event: 'move', ...p, button: heldButton(e.buttons), modifiers: modifiers(e) });
  }
}
