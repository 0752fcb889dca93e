// The screencast's view in the pane body: the host element, the canvas frames are shown on
// (letterboxed: CSS `object-fit: contain`, the same rect as `fitFrame`), the scroll indicator,
// and the transparent input catcher over them. Owns the decode queue and the last frame.
// Knows nothing of sockets or HTTP: frames are pushed in, and a size change is reported
// through `onResize`.
//
// A decoded frame is handed to the compositor as it is (`bitmaprenderer`:
// `transferFromImageBitmap`, no copy) and the compositor scales it into the pane. A 2D canvas
// would redraw every frame into a backing store of the pane's size × devicePixelRatio on the
// main thread: at DPR 2 in a large pane that draw, not the decode, held the painted rate to
// about half of the frames delivered (issue 22 item 7; `cargo xtask bench screencast`,
// `ui_large_dpr2`).
import { DisposableStore } from '../lifecycle/disposable';
import { type Frame, LatestOnlyQueue } from './frame';
import { type FitRect, fitFrame, toPage } from './input';

/** Frame decodes running at once (`LatestOnlyQueue` depth): two keep the decoder busy while a
 * result travels back to the page, which one at a time cannot. */
const DECODE_DEPTH = 2;
/** How long a pane's size must rest before a crisp frame is decoded again for it, in ms (a
 * drag resizes at every animation frame). */
const RESAMPLE_AFTER_MS = 150;

/** The page's scroll position as the sidecar's `scroll` message gives it (CSS px). */
export interface PageScroll {
  y: number;
  height: number;
  view_height: number;
}

export class CanvasView {
  readonly element: HTMLDivElement;
  readonly canvas: HTMLCanvasElement;
  /** takes keyboard focus (and IME composition) for the page; pointer events land here too */
  readonly catcher: HTMLTextAreaElement;
  /** the scroll indicator (a thumb on the right edge; headless Chromium draws no scrollbars) */
  private readonly scrollBar: HTMLDivElement;
  private readonly scrollThumb: HTMLDivElement;
  private readonly queue: LatestOnlyQueue<Frame, ImageBitmap>;
  private readonly ctx: ImageBitmapRenderingContext | null;
  private readonly store = new DisposableStore();
  /** the crisp frame's resampling after a resize, once the size rests */
  private readonly resampleTimer = this.store.timer();
  /** the last painted frame (its bitmap is the canvas's now; its JPEG is kept for copying) */
  private last: Frame | null = null;
  /** pane body size in CSS px */
  private cssW = 0;
  private cssH = 0;
  private fitRect: FitRect | undefined;
  private scroll: PageScroll | null = null;

  constructor(
    /** the body's CSS size changed (not called for an unmeasurable, hidden body) */
    private readonly onResize: () => void,
  ) {
    this.element = document.createElement('div');
    this.element.className = 'screencast-host';
    this.element.dataset.socket = 'closed';
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'screencast-canvas';
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

    this.ctx = this.canvas.getContext('bitmaprenderer');
    this.queue = new LatestOnlyQueue<Frame, ImageBitmap>(
      (f) => this.decode(f),
      (bmp, f) => this.paint(bmp, f),
      (bmp) => bmp.close(),
      DECODE_DEPTH,
    );
    this.store.defer(() => this.queue.close());
  }

  /** where page CSS px land in the body; undefined before the first frame (or when unmeasurable) */
  get fit(): FitRect | undefined {
    return this.fitRect;
  }

  /** the body's size in CSS px (0×0 before it was measured) */
  get size(): { width: number; height: number } {
    return { width: this.cssW, height: this.cssH };
  }

  /** Starts measuring: the body is in the document now. */
  observe(): void {
    if (this.store.isDisposed) return;
    const ro = new ResizeObserver(() => this.measure());
    ro.observe(this.element);
    this.store.defer(() => ro.disconnect());
    this.measure();
  }

  /** Offers a decoded-to-be frame (latest only). */
  push(f: Frame): void {
    this.queue.push(f);
  }

  /** A new socket: frame ids start again. */
  resetFrames(): void {
    this.queue.reset();
  }

  /** The page's scroll position changed. */
  setScroll(s: PageScroll): void {
    this.scroll = s;
    this.placeScroll();
  }

  /** Page CSS px for a pointer event, or undefined before the first frame. */
  pagePoint(e: { clientX: number; clientY: number }): { x: number; y: number } | undefined {
    if (!this.fitRect) return undefined;
    const r = this.element.getBoundingClientRect();
    return toPage(this.fitRect, e.clientX - r.left, e.clientY - r.top);
  }

  /** A point of the viewport (client CSS px) in the body's CSS px. */
  bodyPoint(e: { clientX: number; clientY: number }): { x: number; y: number } {
    const r = this.element.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  }

