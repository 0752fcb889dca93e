// Browser panes' renderers and the actions on them (the header's buttons, the screencast's
// overlays, the URL field): one owner for the renderers, their body slots and the proxy
// grants. The pane models stay in the store's snapshot; this writes them through its host.
import { answeredPrompt, offerPrompt } from '../browser/prompts';
import { BrowserRuntime } from '../browser/BrowserRuntime';
import { type BrowserView, EMPTY_SCREENCAST, type ScreencastState, chromiumStopped } from '../pane/types';
import { grantKeepaliveMs } from '../browser/keepalive';
import { type RenderMode, modeForUrl } from '../browser/modes';
import { GrantRegistry, routeShimMessage } from '../browser/shim';
import { isHttpUrl } from '../browser/url';
import type { Decision, Keystroke } from '../keys/prefix';
import * as L from '../layout/engine';
import { remoteLinks } from '../remote/links';
import { ScreencastRuntime } from '../screencast/ScreencastRuntime';
import type { ViewportChoice } from '../screencast/viewport';
import { EMPTY_BROWSER, type PaneModel, type Snapshot } from './model';

/** A browser pane's renderer: the iframe one or the screencast one (same surface for the store). */
export type BrowserRenderer = BrowserRuntime | ScreencastRuntime;

/** What the browser panes need from the store. */
export interface BrowserHost {
  /** the current snapshot */
  readonly snap: Snapshot;
  updatePane(id: L.PaneId, patch: Partial<PaneModel>): void;
  focus(id: L.PaneId): void;
  /** a key the framed page forwarded, for the prefix machine */
  prefixKey(k: Keystroke): Decision;
  /** a connection dropped: ask whether Porthole still answers */
  suspect(): void;
  scheduleFocusSync(): void;
  /** opens a browser pane beside pane `ref` (a page's accepted new window) */
  openBrowser(ref: L.PaneId, url: string): L.PaneId | null;
}

/** Every browser pane's renderer, body slot and proxy grant, and the actions on them. */
export class BrowserPanes {
  private readonly renderers = new Map<L.PaneId, BrowserRenderer>();
  /** each browser pane's body slot (where its renderer's element is mounted) */
  private readonly slots = new Map<L.PaneId, HTMLElement>();
  /** proxy grants held by open iframe panes: the only origins shim messages are accepted from */
  readonly grants = new GrantRegistry();

  /** the app's prefix letter (Ctrl plus it), which framed pages must guard */
  private prefixLetter = 'b';

  constructor(private readonly host: BrowserHost) {}

  /** The prefix key is now Ctrl plus `letter`: every framed page is told (protocol §6.5 `prefix`). */
  setPrefixLetter(letter: string) {
    this.prefixLetter = letter;
    for (const r of this.renderers.values()) if (r instanceof BrowserRuntime) r.setPrefixLetter(letter);
  }

  /** Pane `id`'s renderer, if it is a browser pane. */
  get(id: L.PaneId): BrowserRenderer | undefined {
    return this.renderers.get(id);
  }

  /** The screencast renderer of pane `id`, if it is in screencast mode. */
  screencast(id: L.PaneId): ScreencastRuntime | undefined {
    const r = this.renderers.get(id);
    return r instanceof ScreencastRuntime ? r : undefined;
  }

  /** Mounts browser pane `id`'s renderer into its body slot (the pane calls this once; a mode switch remounts). */
  mount(id: L.PaneId, slot: HTMLElement) {
    this.slots.set(id, slot);
    this.renderers.get(id)?.mount(slot);
  }

  /** Disposes pane `id`'s renderer (a screencast's browser is deleted) and forgets its slot (the pane closed). */
  dispose(id: L.PaneId) {
    this.renderers.get(id)?.dispose();
    this.renderers.delete(id);
    this.slots.delete(id);
  }

  /** Creates browser pane `model`'s renderer (by its mode); it mounts when the pane gives it a slot. */
  create(model: PaneModel) {
    const id = model.id;
    const b = model.browser ?? EMPTY_BROWSER;
    // A remote pane's port: the page is on that host's network (its link, made on first use).
    const host = model.remote ?? null;
    const remoteLink = host ? () => remoteLinks.ensure(host).then((l) => l.id) : null;
    const onChange = (patch: Partial<BrowserView>) => {
      const p = this.host.snap.panes[id];
      if (!p?.browser || this.renderers.get(id) !== rt) return;
      const browser = { ...p.browser, ...patch };
      this.host.updatePane(id, { browser, title: browser.title });
    };
    const rt: BrowserRenderer =
      b.mode === 'screencast'
        ? new ScreencastRuntime(id, b.url, { browserId: b.browserId, viewport: b.viewport, restoreTabs: b.restoreTabs, isolated: b.isolated, remoteLink }, {
            onChange,
            onFocus: () => this.host.focus(id),
            onBrowserId: (browserId) => onChange({ browserId, restoreTabs: null }),
            onScreencast: (patch: Partial<ScreencastState>) => {
              if (patch.connected === false || patch.error) this.host.suspect();
              const sc = this.host.snap.panes[id]?.browser?.screencast ?? EMPTY_SCREENCAST;
              onChange({ screencast: { ...sc, ...patch } });
            },
            onViewport: (viewport: ViewportChoice) => onChange({ viewport }),
            onFind: () => this.setFinding(id, true),
          })
        : new BrowserRuntime(
            id,
            b.url,
            this.grants,
            {
              onChange,
              onFocus: () => this.host.focus(id),
              onOpenWindow: (url) => {
                const p = this.host.snap.panes[id];
                if (p?.browser && this.renderers.get(id) === rt) this.host.updatePane(id, { browser: { ...p.browser, ...offerPrompt(p.browser, url) } });
              },
              // The keyboard is in this pane's frame: the pane is the one an action applies to.
              onKey: (k) => {
                if (this.host.snap.layout.focused !== id) this.host.focus(id);
                this.host.prefixKey(k);
              },
            },
            grantKeepaliveMs(location.search),
            remoteLink,
          );
    if (rt instanceof BrowserRuntime) rt.setPrefixLetter(this.prefixLetter);
    this.renderers.set(id, rt);
  }

