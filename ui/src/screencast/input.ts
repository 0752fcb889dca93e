// Pure: mapping the view's pointer and keyboard events to viewer-socket input messages
// (protocol §8.4). Coordinates: the canvas's CSS pixels → the page viewport's CSS pixels
// through one scale derived from widths (DESIGN §4.3), the same on both axes.

/** Where a frame of `frameW`×`frameH` CSS px is drawn inside a box of `boxW`×`boxH` CSS px. */
export interface FitRect {
  /** left edge in box CSS px */
  x: number;
  /** top edge in box CSS px */
  y: number;
  /** drawn width in box CSS px */
  w: number;
  /** drawn height in box CSS px */
  h: number;
  /** box CSS px per page CSS px: `w / frameW` */
  scale: number;
}

/**
 * Letterboxes a frame into a box: the largest uniform scale that fits, centred. Returns
 * undefined (never a zero or NaN rect) when any size is not positive and finite.
 */
export function fitFrame(frameW: number, frameH: number, boxW: number, boxH: number): FitRect | undefined {
  if (![frameW, frameH, boxW, boxH].every((n) => Number.isFinite(n) && n > 0)) return undefined;
  const scale = Math.min(boxW / frameW, boxH / frameH);
  const w = frameW * scale;
  const h = frameH * scale;
  return { x: (boxW - w) / 2, y: (boxH - h) / 2, w, h, scale: w / frameW };
}

/** Maps a point in box CSS px to page CSS px through the fit's width-derived scale. */
export function toPage(fit: FitRect, bx: number, by: number): { x: number; y: number } {
  const s = fit.scale;
  return { x: round2((bx - fit.x) / s), y: round2((by - fit.y) / s) };
}

