// One browser pane's live parts in the iframe render mode: the iframe element, the proxy
// grant behind its URL, the shim's reports, and an app-side list of visited URLs.
//
// The iframe is created once and mounted once into the pane's body: it is never re-parented
// (re-parenting reloads it). Panes and components never call the proxy API; this does.
//
// While its frame shows a proxied page the pane holds that page's grant (`GrantRegistry`:
// shim messages are accepted only from held grants) and keeps it alive by asking for it again
// every `GRANT_KEEPALIVE_MS`; when the answer is a different grant (the old one expired, e.g.
// after the machine slept past the TTL), the frame is reloaded at the new grant's URL.
import { ApiError, api } from '../api/client';
import { DisposableStore } from '../lifecycle/disposable';
import { NavHistory } from './history';
import { INSTRUMENTED_WAIT_MS, InstrumentationJudge, type Verdict } from './instrumentation';
import type { BrowserEvents, BrowserView } from '../pane/types';
import { type Grant, type GrantRegistry, type ShimMessage, historyMessage, prefixMessage, reloadMessage } from './shim';
import { iframeRefusal, isHttpUrl } from './url';

/** What the pane says, once, the first time its page calls `window.open`: the page gets `null` back, not a window. */
export const WINDOW_OPEN_NOTICE =
  'This page opened a window with window.open. In an embedded pane it gets no handle to that window (window.open returns null), so a login popup or anything that talks to its opener will not work here; a screencast behaves as a browser does.';

/** The iframe's sandbox: never `allow-top-navigation` (that would let a page bust out of the frame). */
export const IFRAME_SANDBOX = 'allow-scripts allow-same-origin allow-forms allow-popups allow-modals allow-downloads allow-pointer-lock';
/** Permissions the framed page may use: no device access, no clipboard reads. */
export const IFRAME_ALLOW = 'autoplay; clipboard-write; fullscreen';
/** The frame stays transparent at most this long after it gets a source (until its first load). */
export const REVEAL_AFTER_MS = 1000;
/**
 * After the shim's `navigating`, the loading bar ends at the latest after this long: a
 * navigation that never leaves the page (a download, a beforeunload prompt answered "stay")
 * brings no load and no report. The proxy's own bound (protocol §6.6: no response head within
 * 30 s → its 504 page, a load) makes a real navigation end by then.
 */
export const LEAVING_BOUND_MS = 30_000;

export class BrowserRuntime {
  /** the pane body's frame host: focusable, `transform: translateZ(0)` (Chromium offsets OOPIF input otherwise) */
  readonly element: HTMLDivElement;
  readonly iframe: HTMLIFrameElement;
  private mounted = false;
  /** the timers below; disposed with the runtime */
  private readonly store = new DisposableStore();
  private url: string;
  /** visited upstream URLs (the app's own list: works with or without the shim) */
  private readonly history = new NavHistory();
  /** bumps on every navigation we start: answers for an older one are dropped */
  private seq = 0;
  /** the proxy origin the frame was last pointed at */
  private frameOrigin: string | null = null;
  private hasSrc = false;
  private revealed = false;
  private readonly revealTimer = this.store.timer();
  private readonly checkTimer = this.store.timer();
  private readonly judge = new InstrumentationJudge();
  private instrumented: boolean | null = null;
  /** the prefix letter the framed page must guard (null: the one the proxy served it with) */
  private prefixLetter: string | null = null;
  /** the grant this pane holds (the one its frame is on), null while no proxied page shows */
  private held: Grant | null = null;
  private keepTimer: ReturnType<typeof setInterval> | null = null;
  private keepAsking = false;
  /** a history step was posted to the shim: its location report ends the loading state */
  private stepping = false;
  /** the shim said its page is being left: the next location report, load or this bound ends the loading state */
  private readonly leavingTimer = this.store.timer();
  /** the title the shim last reported (restored when a navigation away never left) */
  private title = '';
  /** the frame's current document has sent a location report (its `title` reports count from then on) */
  private followed = false;
  /** a `blocked` report is on show (later ones from the same page add nothing) */
  private blockedShown = false;

  /** `keepaliveMs`: how often the held grant is asked for again (`grantKeepaliveMs`). */
  /** the page's first `window.open` was said (WINDOW_OPEN_NOTICE): never again for this pane */
  private windowOpenNoticed = false;