  /**
   * Copies the image the context menu was opened on, as PNG, from the frame on screen (the
   * pixels the user sees; no refetch that could differ or be refused). `box` in page CSS px.
   * Throws when there is none or the clipboard refuses it.
   */
  async copyImage(box: { x: number; y: number; width: number; height: number }): Promise<void> {
    const last = this.last;
    if (!last) throw new Error('nothing painted yet');
    const bmp = await createImageBitmap(new Blob([last.jpeg as BlobPart], { type: 'image/jpeg' }));
    const s = bmp.width / last.width;
    const c = document.createElement('canvas');
    c.width = Math.max(1, Math.round(box.width * s));
    c.height = Math.max(1, Math.round(box.height * s));
    c.getContext('2d')!.drawImage(bmp, box.x * s, box.y * s, box.width * s, box.height * s, 0, 0, c.width, c.height);
    bmp.close();
    const blob = await new Promise<Blob | null>((res) => c.toBlob(res, 'image/png'));
    if (!blob) throw new Error('could not encode the image');
    await navigator.clipboard.write([new ClipboardItem({ 'image/png': blob })]);
  }

  /**
   * Decodes frame `f`. A crisp capture that the pane shows smaller than its pixels is
   * decoded straight to the pixels it covers, with the best resampling (the compositor's
   * scaling is bilinear: fine for a provisional frame, which the next replaces, but it
   * would blur the text of the picture the page rests on).
   */
  private decode(f: Frame): Promise<ImageBitmap> {
    const blob = new Blob([f.jpeg as BlobPart], { type: 'image/jpeg' });
    const size = this.crispSize(f);
    if (size) return createImageBitmap(blob, { resizeWidth: size.w, resizeHeight: size.h, resizeQuality: 'high' });
    return createImageBitmap(blob);
  }

  /** The pixels a crisp frame `f` is decoded to at the pane's size now; null: its own. */
  private crispSize(f: Frame): { w: number; h: number } | null {
    const fit = fitFrame(f.width, f.height, this.cssW, this.cssH);
    const dpr = window.devicePixelRatio || 1;
    if (!f.crisp || !fit || fit.scale * dpr >= f.dpr * 0.999) return null;
    return { w: Math.max(1, Math.round(fit.w * dpr)), h: Math.max(1, Math.round(fit.h * dpr)) };
  }

  private paint(bmp: ImageBitmap, f: Frame) {
    this.last = f;
    // A crisp frame whose decode began before the pane last resized lands at the old size
    // (on a busy machine the resize's own resample can run first): decode it again.
    if (f.crisp) {
      const want = this.crispSize(f) ?? { w: Math.round(f.width * f.dpr), h: Math.round(f.height * f.dpr) };
      if (Math.abs(want.w - bmp.width) > 1 || Math.abs(want.h - bmp.height) > 1) {
        this.resampleTimer.set(() => this.resampleCrisp(), RESAMPLE_AFTER_MS);
      }
    }
    // The canvas's size is the bitmap's (CSS letterboxes it); writing a size clears the
    // canvas, so only when it changes, right before the new picture lands.
    if (this.canvas.width !== bmp.width || this.canvas.height !== bmp.height) {
      this.canvas.width = bmp.width;
      this.canvas.height = bmp.height;
    }
    // The canvas takes the bitmap (no copy; it is released when the next one comes).
    if (this.ctx) this.ctx.transferFromImageBitmap(bmp);
    else bmp.close();
    this.place();
    this.canvas.dataset.frame = String(f.id);
    this.canvas.dataset.crisp = f.crisp ? 'true' : 'false';
    this.canvas.dataset.painted = String(Number(this.canvas.dataset.painted ?? '0') + 1);
  }

  /**
   * Places the scroll indicator's thumb over the painted frame's right edge: its top and
   * height are the viewport's share of the page's height. Hidden when nothing scrolls.
   */
  private placeScroll() {
    const s = this.scroll;
    const fit = this.fitRect;
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
    const changed = r.width !== this.cssW || r.height !== this.cssH;
    this.cssW = r.width;
    this.cssH = r.height;
    this.place();
    if (changed) {
      this.resampleTimer.set(() => this.resampleCrisp(), RESAMPLE_AFTER_MS);
      this.onResize();
    }
  }

  /**
   * A crisp frame was decoded for the pixels it covered: at a new size it is decoded again
   * from its JPEG (a page at rest sends no new frame, and the compositor would stretch the
   * old picture). Dropped if a newer frame is painted meanwhile.
   */
  private resampleCrisp(): void {
    const f = this.last;
    if (!f?.crisp || !this.ctx) return;
    this.decode(f).then(
      (bmp) => {
        if (this.last !== f || this.store.isDisposed) return bmp.close();
        this.paint(bmp, f);
      },
      () => {},
    );
  }

  /**
   * Where the last frame lands in the body: the canvas shows it letterboxed by CSS
   * (`object-fit: contain`, centred), the rect `fitFrame` gives; input and the scroll
   * indicator follow that rect.
   */
  private place(): void {
    const f = this.last;
    if (!f) return;
    this.fitRect = fitFrame(f.width, f.height, this.cssW, this.cssH);
    if (!this.fitRect) return;
    // Where page CSS px land in the body (for tests and debugging): x, y, scale.
    const fit = `${this.fitRect.x},${this.fitRect.y},${this.fitRect.scale}`;
    if (this.canvas.dataset.fit !== fit) this.canvas.dataset.fit = fit;
    this.placeScroll();
  }

  /** Stops observing and decoding, closes the bitmap, and takes the element out. Idempotent. */
  dispose(): void {
    if (this.store.isDisposed) return;
    this.store.dispose();
    this.last = null;
    this.element.remove();
  }
}