/** Maps a box in page CSS px (a `<select>`'s box) to box CSS px. */
export function fromPage(fit: FitRect, r: { x: number; y: number; width: number; height: number }) {
  const s = fit.scale;
  return { x: fit.x + r.x * s, y: fit.y + r.y * s, width: r.width * s, height: r.height * s };
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

/** Modifier bits of the protocol: Alt 1, Ctrl 2, Meta 4, Shift 8. */
export const MOD_ALT = 1;
export const MOD_CTRL = 2;
export const MOD_META = 4;
export const MOD_SHIFT = 8;

export interface Mods {
  altKey: boolean;
  ctrlKey: boolean;
  metaKey: boolean;
  shiftKey: boolean;
}

export function modifiers(e: Mods): number {
  return (e.altKey ? MOD_ALT : 0) | (e.ctrlKey ? MOD_CTRL : 0) | (e.metaKey ? MOD_META : 0) | (e.shiftKey ? MOD_SHIFT : 0);
}

export type MouseButton = 'none' | 'left' | 'middle' | 'right' | 'back' | 'forward';

/** DOM `MouseEvent.button` → the protocol's button name. */
export function buttonName(b: number): MouseButton {
  return (['left', 'middle', 'right', 'back', 'forward'] as const)[b] ?? 'none';
}

/** DOM `MouseEvent.buttons` (a bitmask) → the one button a move carries while dragging. */
export function heldButton(buttons: number): MouseButton {
  if (buttons & 1) return 'left';
  if (buttons & 4) return 'middle';
  if (buttons & 2) return 'right';
  if (buttons & 8) return 'back';
  if (buttons & 16) return 'forward';
  return 'none';
}

/** Wheel deltas in CSS px from a DOM wheel event's deltaMode (0 px, 1 lines, 2 pages). */
export function wheelPx(delta: number, mode: number, pageH: number): number {
  const px = mode === 1 ? delta * 16 : mode === 2 ? delta * pageH : delta;
  return Math.max(-100000, Math.min(100000, px));
}

export interface KeyLike extends Mods {
  key: string;
  code: string;
}

export interface KeyboardMessage {
  type: 'input_keyboard';
  event: 'down' | 'up';
  key: string;
  code: string;
  text: string;
  modifiers: number;
}

const utf8 = new TextEncoder();

/**
 * The `input_keyboard` message for a key event, or null when it must not be sent (an empty
 * or over-long `key`, IME `Process`/`Dead` keys). `text` is what the key types: one
 * character with neither Ctrl nor Meta held, `"\r"` for Enter, else "".
 */
export function keyMessage(event: 'down' | 'up', e: KeyLike): KeyboardMessage | null {
  const key = e.key;
  if (!key || utf8.encode(key).length > 64 || key === 'Process' || key === 'Dead' || key === 'Unidentified') return null;
  const code = utf8.encode(e.code).length <= 64 ? e.code : '';
  let text = '';
  if (event === 'down') {
    if (key === 'Enter') text = '\r';
    else if ([...key].length === 1 && !e.ctrlKey && !e.metaKey) text = key;
  }
  return { type: 'input_keyboard', event, key, code, text, modifiers: modifiers(e) };
}

export type EditChord = 'paste' | 'copy' | 'cut' | 'selectAll';

/**
 * The clipboard chord a key-down is, if any: Ctrl (Cmd on macOS) with V, C, X or A and no
 * Alt; Ctrl+Shift+V counts as paste too. Off macOS also the older chords Shift+Insert
 * (paste), Ctrl+Insert (copy) and Shift+Delete (cut). Others are ordinary keys for the page.
 */
export function editChord(e: KeyLike, mac: boolean): EditChord | null {
  if (!mac && !e.altKey && !e.metaKey) {
    const k = e.code || e.key;
    if (k === 'Insert' && e.shiftKey && !e.ctrlKey) return 'paste';
    if (k === 'Insert' && e.ctrlKey && !e.shiftKey) return 'copy';
    if (k === 'Delete' && e.shiftKey && !e.ctrlKey) return 'cut';
  }
  const primary = mac ? e.metaKey && !e.ctrlKey : e.ctrlKey && !e.metaKey;
  if (!primary || e.altKey) return null;
  const k = e.code ? e.code : `Key${e.key.toUpperCase()}`;
  switch (k) {
    case 'KeyV':
      return 'paste';
    case 'KeyC':
      return e.shiftKey ? null : 'copy';
    case 'KeyX':
      return e.shiftKey ? null : 'cut';
    case 'KeyA':
      return e.shiftKey ? null : 'selectAll';
    default:
      return null;
  }
}

/** Presses closer than this in time count as one multi-click (Windows' default double-click time). */
export const MULTI_CLICK_MS = 500;
/** …and closer than this in CSS px on each axis (about the platforms' double-click slop). */
export const MULTI_CLICK_PX = 4;
/** The protocol's largest click count (a triple click selects a paragraph; more add nothing). */
export const MAX_CLICKS = 3;

/**
 * Click counts for `input_mouse` presses and releases. The view has to count them itself:
 * Chromium gives `PointerEvent.detail` as 0 (UI Events), and the pane cancels pointerdown,
 * which suppresses the mouse events that would carry the count. Without a count above 1 the
 * page never sees a double-click.
 */
export class ClickCounter {
  private last: { t: number; x: number; y: number; button: number; count: number } | null = null;

  /**
   * Counts a press of DOM `button` at (x, y) CSS px at time `t` ms: one more than the last
   * press (at most `MAX_CLICKS`) when it is the same button within `MULTI_CLICK_MS` and
   * `MULTI_CLICK_PX`, else 1.
   */
  down(t: number, x: number, y: number, button: number): number {
    const l = this.last;
    const near = l && l.button === button && t - l.t >= 0 && t - l.t <= MULTI_CLICK_MS && Math.abs(x - l.x) <= MULTI_CLICK_PX && Math.abs(y - l.y) <= MULTI_CLICK_PX;
    const count = near ? Math.min(MAX_CLICKS, l.count + 1) : 1;
    this.last = { t, x, y, button, count };
    return count;
  }

  /** The count of the last press (what its release carries); 1 before any press. */
  get current(): number {
    return this.last?.count ?? 1;
  }
}

/** Largest paste in one `input_text` message, in code points: 8192 × at most 6 bytes JSON-escaped stays under the socket's 64 KiB cap. */
export const PASTE_CHUNK_CODE_POINTS = 8192;

/** Splits a paste into `input_text`-sized pieces on code point boundaries (a surrogate pair is never split); the sidecar joins consecutive ones. */
export function textChunks(text: string, max = PASTE_CHUNK_CODE_POINTS): string[] {
  const cps = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < cps.length; i += max) out.push(cps.slice(i, i + max).join(''));
  return out;
}
