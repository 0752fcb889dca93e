import { describe, expect, it } from 'vitest';
import * as L from '../layout/engine';
import { besidePane, chooseSide, largestPane, planSplit, roomBeside } from './place';

const WALL: L.Rect = { x: 0, y: 0, w: 1200, h: 800 };
const OPTS = { gap: 6, minSize: 80 };
// a | b side by side: each half is ~600×800 (taller than wide); b focused
const twoCols = L.split(L.single('a'), 'a', 'right', 'b');

describe('chooseSide', () => {
  const cases: Array<[string, L.Rect, L.SplitSide]> = [
    ['wider than tall: right', { x: 0, y: 0, w: 1200, h: 800 }, 'right'],
    ['taller than wide: down', { x: 0, y: 0, w: 600, h: 800 }, 'down'],
    ['square: down', { x: 0, y: 0, w: 500, h: 500 }, 'down'],
  ];
  for (const [name, rect, want] of cases) it(name, () => expect(chooseSide(rect)).toBe(want));
});

describe('besidePane', () => {
  const cases: Array<[string, L.LayoutState, string | null, string | null]> = [
    ['near on the wall', twoCols, 'a', 'a'],
    ['near null: the focused pane', twoCols, null, 'b'],
    ['near minimized: the focused pane', L.minimize(twoCols, 'a'), 'a', 'b'],
    ['near hidden behind a zoom is still on the wall', L.toggleZoom(twoCols, 'b'), 'a', 'a'],
    ['no focus: the first pane', { ...twoCols, focused: null }, null, 'a'],
    ['empty wall', L.EMPTY_LAYOUT, 'a', null],
  ];
  for (const [name, layout, near, want] of cases) it(name, () => expect(besidePane(layout, near)).toBe(want));
});

describe('planSplit', () => {
  it('puts the new pane beside the target and keeps the focus where it was', () => {
    const plan = planSplit(twoCols, WALL, 'a', null, 'c', OPTS);
    expect(plan).toMatchObject({ ok: true, target: 'a', side: 'down' });
    if (!plan.ok) return;
    expect(plan.layout.focused).toBe('b');
    expect(L.leaves(plan.layout.root)).toEqual(['a', 'c', 'b']);
    expect(L.checkInvariants(plan.layout)).toEqual([]);
  });

  it('side null on a wide pane: right', () => {
    expect(planSplit(L.single('a'), WALL, 'a', null, 'c', OPTS)).toMatchObject({ ok: true, side: 'right' });
  });

  it('an explicit side wins over the shape', () => {
    expect(planSplit(L.single('a'), WALL, 'a', 'down', 'c', OPTS)).toMatchObject({ ok: true, side: 'down' });
  });

  it('ends a zoom, the zoomed pane keeping the focus', () => {
    const plan = planSplit(L.toggleZoom(twoCols, 'b'), WALL, 'a', 'right', 'c', OPTS);
    expect(plan.ok && plan.layout.zoomed).toBe(null);
    expect(plan.ok && plan.layout.focused).toBe('b');
  });

  it('refuses a split that leaves a pane under the minimum', () => {
    const plan = planSplit(L.single('a'), { x: 0, y: 0, w: 150, h: 800 }, 'a', 'right', 'c', OPTS);
    expect(plan).toEqual({ ok: false, message: 'no room beside pane a: split right, a pane would be smaller than 80×80 px' });
  });

  it('does not judge room on a wall not measured yet', () => {
    expect(planSplit(L.single('a'), { x: 0, y: 0, w: 1, h: 1 }, 'a', null, 'c', OPTS).ok).toBe(true);
  });

  it('refuses a minimized target and a new id already known', () => {
    expect(planSplit(L.minimize(twoCols, 'a'), WALL, 'a', null, 'c', OPTS)).toMatchObject({ ok: false });
    expect(planSplit(twoCols, WALL, 'a', null, 'b', OPTS)).toMatchObject({ ok: false });
  });
});

describe('roomBeside', () => {
  it('null when there is room', () => expect(roomBeside(L.single('a'), WALL, 'a', null, OPTS)).toBeNull());
  it('the reason when there is not', () => expect(roomBeside(L.single('a'), { x: 0, y: 0, w: 1200, h: 150 }, 'a', 'down', OPTS)).toMatch(/no room beside pane a/));
});

describe('largestPane', () => {
  // a | b, then b split down into b / c: a is the largest
  const threePanes = L.split(twoCols, 'b', 'down', 'c');
  const cases: Array<[string, L.LayoutState, string | null, string | null]> = [
    ['a lone pane: it', L.single('a'), 'a', 'a'],
    ['the largest by area, whoever called', threePanes, 'c', 'a'],
    ['equal areas: not the caller', twoCols, 'a', 'b'],
    ['equal areas, the caller second: the first in wall order', twoCols, 'b', 'a'],
    ['a minimized pane is not on the wall', L.minimize(threePanes, 'a'), 'b', 'c'],
    ['a zoom does not count: laid out without it', L.toggleZoom(threePanes, 'c'), 'c', 'a'],
    ['empty wall', L.EMPTY_LAYOUT, null, null],
  ];
  for (const [name, layout, near, want] of cases) it(name, () => expect(largestPane(layout, WALL, near)).toBe(want));

  it('five opens from one pane leave it a quarter of the wall, not a thirty-second', () => {
    // What an agent does: `ph split`/`ph open` five times from its own pane.
    let layout = L.single('agent');
    for (let i = 1; i <= 5; i++) {
      const target = largestPane(layout, WALL, 'agent');
      expect(target).not.toBeNull();
      const plan = planSplit(layout, WALL, target!, null, `n${i}`, OPTS);
      expect(plan.ok).toBe(true);
      if (plan.ok) layout = plan.layout;
    }
    expect(L.checkInvariants(layout)).toEqual([]);
    const rects = L.computeLayout(layout, WALL).panes;
    const agent = rects.get('agent')!;
    expect(agent.w * agent.h).toBeGreaterThanOrEqual((WALL.w * WALL.h) / 4 - WALL.w);
    const areas = [...rects.values()].map((r) => r.w * r.h);
    expect(Math.max(...areas) / Math.min(...areas)).toBeLessThanOrEqual(2.01);
  });
});
