import { describe, expect, it } from 'vitest';
import { POINT_MARK_PX, markFor, markKey } from './agent';
import { fitFrame } from './input';

describe('agent marks', () => {
  const act = { seq: 3, point: { x: 640, y: 400 }, rect: null };
  it('centres a point mark on the page point, through the fit (letterboxed, scaled)', () => {
    // A 1280×800 CSS px frame in a 640×600 pane: scale 0.5, 100 px bars above and below.
    const fit = fitFrame(1280, 800, 640, 600)!;
    const m = markFor(fit, act)!;
    expect(m.kind).toBe('point');
    expect(m.x + m.width / 2).toBe(320);
    expect(m.y + m.height / 2).toBe(300);
    expect(m.width).toBe(POINT_MARK_PX);
  });
  it('maps a box to an outline of the scaled box; a point wins over a box', () => {
    const fit = fitFrame(1000, 500, 500, 500)!; // scale 0.5, 125 px bars above and below
    expect(markFor(fit, { point: null, rect: { x: 10, y: 20, width: 200, height: 40 } })).toEqual({ kind: 'box', x: 5, y: 135, width: 100, height: 20 });
    expect(markFor(fit, { point: { x: 0, y: 0 }, rect: { x: 10, y: 20, width: 200, height: 40 } })!.kind).toBe('point');
    expect(markFor(fit, { point: null, rect: null })).toBeNull();
  });
  it('names each mark once per action and place', () => {
    expect(markKey(act)).toBe('3:point:640,400');
    expect(markKey({ ...act, seq: 4 })).not.toBe(markKey(act));
    expect(markKey({ seq: 3, point: null, rect: null })).toBeNull();
  });
});
