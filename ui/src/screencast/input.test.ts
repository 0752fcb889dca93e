import { describe, expect, it } from 'vitest';
import { ClickCounter, MULTI_CLICK_MS, buttonName, editChord, fitFrame, fromPage, heldButton, keyMessage, modifiers, toPage, wheelPx } from './input';

const NO_MODS = { altKey: false, ctrlKey: false, metaKey: false, shiftKey: false };

describe('fitFrame / toPage', () => {
  it('letterboxes with one uniform scale', () => {
    const check = (args: [number, number, number, number], expected: object | undefined) => expect(fitFrame(...args)).toEqual(expected);
    check([1000, 500, 1000, 500], { x: 0, y: 0, w: 1000, h: 500, scale: 1 });
    check([1440, 900, 720, 900], { x: 0, y: 225, w: 720, h: 450, scale: 0.5 });
    check([390, 844, 800, 422], { x: 302.5, y: 0, w: 195, h: 422, scale: 0.5 });
    check([0, 900, 720, 900], undefined);
    check([1440, 900, 0, 900], undefined);
    check([1440, 900, NaN, 900], undefined);
  });
  it('maps box CSS px to page CSS px through the width-derived scale', () => {
    const cases: [[number, number, number, number], [number, number], { x: number; y: number }][] = [
      [[1000, 500, 1000, 500], [10, 20], { x: 10, y: 20 }],
      [[1440, 900, 720, 900], [360, 450], { x: 720, y: 450 }], // centre
      [[1440, 900, 720, 900], [0, 225], { x: 0, y: 0 }], // top-left of the letterboxed frame
      [[1440, 900, 720, 900], [720, 675], { x: 1440, y: 900 }],
      [[390, 844, 800, 422], [302.5 + 97.5, 211], { x: 195, y: 422 }],
      [[1280, 800, 1920, 1200], [192, 120], { x: 128, y: 80 }], // scaled up
    ];
    for (const [fit, [bx, by], expected] of cases) expect(toPage(fitFrame(...fit)!, bx, by)).toEqual(expected);
  });
  it('maps a page box back to the pane (popups)', () => {
    const f = fitFrame(1440, 900, 720, 900)!;
    expect(fromPage(f, { x: 100, y: 100, width: 200, height: 40 })).toEqual({ x: 50, y: 275, width: 100, height: 20 });
  });
});

describe('pointer details', () => {
  it('buttons, held buttons, wheel deltas, modifiers', () => {
    expect([0, 1, 2, 3, 4, 7].map(buttonName)).toEqual(['left', 'middle', 'right', 'back', 'forward', 'none']);
    expect([0, 1, 2, 4, 3, 8].map(heldButton)).toEqual(['none', 'left', 'right', 'middle', 'left', 'back']);
    expect(wheelPx(3, 1, 800)).toBe(48);
    expect(wheelPx(1, 2, 800)).toBe(800);
    expect(wheelPx(-120, 0, 800)).toBe(-120);
    expect(wheelPx(1e9, 0, 800)).toBe(100000);
    expect(modifiers(NO_MODS)).toBe(0);
    expect(modifiers({ altKey: true, ctrlKey: true, metaKey: true, shiftKey: true })).toBe(15);
    expect(modifiers({ ...NO_MODS, ctrlKey: true, shiftKey: true })).toBe(10);
  });
});