  /** Every `message` event: only a valid shim message from a pane's own frame, on a live grant origin, gets through. */
  readonly onMessage = (e: MessageEvent) => {
    const frames = [...this.renderers.values()].map((b) => ({ paneId: b.paneId, window: b.frameWindow }));
    const routed = routeShimMessage(e, frames, this.grants.isLive);
    if (routed) this.renderers.get(routed.paneId)?.handleShim(e.origin, routed.message);
  };

  /** Navigates browser pane `id` to `url` (an already normalized http(s) URL). */
  navigate(id: L.PaneId, url: string) {
    if (!isHttpUrl(url)) return;
    const p = this.host.snap.panes[id];
    // https cannot be framed: it opens as a screencast (the pane keeps its place).
    if (p?.browser?.mode === 'iframe' && modeForUrl(url) === 'screencast') {
      this.setRenderMode(id, 'screencast', url);
      return;
    }
    // Chromium stopped (crashed, killed): going somewhere relaunches it there.
    const sc = p?.browser?.screencast;
    if (sc && chromiumStopped(sc)) {
      this.screencast(id)?.relaunch(url);
      return;
    }
    this.renderers.get(id)?.navigate(url);
  }

  /**
   * Switches browser pane `id` to render `mode` (same pane, same element, same URL, or `url`
   * when given): the old renderer is disposed (a screencast's browser is deleted) and the new
   * one mounts into the same body slot.
   */
  setRenderMode(id: L.PaneId, mode: RenderMode, url?: string) {
    const p = this.host.snap.panes[id];
    if (!p?.browser || (p.browser.mode === mode && url === undefined)) return;
    if (p.browser.mode === mode && url !== undefined) {
      this.renderers.get(id)?.navigate(url);
      return;
    }
    const nextUrl = url ?? this.renderers.get(id)?.currentUrl ?? p.browser.url;
    this.renderers.get(id)?.dispose();
    const browser: BrowserView = {
      ...p.browser,
      url: nextUrl,
      mode,
      view: nextUrl ? 'loading' : 'empty',
      message: null,
      uninstrumented: false,
      blocked: null,
      prompt: null,
      queuedPrompts: [],
      notice: null,
      browserId: null,
      restoreTabs: null,
      screencast: mode === 'screencast' ? EMPTY_SCREENCAST : null,
    };
    const model = { ...p, browser };
    this.host.updatePane(id, { browser });
    this.create(model);
    const slot = this.slots.get(id);
    if (slot) this.renderers.get(id)?.mount(slot);
    this.browserVisible(id, L.visiblePanes(this.host.snap.layout).includes(id));
    this.host.focus(id);
    // The old renderer's element (or a panel button) had the keyboard: give it to the new one.
    this.host.scheduleFocusSync();
  }

  /** Pane `id` is on screen (true) or hidden/minimized (false): a hidden screencast parks after 1 s. */
  browserVisible(id: L.PaneId, visible: boolean) {
    this.screencast(id)?.setVisible(visible);
  }

  /**
   * Screencast viewport: Resize with pane, or a fixed size (persisted with the pane). With a
   * runtime the choice is recorded once the sidecar took it (never one it refused, e.g.
   * while popped out); without one (not mounted yet) it is recorded for the browser's creation.
   */
  setViewport(id: L.PaneId, choice: ViewportChoice) {
    const p = this.host.snap.panes[id];
    if (!p?.browser) return;
    const rt = this.screencast(id);
    if (rt) rt.setViewport(choice);
    else this.host.updatePane(id, { browser: { ...p.browser, viewport: choice } });
  }

  answerDialog(id: L.PaneId, accept: boolean, text?: string) {
    this.screencast(id)?.answerDialog(accept, text);
  }

  choosePopup(id: L.PaneId, index: number | null) {
    this.screencast(id)?.choosePopup(index);
  }

  /** Answers the file chooser of screencast pane `id` (files in web mode, paths from the desktop dialog; `[]` cancels). */
  answerFileChooser(id: L.PaneId, chooser: number, pick: { files: File[] } | { paths: string[] }) {
    this.screencast(id)?.answerFileChooser(chooser, pick);
  }

