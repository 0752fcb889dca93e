// One browser pane's live parts in the iframe render mode: the iframe element, the proxy
// grant behind its URL, the shim's reports, and an app-side list of visited URLs.
//
// The iframe is created once and mounted once into the pane's body: it is never re-parented
// (re-parenting reloads it). Panes and components never call the proxy API; this does.
import { ApiError, api } from '../api/client';
import { NavHistory } from './history';
import { INSTRUMENTED_WAIT_MS, InstrumentationJudge, type Verdict } from './instrumentation';
import type { RenderMode } from './modes';
import { type GrantRegistry, type ShimMessage, historyMessage, reloadMessage } from './shim';
import { iframeRefusal, isHttpUrl } from './url';

/** What the pane shows, as the header and the panels read it. */
export interface BrowserView {
  /** the upstream URL on screen ('' before the first navigation) */
  url: string;
  mode: RenderMode;
  /** the page's title as the shim last reported it */
  title: string;
  /** empty: no URL yet; loading: waiting for a grant or the first load; https: refused by the iframe renderer */
  view: 'empty' | 'loading' | 'ready' | 'https' | 'error';
  /** the panel's message for `https` and `error` */
  message: string | null;
  /** a load came with no location report from the shim (not HTML, off the proxy, or refused) */
  uninstrumented: boolean;
  /** a page asked to open this URL in a new window; the pane asks the user */
  prompt: string | null;
}

export interface BrowserEvents {
  onChange: (patch: Partial<BrowserView>) => void;
  /** the user pressed a pointer inside the frame */
  onFocus: () => void;
}

/** The iframe's sandbox: never `allow-top-navigation` (that would let a page bust out of the frame). */
export const IFRAME_SANDBOX = 'allow-scripts allow-same-origin allow-forms allow-popups allow-modals allow-downloads allow-pointer-lock';
/** Permissions the framed page may use: no device access, no clipboard reads. */
export const IFRAME_ALLOW = 'autoplay; clipboard-write; fullscreen';
/** The frame stays transparent at most this long after it gets a source (until its first load). */
export const REVEAL_AFTER_MS = 1000;

export class BrowserRuntime {
  /** the pane body's frame host: focusable, `transform: translateZ(0)` (Chromium offsets OOPIF input otherwise) */
  readonly element: HTMLDivElement;
  readonly iframe: HTMLIFrameElement;
  private mounted = false;
  private disposed = false;
  private url: string;
  /** visited upstream URLs (the app's own list: works with or without the shim) */
  private readonly history = new NavHistory();
  /** bumps on every navigation we start: answers for an older one are dropped */
  private seq = 0;
  /** the proxy origin the frame was last pointed at */
  private frameOrigin: string | null = null;
  private hasSrc = false;
  private revealed = false;
  private revealTimer: ReturnType<typeof setTimeout> | null = null;
  private checkTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly judge = new InstrumentationJudge();
  private instrumented: boolean | null = null;

  constructor(
    readonly paneId: string,
    url: string,
    private readonly grants: GrantRegistry,
    private readonly events: BrowserEvents,
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
      return;
    }
    const url = this.history.step(delta);
    if (url) void this.load(url);
  }

  /** Reloads the page: through the shim when instrumented, else by asking for the grant again. */
  reload(): void {
    if (this.disposed || !this.url) return;
    if (this.instrumented && this.post(reloadMessage())) return;
    void this.load(this.url);
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
        this.events.onChange({ prompt: url });
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
        this.history.follow(url);
        this.url = url;
        this.events.onChange({ url, title: msg.title });
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

  /** Forgets the frame for good. Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.seq++;
    this.clearTimers();
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
    if (this.checkTimer) clearTimeout(this.checkTimer);
    this.checkTimer = null;
    const refusal = iframeRefusal(url);
    if (refusal) {
      this.blank();
      this.events.onChange({ url, view: url.startsWith('https:') ? 'https' : 'error', message: refusal, uninstrumented: false });
      return;
    }
    this.events.onChange({ url, view: 'loading', message: null, uninstrumented: false });
    const embedders = [location.origin, ...Array.from(location.ancestorOrigins ?? [])];
    let grant;
    try {
      grant = await api.createProxyGrant({ url, embedders });
    } catch (e) {
      if (seq !== this.seq) return;
      this.blank();
      const message = e instanceof ApiError ? e.message : String(e);
      this.events.onChange({ view: 'error', message: `Couldn't open ${url} in the embedded view: ${message}` });
      return;
    }
    if (seq !== this.seq || this.disposed) return;
    this.grants.add(grant);
    this.frameOrigin = grant.origin;
    this.instrumented = null;
    this.hasSrc = true;
    // Reports from the page being left must not vouch for the next one.
    this.judge.newSource();
    this.iframe.src = withFragment(grant.url, url);
    if (!this.revealed && !this.revealTimer) this.revealTimer = setTimeout(() => this.reveal(), REVEAL_AFTER_MS);
    this.events.onChange({ view: 'ready' });
  }

  /** Stops showing (and running) the previous page while a panel covers the pane. */
  private blank() {
    if (!this.hasSrc) return;
    this.hasSrc = false;
    this.frameOrigin = null;
    this.iframe.src = 'about:blank';
  }

  private onLoad() {
    if (!this.hasSrc || this.disposed) return;
    this.reveal();
    const verdict = this.judge.load(performance.now());
    if (verdict) {
      this.apply(verdict);
      return;
    }
    this.armCheck(INSTRUMENTED_WAIT_MS);
  }

  private armCheck(ms: number) {
    if (this.checkTimer) clearTimeout(this.checkTimer);
    this.checkTimer = setTimeout(() => {
      this.checkTimer = null;
      this.apply(this.judge.check(performance.now()));
      if (this.judge.waiting && !this.disposed) this.armCheck(20); // the timer fired a little early
    }, ms);
  }

  private apply(verdict: Verdict | null) {
    if (verdict) this.setInstrumented(verdict === 'instrumented');
  }

  private setInstrumented(yes: boolean) {
    if (this.instrumented === yes) return;
    this.instrumented = yes;
    this.events.onChange({ uninstrumented: !yes });
  }

  private reveal() {
    if (this.revealTimer) {
      clearTimeout(this.revealTimer);
      this.revealTimer = null;
    }
    if (this.revealed) return;
    this.revealed = true;
    this.iframe.style.visibility = '';
  }

  private clearTimers() {
    if (this.revealTimer) clearTimeout(this.revealTimer);
    if (this.checkTimer) clearTimeout(this.checkTimer);
    this.revealTimer = this.checkTimer = null;
  }
}

/** The proxy drops the fragment from the URL it hands back: keep the one the user asked for. */
function withFragment(proxyUrl: string, upstreamUrl: string): string {
  const hash = upstreamUrl.includes('#') ? upstreamUrl.slice(upstreamUrl.indexOf('#')) : '';
  if (!hash || hash === '#' || proxyUrl.includes('#')) return proxyUrl;
  return proxyUrl + hash;
}