describe('keyMessage', () => {
  const check = (event: 'down' | 'up', e: Partial<typeof NO_MODS> & { key: string; code: string }, expected: object | null) =>
    expect(keyMessage(event, { ...NO_MODS, ...e })).toEqual(expected === null ? null : { type: 'input_keyboard', event, modifiers: 0, ...expected });
  it('maps keys to the protocol message', () => {
    check('down', { key: 'a', code: 'KeyA' }, { key: 'a', code: 'KeyA', text: 'a' });
    check('down', { key: 'A', code: 'KeyA', shiftKey: true }, { key: 'A', code: 'KeyA', text: 'A', modifiers: 8 });
    check('up', { key: 'a', code: 'KeyA' }, { key: 'a', code: 'KeyA', text: '' });
    check('down', { key: 'Enter', code: 'Enter' }, { key: 'Enter', code: 'Enter', text: '\r' });
    check('down', { key: 'Backspace', code: 'Backspace' }, { key: 'Backspace', code: 'Backspace', text: '' });
    check('down', { key: 'ArrowLeft', code: 'ArrowLeft' }, { key: 'ArrowLeft', code: 'ArrowLeft', text: '' });
    check('down', { key: ' ', code: 'Space' }, { key: ' ', code: 'Space', text: ' ' });
    check('down', { key: 'é', code: 'Quote' }, { key: 'é', code: 'Quote', text: 'é' });
    check('down', { key: '😀', code: '' }, { key: '😀', code: '', text: '😀' });
    check('down', { key: 'z', code: 'KeyZ', ctrlKey: true }, { key: 'z', code: 'KeyZ', text: '', modifiers: 2 });
    check('down', { key: 'Shift', code: 'ShiftLeft', shiftKey: true }, { key: 'Shift', code: 'ShiftLeft', text: '', modifiers: 8 });
    check('down', { key: 'Process', code: 'KeyA' }, null);
    check('down', { key: 'Dead', code: 'Quote' }, null);
    check('down', { key: '', code: '' }, null);
  });
  it('recognises clipboard chords per platform', () => {
    const k = (key: string, m: Partial<typeof NO_MODS>) => ({ ...NO_MODS, ...m, key, code: `Key${key.toUpperCase()}` });
    expect(editChord(k('v', { ctrlKey: true }), false)).toBe('paste');
    expect(editChord(k('v', { ctrlKey: true, shiftKey: true }), false)).toBe('paste');
    expect(editChord(k('c', { ctrlKey: true }), false)).toBe('copy');
    expect(editChord(k('x', { ctrlKey: true }), false)).toBe('cut');
    expect(editChord(k('a', { ctrlKey: true }), false)).toBe('selectAll');
    expect(editChord(k('v', { metaKey: true }), true)).toBe('paste');
    expect(editChord(k('v', { metaKey: true }), false)).toBeNull();
    expect(editChord(k('v', { ctrlKey: true }), true)).toBeNull();
    expect(editChord(k('c', { ctrlKey: true, shiftKey: true }), false)).toBeNull();
    expect(editChord(k('v', { ctrlKey: true, altKey: true }), false)).toBeNull();
    expect(editChord(k('b', { ctrlKey: true }), false)).toBeNull();
    expect(editChord(k('v', {}), false)).toBeNull();
  });
  it('knows the Insert/Delete chords off macOS only', () => {
    const key = (code: string, mods: object) => ({ ...NO_MODS, key: code, code, ...mods });
    expect(editChord(key('Insert', { shiftKey: true }), false)).toBe('paste');
    expect(editChord(key('Insert', { ctrlKey: true }), false)).toBe('copy');
    expect(editChord(key('Delete', { shiftKey: true }), false)).toBe('cut');
    expect(editChord(key('Insert', {}), false)).toBeNull();
    expect(editChord(key('Delete', {}), false)).toBeNull();
    expect(editChord(key('Delete', { ctrlKey: true }), false)).toBeNull();
    expect(editChord(key('Insert', { shiftKey: true }), true)).toBeNull();
  });
});

describe('ClickCounter', () => {
  it('counts quick presses of one button at one spot, up to three', () => {
    const c = new ClickCounter();
    expect(c.current).toBe(1);
    expect([c.down(0, 10, 10, 0), c.down(100, 11, 9, 0), c.down(200, 10, 10, 0), c.down(300, 10, 10, 0)]).toEqual([1, 2, 3, 3]);
    expect(c.current).toBe(3);
  });
  it('starts again when too slow, too far, or another button', () => {
    const c = new ClickCounter();
    c.down(0, 10, 10, 0);
    expect(c.down(MULTI_CLICK_MS + 1, 10, 10, 0)).toBe(1);
    expect(c.down(MULTI_CLICK_MS + 50, 20, 10, 0)).toBe(1);
    expect(c.down(MULTI_CLICK_MS + 100, 20, 10, 2)).toBe(1);
    expect(c.down(MULTI_CLICK_MS + 150, 20, 10, 2)).toBe(2);
    expect(c.down(MULTI_CLICK_MS + 100, 20, 10, 2)).toBe(1); // time went backwards
  });
});