  constructor(
    readonly paneId: string,
    url: string,
    private readonly grants: GrantRegistry,
    private readonly events: BrowserEvents,
    private readonly keepaliveMs: number,
    /** the link id of the remote whose network the page is on (a remote pane's port); null: this machine */
    private readonly remoteLink: (() => Promise<string>) | null = null,
  ) {
    this.url = url;
    this.element = document.createElement('div');
    this.element.className = 'frame-host';
    this.element.tabIndex = -1;
    this.element.style.transform = 'translateZ(0)';
    const f = document.createElement('iframe');
    f.className = 'browser-frame';
    f.setAttribute('sandbox', IFRAME_SANDBOX);
    f.setAttribute('allow', IFRAME_ALLOW);
    f.setAttribute('referrerpolicy', 'no-referrer');
    f.setAttribute('data-testid', 'browser-frame');
    f.title = 'page';
    f.style.visibility = 'hidden';
    f.addEventListener('load', () => this.onLoad());
    this.iframe = f;
    this.element.appendChild(f);
  }

  /** The frame's window: what shim messages must come from. */
  get frameWindow(): Window | null {
    return this.iframe.contentWindow;
  }

  get currentUrl(): string {
    return this.url;
  }

  /** Puts the frame into `container` (once; later calls are no-ops) and loads the URL it has. */
  mount(container: HTMLElement): void {
    if (this.mounted || this.disposed) return;
    this.mounted = true;
    container.appendChild(this.element);
    if (this.url) this.navigate(this.url);
    else this.events.onChange({ view: 'empty' });
  }

  /** Navigates to upstream URL `url` (already normalized), as a new history entry. */
  navigate(url: string): void {
    if (this.disposed || !isHttpUrl(url)) return;
    this.history.push(url);
    void this.load(url);
  }

  /** Back (-1) or forward (+1): through the shim when the page is instrumented, else by reloading the frame. */
  go(delta: -1 | 1): void {
    // Only when the app's list has an entry there: the shim's history.go walks the tab's
    // joint session history, which must never step the app's own page.
    if (this.disposed || !this.history.canGo(delta)) return;
    // A refused entry (https) never loaded in the frame: the frame's history lacks it.
    const framed = iframeRefusal(this.history.peek(delta) ?? '') === null && iframeRefusal(this.url) === null;
    if (this.instrumented && framed && this.post(historyMessage(delta))) {
      this.history.expect(delta);
      this.stepping = true;
      this.stopLeaving();
      this.events.onChange({ loading: true });
      return;
    }
    const url = this.history.step(delta);
    if (url) void this.load(url);
  }

  /** Reloads the page: through the shim when instrumented, else by asking for the grant again. */
  reload(): void {
    if (this.disposed || !this.url) return;
    if (this.instrumented && this.post(reloadMessage())) {
      this.stopLeaving();
      this.events.onChange({ loading: true });
      return;
    }
    void this.load(this.url);
  }

  /**
   * The app's prefix key is now Ctrl plus `letter` (`a`..`z`): told to the framed page at once
   * and again at each page it loads (one served before the change would guard the old key).
   */
  setPrefixLetter(letter: string): void {
    if (letter === this.prefixLetter) return;
    this.prefixLetter = letter;
    if (this.instrumented) this.post(prefixMessage(letter));
  }

  /** Reloads by re-resolving the grant (the banner's Reload: the shim may not be there). */
  hardReload(): void {
    if (!this.disposed && this.url) void this.load(this.url);
  }

