// Pure: the screencast's viewport choices (Display menu) and their wire form (protocol §8.2).
import { MAX_VIEWPORT_CSS_PX, MAX_VIEWPORT_DPR, MIN_VIEWPORT_CSS_PX, MIN_VIEWPORT_DPR } from '../api/protocol';

/** Resize with pane, or a fixed CSS size and DPR (`mobile`: a phone, touch and a mobile user agent). */
export type ViewportChoice = { mode: 'pane' } | { mode: 'fixed'; width: number; height: number; dpr: number; preset?: string; mobile?: boolean };

export const PANE_VIEWPORT: ViewportChoice = { mode: 'pane' };

/** The pane's size is sent this long after the last resize (DESIGN §7). */
export const VIEWPORT_SETTLE_MS = 200;

const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, n));

/** The `sync` message for a pane of `w`×`h` CSS px at `dpr`, clamped to the bounds; undefined when unmeasurable. */
export function syncMessage(w: number, h: number, dpr: number) {
  if (![w, h, dpr].every((n) => Number.isFinite(n) && n > 0)) return undefined;
  return {
    type: 'sync' as const,
    width: clamp(Math.round(w), MIN_VIEWPORT_CSS_PX, MAX_VIEWPORT_CSS_PX),
    height: clamp(Math.round(h), MIN_VIEWPORT_CSS_PX, MAX_VIEWPORT_CSS_PX),
    dpr: clamp(Math.round(dpr * 100) / 100, MIN_VIEWPORT_DPR, MAX_VIEWPORT_DPR),
  };
}

/**
 * Validates the Custom fields (strings as typed). Returns the choice, or the reason it is
 * refused: integers within the protocol's size bounds, a number within its DPR bounds.
 */
export function parseCustom(w: string, h: string, dpr: string): { ok: true; choice: ViewportChoice } | { ok: false; message: string } {
  const int = /^\s*\d{1,5}\s*$/;
  if (!int.test(w) || !int.test(h)) return { ok: false, message: 'width and height must be whole CSS pixels' };
  const W = Number(w);
  const H = Number(h);
  if (W < MIN_VIEWPORT_CSS_PX || W > MAX_VIEWPORT_CSS_PX || H < MIN_VIEWPORT_CSS_PX || H > MAX_VIEWPORT_CSS_PX)
    return { ok: false, message: `width and height must be ${MIN_VIEWPORT_CSS_PX}–${MAX_VIEWPORT_CSS_PX}` };
  if (!/^\s*\d+(\.\d+)?\s*$/.test(dpr)) return { ok: false, message: 'DPR must be a number' };
  const D = Number(dpr);
  if (D < MIN_VIEWPORT_DPR || D > MAX_VIEWPORT_DPR) return { ok: false, message: `DPR must be ${MIN_VIEWPORT_DPR}–${MAX_VIEWPORT_DPR}` };
  return { ok: true, choice: { mode: 'fixed', width: W, height: H, dpr: D } };
}

/** The body of `POST /api/browsers/{id}/viewport` (and of the create call). */
export function viewportBody(c: ViewportChoice) {
  if (c.mode === 'pane') return { mode: 'pane' as const };
  const body = { mode: 'fixed' as const, width: c.width, height: c.height, dpr: c.dpr };
  return c.mobile ? { ...body, mobile: true } : body;
}

/** A stored value → a choice (anything invalid → Resize with pane). */
export function parseViewportChoice(v: unknown): ViewportChoice {
  if (typeof v !== 'object' || v === null) return PANE_VIEWPORT;
  const o = v as Record<string, unknown>;
  if (o.mode !== 'fixed') return PANE_VIEWPORT;
  const r = parseCustom(String(o.width), String(o.height), String(o.dpr));
  if (!r.ok || r.choice.mode !== 'fixed') return PANE_VIEWPORT;
  const choice = o.mobile === true ? { ...r.choice, mobile: true } : r.choice;
  return typeof o.preset === 'string' ? { ...choice, preset: o.preset } : choice;
}

/** The Display menu's label for a choice. */
export function viewportLabel(c: ViewportChoice): string {
  if (c.mode === 'pane') return 'Resize with pane';
  return `${c.preset ? c.preset + ' ' : ''}${c.width}×${c.height} @${c.dpr}x`;
}
