import { describe, expect, it } from 'vitest';
import { parseCustom, parseViewportChoice, syncMessage, viewportBody, viewportLabel } from './viewport';

describe('viewport choices', () => {
  it('validates Custom W×H×DPR', () => {
    expect(parseCustom('1024', '768', '2')).toEqual({ ok: true, choice: { mode: 'fixed', width: 1024, height: 768, dpr: 2 } });
    expect(parseCustom(' 100 ', '7680', '0.5').ok).toBe(true);
    for (const [w, h, d] of [['99', '800', '1'], ['1280', '7681', '1'], ['12.5', '800', '1'], ['', '800', '1'], ['1280', '800', '5'], ['1280', '800', '0.25'], ['1280', '800', 'x']])
      expect(parseCustom(w, h, d).ok).toBe(false);
  });
  it('clamps the sync message and refuses unmeasurable sizes', () => {
    expect(syncMessage(800.4, 600.6, 2)).toEqual({ type: 'sync', width: 800, height: 601, dpr: 2 });
    expect(syncMessage(50, 9000, 8)).toEqual({ type: 'sync', width: 100, height: 7680, dpr: 4 });
    expect(syncMessage(0, 600, 1)).toBeUndefined();
    expect(syncMessage(800, NaN, 1)).toBeUndefined();
  });
  it('round-trips a stored choice and builds the wire body', () => {
    expect(parseViewportChoice(undefined)).toEqual({ mode: 'pane' });
    expect(parseViewportChoice({ mode: 'fixed', width: 390, height: 844, dpr: 3, preset: 'Phone' })).toEqual({ mode: 'fixed', width: 390, height: 844, dpr: 3, preset: 'Phone' });
    expect(parseViewportChoice({ mode: 'fixed', width: 5, height: 844, dpr: 3 })).toEqual({ mode: 'pane' });
    expect(viewportBody({ mode: 'fixed', width: 390, height: 844, dpr: 3, preset: 'Phone' })).toEqual({ mode: 'fixed', width: 390, height: 844, dpr: 3 });
    expect(viewportLabel({ mode: 'pane' })).toBe('Resize with pane');
    // A phone preset says so on the wire (touch and a mobile agent), and is remembered.
    const phone = { mode: 'fixed', width: 390, height: 844, dpr: 3, preset: 'Phone', mobile: true } as const;
    expect(viewportBody(phone)).toEqual({ mode: 'fixed', width: 390, height: 844, dpr: 3, mobile: true });
    expect(parseViewportChoice(phone)).toEqual(phone);
  });
});