  /** Handles a shim message already routed to this pane (origin and source checked). */
  handleShim(origin: string, msg: ShimMessage): void {
    if (this.disposed) return;
    switch (msg.kind) {
      case 'pointerdown':
        this.events.onFocus();
        return;
      case 'open-window': {
        const url = this.grants.toUpstream(msg.url) ?? msg.url;
        this.events.onOpenWindow(url);
        if (msg.script && !this.windowOpenNoticed) {
          this.windowOpenNoticed = true;
          this.events.onChange({ notice: WINDOW_OPEN_NOTICE });
        }
        return;
      }
      case 'key':
        this.events.onKey(msg.key);
        return;
      case 'title': {
        // Before the frame's document reported, it may be the page being left.
        if (!this.hasSrc || !this.followed) return;
        this.title = msg.title;
        // While a navigation away runs the title stays blank (`navigating`); it is restored if it never left.
        if (!this.leavingTimer.pending) this.events.onChange({ title: msg.title });
        return;
      }
      case 'blocked': {
        if (!this.hasSrc || this.blockedShown) return;
        this.blockedShown = true;
        this.events.onChange({ blocked: { url: msg.url, via: msg.via } });
        return;
      }
      case 'navigating': {
        if (!this.hasSrc) return; // a panel covers the frame: its load ends nothing
        // As a load from the URL field: the bar runs and the old title goes (the start of a
        // cross-origin frame's own navigation is invisible to the app otherwise).
        this.stopLeaving();
        this.clearBlocked();
        this.leavingTimer.set(() => this.events.onChange({ loading: false, title: this.title }), LEAVING_BOUND_MS);
        this.events.onChange({ loading: true, title: '' });
        return;
      }
      case 'location': {
        if (!this.hasSrc) return; // a panel covers the frame: its page is being left
        // The frame may have moved to another proxied origin: map with every live grant.
        const url = this.grants.toUpstream(msg.url);
        if (!url) return;
        if (msg.loaded) {
          this.apply(this.judge.report(performance.now()));
        }
        this.frameOrigin = origin;
        this.followed = true;
        if (msg.loaded && this.prefixLetter) this.post(prefixMessage(this.prefixLetter));
        // The frame may be on another pane's grant now: hold that one (routing checked it is live).
        const g = this.grants.get(origin);
        if (g && g.grant !== this.held?.grant) this.hold(g);
        this.history.follow(url);
        this.url = url;
        this.title = msg.title;
        const patch: Partial<BrowserView> = { url, title: msg.title };
        if (this.stepping || this.stopLeaving()) {
          this.stepping = false;
          patch.loading = false;
        }
        this.events.onChange(patch);
        return;
      }
    }
  }

  /**
   * Moves the keyboard into the pane's body (not into the frame: the app keeps its keys),
   * unless something in the pane already has it (`force`: even then).
   */
  focus(force = false): void {
    const pane = this.element.closest('[data-testid=pane]');
    if (!force && pane?.contains(document.activeElement)) return;
    this.element.focus({ preventScroll: true });
  }

  private get disposed(): boolean {
    return this.store.isDisposed;
  }

  /** Forgets the frame for good. Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    this.store.dispose();
    this.seq++;
    this.release();
    this.iframe.removeAttribute('src');
    this.element.remove();
  }

  // --- internals

  private post(msg: unknown): boolean {
    const w = this.frameWindow;
    if (!w || !this.frameOrigin) return false;
    try {
      w.postMessage(msg, this.frameOrigin);
      return true;
    } catch {
      return false;
    }
  }

  /** Points the frame at `url` through a (re-resolved) grant. */
  private async load(url: string) {
    const seq = ++this.seq;
    this.url = url;
    // Until the new page reports, back/forward/reload go through the app-side list.
    this.instrumented = null;
    this.checkTimer.clear();
    this.stepping = false;
    this.stopLeaving();
    this.title = '';
    this.followed = false;
    this.clearBlocked();
    const refusal = iframeRefusal(url);
    if (refusal) {
      this.blank();
      this.events.onChange({ url, title: '', view: url.startsWith('https:') ? 'https' : 'error', message: refusal, uninstrumented: false, loading: false });
      return;
    }
    // The old page's title must not stand under the new URL while it loads.
    this.events.onChange({ url, title: '', view: 'loading', message: null, uninstrumented: false, loading: true });
    const embedders = [location.origin, ...Array.from(location.ancestorOrigins ?? [])];
    let grant;
    try {
      grant = await api.createProxyGrant(await this.grantRequest(url, embedders));
    } catch (e) {
      if (seq !== this.seq) return;
      this.blank();
      const message = e instanceof ApiError ? e.message : String(e);
      this.events.onChange({ view: 'error', message: `Couldn't open ${url} in the embedded view: ${message}`, loading: false });
      return;
    }
    if (seq !== this.seq || this.disposed) return;
    this.point(grant, url);
  }

  /** The grant request for `url`: through the pane's remote link when it has one. */
  private async grantRequest(url: string, embedders: string[]) {
    return this.remoteLink ? { url, embedders, remote: await this.remoteLink() } : { url, embedders };
  }

  /** Points the frame at upstream `url` through `grant` (its `url` is the proxy URL). */
  private point(grant: Grant & { url: string }, url: string) {
    this.hold(grant);
    this.frameOrigin = grant.origin;
    this.instrumented = null;
    this.stepping = false;
    this.stopLeaving();
    this.hasSrc = true;
    this.followed = false;
    this.clearBlocked();
    // Reports from the page being left must not vouch for the next one.
    this.judge.newSource();
    this.iframe.src = withFragment(grant.url, url);
    if (!this.revealed && !this.revealTimer.pending) this.revealTimer.set(() => this.reveal(), REVEAL_AFTER_MS);
    this.events.onChange({ view: 'ready', loading: true });
  }