  /** Closes the canvas context menu of screencast pane `id`. */
  closeCanvasMenu(id: L.PaneId) {
    this.screencast(id)?.closeMenu();
  }

  /** Copies an image of screencast pane `id`'s page (its box in page CSS px) from the frame on screen. */
  copyPageImage(id: L.PaneId, box: { x: number; y: number; width: number; height: number }): Promise<void> {
    const rt = this.screencast(id);
    return rt ? rt.copyImage(box) : Promise.reject(new Error('not a screencast pane'));
  }

  /** Sets the page zoom of screencast pane `id` (1 resets). */
  setZoom(id: L.PaneId, factor: number) {
    this.screencast(id)?.setZoom(factor);
  }

  /** Closes the popup of screencast pane `id` without answering or taking the keyboard. */
  dismissPopup(id: L.PaneId) {
    this.screencast(id)?.dismissPopup();
  }

  /** Answers the picker input popup of screencast pane `id` with `value`, or dismisses it (null). */
  setPopupValue(id: L.PaneId, value: string | null) {
    this.screencast(id)?.setPopupValue(value);
  }

  selectTab(id: L.PaneId, tab: string) {
    this.screencast(id)?.selectTab(tab);
  }

  closeTab(id: L.PaneId, tab: string) {
    this.screencast(id)?.closeTab(tab);
  }

  relaunchBrowser(id: L.PaneId) {
    this.screencast(id)?.relaunch();
  }

  /** Hides screencast pane `id`'s error banner. */
  dismissScreencastError(id: L.PaneId) {
    this.screencast(id)?.dismissError();
  }

  /**
   * Pops browser pane `id` out to a window (protocol §8.5); the pane shows a stub. An
   * embedded (iframe) pane becomes a screencast first: pop-out and screencast share one
   * sidecar browser (its profile and cookies), so popping back in lands in the screencast.
   */
  popOut(id: L.PaneId) {
    if (!this.host.snap.popout.available) return;
    const b = this.host.snap.panes[id]?.browser;
    if (b && b.mode !== 'screencast') this.setRenderMode(id, 'screencast');
    this.screencast(id)?.popOut();
  }

  /** Brings screencast pane `id`'s popped-out browser back into the pane. */
  popIn(id: L.PaneId) {
    this.screencast(id)?.popIn();
  }

  /**
   * Opens or closes screencast pane `id`'s find bar; closing clears the page's highlights
   * and gives the keyboard back to the page.
   */
  setFinding(id: L.PaneId, finding: boolean) {
    this.host.updatePane(id, { finding });
    if (finding) return;
    this.screencast(id)?.find('');
    this.focusBrowserBody(id);
  }

  /** Find in screencast pane `id`'s page (see `ScreencastRuntime.find`). */
  find(id: L.PaneId, text: string, backwards: boolean, next: boolean) {
    this.screencast(id)?.find(text, backwards, next);
  }

  browserGo(id: L.PaneId, delta: -1 | 1) {
    this.renderers.get(id)?.go(delta);
  }

  /** Hides the "can't follow this page" banner until a later load is judged uninstrumented again. */
  dismissBanner(id: L.PaneId) {
    const p = this.host.snap.panes[id];
    if (p?.browser?.uninstrumented) this.host.updatePane(id, { browser: { ...p.browser, uninstrumented: false } });
  }

  /** Hides the "blocked by CORS" banner for the rest of the page (until the frame navigates). */
  /** Dismisses browser pane `id`'s notice (it is said once per pane). */
  dismissNotice(id: L.PaneId) {
    const p = this.host.snap.panes[id];
    if (p?.browser?.notice) this.host.updatePane(id, { browser: { ...p.browser, notice: null } });
  }

  dismissBlocked(id: L.PaneId) {
    const p = this.host.snap.panes[id];
    if (p?.browser?.blocked) this.host.updatePane(id, { browser: { ...p.browser, blocked: null } });
  }

  browserReload(id: L.PaneId, hard = false) {
    const b = this.renderers.get(id);
    if (hard) b?.hardReload();
    else b?.reload();
  }

  /** Answers a page's new-window request: accept opens an adjacent browser pane, cancel drops it. */
  answerPrompt(id: L.PaneId, accept: boolean) {
    const p = this.host.snap.panes[id];
    const url = p?.browser?.prompt;
    if (!p?.browser || !url) return;
    this.host.updatePane(id, { browser: { ...p.browser, ...answeredPrompt(p.browser) } });
    if (accept) this.host.openBrowser(id, url);
  }

  /** Gives the keyboard to browser pane `id`'s body (after its URL field closes). */
  focusBrowserBody(id: L.PaneId) {
    this.renderers.get(id)?.focus(true);
  }

  /** Asks pane `id`'s header to open its URL field. */
  editUrl(id: L.PaneId) {
    const p = this.host.snap.panes[id];
    if (p?.kind === 'browser') this.host.updatePane(id, { editNonce: (p.editNonce ?? 0) + 1 });
  }
}