  /** Holds `g` (the frame's grant) and keeps it alive while held. */
  private hold(g: Grant) {
    this.held = { grant: g.grant, origin: g.origin, upstream: g.upstream };
    this.grants.hold(this.paneId, this.held);
    if (!this.keepTimer) {
      this.keepTimer = setInterval(() => void this.keepAlive(), this.keepaliveMs);
      // Back from a hidden tab or a sleep: check at once rather than at the next tick.
      document.addEventListener('visibilitychange', this.onVisible);
    }
  }

  private onVisible = () => {
    if (document.visibilityState === 'visible') void this.keepAlive();
  };

  /** Lets go of the held grant (no proxied page shows any more). Idempotent. */
  private release() {
    this.held = null;
    this.grants.release(this.paneId);
    if (this.keepTimer) {
      clearInterval(this.keepTimer);
      document.removeEventListener('visibilitychange', this.onVisible);
    }
    this.keepTimer = null;
  }

  /**
   * Asks for the grant of the page on screen again: the same grant comes back and its idle
   * TTL restarts (protocol §6.1, §6.3). A different grant means the held one is gone (its
   * listener refuses connections): the frame is reloaded at the new grant's URL for the page
   * it was on, not left to show "refused to connect" on the next click. A failed request
   * changes nothing (a stopped sidecar is the app's liveness check's business).
   */
  private async keepAlive() {
    if (this.keepAsking || this.disposed || !this.held || !this.hasSrc || !isHttpUrl(this.url)) return;
    const seq = this.seq;
    const url = this.url;
    const was = this.held.grant;
    this.keepAsking = true;
    try {
      const embedders = [location.origin, ...Array.from(location.ancestorOrigins ?? [])];
      const grant = await api.createProxyGrant(await this.grantRequest(url, embedders));
      // A navigation started meanwhile owns the frame now.
      if (seq !== this.seq || this.disposed || !this.held || this.held.grant !== was || this.url !== url) return;
      if (grant.grant === was) return;
      this.seq++;
      this.events.onChange({ title: '', uninstrumented: false });
      this.point(grant, url);
    } catch {
      // Kept as is; the next tick asks again.
    } finally {
      this.keepAsking = false;
    }
  }

  /** Stops showing (and running) the previous page while a panel covers the pane. */
  private blank() {
    this.release();
    if (!this.hasSrc) return;
    this.hasSrc = false;
    this.frameOrigin = null;
    this.iframe.src = 'about:blank';
  }

  private onLoad() {
    if (!this.hasSrc || this.disposed) return;
    this.stepping = false;
    this.stopLeaving();
    this.events.onChange({ loading: false });
    this.reveal();
    const verdict = this.judge.load(performance.now());
    if (verdict) {
      this.apply(verdict);
      return;
    }
    this.armCheck(INSTRUMENTED_WAIT_MS);
  }

  private armCheck(ms: number) {
    this.checkTimer.set(() => {
      this.apply(this.judge.check(performance.now()));
      if (this.judge.waiting && !this.disposed) this.armCheck(20); // the timer fired a little early
    }, ms);
  }

  private apply(verdict: Verdict | null) {
    if (verdict) this.setInstrumented(verdict === 'instrumented');
  }

  /** Records a verdict; every uninstrumented one shows the banner again (the user may have dismissed it). */
  private setInstrumented(yes: boolean) {
    const changed = this.instrumented !== yes;
    this.instrumented = yes;
    if (changed || !yes) this.events.onChange({ uninstrumented: !yes });
  }

  private reveal() {
    this.revealTimer.clear();
    if (this.revealed) return;
    this.revealed = true;
    this.iframe.style.visibility = '';
  }

  /** Forgets the page's `blocked` report (a new document is on its way). */
  private clearBlocked() {
    if (!this.blockedShown) return;
    this.blockedShown = false;
    this.events.onChange({ blocked: null });
  }

  /** Ends the wait that `navigating` started; true if one was running. */
  private stopLeaving(): boolean {
    if (!this.leavingTimer.pending) return false;
    this.leavingTimer.clear();
    return true;
  }
}

/** The proxy drops the fragment from the URL it hands back: keep the one the user asked for. */
function withFragment(proxyUrl: string, upstreamUrl: string): string {
  const hash = upstreamUrl.includes('#') ? upstreamUrl.slice(upstreamUrl.indexOf('#')) : '';
  if (!hash || hash === '#' || proxyUrl.includes('#')) return proxyUrl;
  return proxyUrl + hash;
}
