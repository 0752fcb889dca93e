import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  type LayoutState,
  type Rect,
  EMPTY_LAYOUT,
  add,
  allPanes,
  checkInvariants,
  close,
  computeLayout,
  focus,
  focusDirection,
  focusNext,
  leaves,
  minimize,
  parseLayout,
  prune,
  replace,
  resize,
  restore,
  single,
  split,
  swap,
  toggleZoom,
  visiblePanes,
} from './engine';

const WALL: Rect = { x: 0, y: 0, w: 1200, h: 800 };
const EPS = 1e-6;

function rectsOf(s: LayoutState, gap = 0) {
  return computeLayout(s, WALL, { gap });
}

/** Same panes with the same rectangles, up to floating-point noise. */
function sameRects(a: Map<string, Rect>, b: Map<string, Rect>): boolean {
  if (a.size !== b.size) return false;
  for (const [id, r] of a) {
    const o = b.get(id);
    if (!o || [r.x - o.x, r.y - o.y, r.w - o.w, r.h - o.h].some((d) => Math.abs(d) > 1e-6)) return false;
  }
  return true;
}

function round(r: Rect): Rect {
  const f = (n: number) => Math.round(n * 1000) / 1000;
  return { x: f(r.x), y: f(r.y), w: f(r.w), h: f(r.h) };
}

/** Asserts that panes and gaps tile the wall exactly: inside it, no overlaps, areas add up. */
function assertTiles(s: LayoutState, gap: number) {
  const { panes, gaps } = rectsOf(s, gap);
  const rects = [...panes.values(), ...gaps.map((g) => g.rect)];
  if (visiblePanes(s).length === 0) {
    expect(rects.length).toBe(0);
    return;
  }
  expect([...panes.keys()].sort()).toEqual([...visiblePanes(s)].sort());
  let area = 0;
  for (const r of rects) {
    expect(r.w).toBeGreaterThanOrEqual(-EPS);
    expect(r.h).toBeGreaterThanOrEqual(-EPS);
    expect(r.x).toBeGreaterThanOrEqual(WALL.x - EPS);
    expect(r.y).toBeGreaterThanOrEqual(WALL.y - EPS);
    expect(r.x + r.w).toBeLessThanOrEqual(WALL.x + WALL.w + EPS);
    expect(r.y + r.h).toBeLessThanOrEqual(WALL.y + WALL.h + EPS);
    area += r.w * r.h;
  }
  for (const p of panes.values()) {
    expect(p.w).toBeGreaterThan(0);
    expect(p.h).toBeGreaterThan(0);
  }
  for (let i = 0; i < rects.length; i++) {
    for (let j = i + 1; j < rects.length; j++) {
      const a = rects[i];
      const b = rects[j];
      const ox = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
      const oy = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
      expect(ox <= 1e-6 || oy <= 1e-6).toBe(true);
    }
  }
  expect(Math.abs(area - WALL.w * WALL.h)).toBeLessThan(1e-6 * WALL.w * WALL.h);
}

describe('split', () => {
  const check = (name: string, s: LayoutState, expected: Record<string, Rect>) =>
    it(name, () => {
      expect(checkInvariants(s)).toEqual([]);
      const got = Object.fromEntries([...rectsOf(s).panes].map(([k, v]) => [k, round(v)]));
      expect(got).toEqual(expected);
    });

  const a = single('a');
  check('one pane fills the wall', a, { a: { x: 0, y: 0, w: 1200, h: 800 } });
  check('split right halves the width', split(a, 'a', 'right', 'b'), {
    a: { x: 0, y: 0, w: 600, h: 800 },
    b: { x: 600, y: 0, w: 600, h: 800 },
  });
  check('split down halves the height', split(a, 'a', 'down', 'b'), {
    a: { x: 0, y: 0, w: 1200, h: 400 },
    b: { x: 0, y: 400, w: 1200, h: 400 },
  });
  check('splitting right twice halves the split pane only', split(split(a, 'a', 'right', 'b'), 'b', 'right', 'c'), {
    a: { x: 0, y: 0, w: 600, h: 800 },
    b: { x: 600, y: 0, w: 300, h: 800 },
    c: { x: 900, y: 0, w: 300, h: 800 },
  });
  check('mixed split nests a column in a row', split(split(a, 'a', 'right', 'b'), 'b', 'down', 'c'), {
    a: { x: 0, y: 0, w: 600, h: 800 },
    b: { x: 600, y: 0, w: 600, h: 400 },
    c: { x: 600, y: 400, w: 600, h: 400 },
  });

  it('focuses the new pane', () => {
    expect(split(a, 'a', 'right', 'b').focused).toBe('b');
  });
  it('refuses unknown targets and duplicate ids', () => {
    expect(split(a, 'zz', 'right', 'b')).toBe(a);
    expect(split(a, 'a', 'right', 'a')).toBe(a);
  });
  it('gaps sit between panes', () => {
    const s = split(a, 'a', 'right', 'b');
    const { panes, gaps } = computeLayout(s, WALL, { gap: 6 });
    expect(round(panes.get('a')!)).toEqual({ x: 0, y: 0, w: 597, h: 800 });
    expect(round(panes.get('b')!)).toEqual({ x: 603, y: 0, w: 597, h: 800 });
    expect(gaps).toEqual([{ path: [], index: 0, dir: 'row', rect: { x: 597, y: 0, w: 6, h: 800 } }]);
  });
});

describe('close', () => {
  const three = split(split(single('a'), 'a', 'right', 'b'), 'b', 'down', 'c');
  const cases: Array<[string, LayoutState, string, string[], string | null]> = [
    ['closing a leaf of a nested split collapses it', three, 'c', ['a', 'b'], 'b'],
    ['closing the first pane moves focus to the new first', three, 'a', ['b', 'c'], 'c'],
    ['closing the only pane empties the wall', single('a'), 'a', [], null],
    ['closing an unknown pane is a no-op', three, 'zz', ['a', 'b', 'c'], 'c'],
  ];
  for (const [name, s, id, rest, focused] of cases) {
    it(name, () => {
      const r = close(s, id);
      expect(checkInvariants(r)).toEqual([]);
      expect(leaves(r.root)).toEqual(rest);
      expect(r.focused).toBe(focused);
    });
  }
  it('the neighbour takes the room', () => {
    const s = split(split(single('a'), 'a', 'right', 'b'), 'b', 'right', 'c');
    const r = close(s, 'c');
    expect(round(rectsOf(r).panes.get('b')!)).toEqual({ x: 600, y: 0, w: 600, h: 800 });
  });
  it('flattens a same-direction split after a collapse', () => {
    // row[a, column[b, c]] -> close c -> row[a, b]
    const s = split(split(single('a'), 'a', 'right', 'b'), 'b', 'down', 'c');
    const r = close(s, 'c');
    expect(r.root).toEqual({ kind: 'split', dir: 'row', children: [{ kind: 'leaf', id: 'a' }, { kind: 'leaf', id: 'b' }], weights: [1, 1] });
  });
});

describe('resize', () => {
  const s = split(single('a'), 'a', 'right', 'b');
  const opts = { gap: 0, minSize: 100 };
  const check = (name: string, delta: number, aWidth: number) =>
    it(name, () => {
      const r = resize(s, [], 0, delta, WALL, opts);
      expect(checkInvariants(r)).toEqual([]);
      expect(round(rectsOf(r).panes.get('a')!).w).toBe(aWidth);
      expect(round(rectsOf(r).panes.get('b')!).w).toBe(1200 - aWidth);
    });
  check('drag right grows the left pane', 200, 800);
  check('drag left shrinks it', -150, 450);
  check('stops at the minimum size on the right', 5000, 1100);
  check('stops at the minimum size on the left', -5000, 100);
  it('keeps nested panes at the minimum too', () => {
    // a | (b / (c | (d / e))): dragging the a|… gap far right must not crush d and e.
    let n = split(split(split(split(single('a'), 'a', 'right', 'b'), 'b', 'down', 'c'), 'c', 'right', 'd'), 'd', 'down', 'e');
    n = resize(n, [], 0, -5000, WALL, { gap: 0, minSize: 80 });
    for (const r of rectsOf(n).panes.values()) expect(r.w).toBeGreaterThanOrEqual(80 - 1e-6);
    // The column b / (c | (d / e)) dragged down: d and e keep 80 px each.
    n = resize(n, [1], 0, 5000, WALL, { gap: 0, minSize: 80 });
    for (const r of rectsOf(n).panes.values()) expect(r.h).toBeGreaterThanOrEqual(80 - 1e-6);
    expect(rectsOf(n).panes.get('e')!.h).toBeCloseTo(80, 6);
  });
  it('ignores bad paths and NaN', () => {
    expect(resize(s, [3], 0, 10, WALL, opts)).toBe(s);
    expect(resize(s, [], 1, 10, WALL, opts)).toBe(s);
    expect(resize(s, [], 0, NaN, WALL, opts)).toBe(s);
  });
  it('resizes a nested split by path', () => {
    const n = split(s, 'b', 'down', 'c');
    const gap = rectsOf(n).gaps.find((g) => g.dir === 'column')!;
    const r = resize(n, gap.path, gap.index, 100, WALL, opts);
    expect(round(rectsOf(r).panes.get('b')!)).toEqual({ x: 600, y: 0, w: 600, h: 500 });
  });
});

describe('focus, swap, zoom, minimize', () => {
  // a | b
  //   | c
  const s = focus(split(split(single('a'), 'a', 'right', 'b'), 'b', 'down', 'c'), 'c');
  const dirCases: Array<[string, string, 'left' | 'right' | 'up' | 'down', string]> = [
    ['right from a', 'a', 'right', 'b'],
    ['left from c', 'c', 'left', 'a'],
    ['up from c', 'c', 'up', 'b'],
    ['down from b', 'b', 'down', 'c'],
    ['nothing left of a', 'a', 'left', 'a'],
    ['nothing down from c', 'c', 'down', 'c'],
  ];
  for (const [name, from, dir, to] of dirCases) {
    it(`focus ${name}`, () => {
      expect(focusDirection(focus(s, from), dir, WALL).focused).toBe(to);
    });
  }
  it('next pane cycles in tree order', () => {
    expect(focusNext(focus(s, 'a')).focused).toBe('b');
    expect(focusNext(focus(s, 'c')).focused).toBe('a');
  });
  it('swap exchanges rectangles', () => {
    const r = swap(s, 'a', 'next');
    expect(leaves(r.root)).toEqual(['b', 'a', 'c']);
    expect(swap(s, 'a', 'prev').root).toEqual(swap(s, 'c', 'next').root);
  });
  it('zoom gives the whole wall and toggles back', () => {
    const z = toggleZoom(s, 'b');
    expect([...rectsOf(z).panes.keys()]).toEqual(['b']);
    expect(rectsOf(z).panes.get('b')).toEqual(WALL);
    expect(toggleZoom(z, 'b').zoomed).toBe(null);
    expect(focusNext(z).zoomed).toBe(null);
  });
  it('minimize leaves the tree and restore brings it back', () => {
    const m = minimize(s, 'b');
    expect(leaves(m.root)).toEqual(['a', 'c']);
    expect(m.minimized).toEqual(['b']);
    const r = restore(m, 'b');
    expect(r.minimized).toEqual([]);
    expect(leaves(r.root).sort()).toEqual(['a', 'b', 'c']);
    expect(r.focused).toBe('b');
    expect(checkInvariants(r)).toEqual([]);
  });
  it('restore puts the pane back where it stood, with its dragged size', () => {
    const two = split(single('a'), 'a', 'right', 'b');
    const dragged = resize(two, [], 0, 300, WALL, { gap: 0, minSize: 40 });
    for (const id of ['a', 'b']) {
      const back = restore(minimize(dragged, id), id);
      expect(rectsOf(back).panes).toEqual(rectsOf(dragged).panes);
    }
  });
  it('restore finds the neighbour after a collapse flattened it', () => {
    // a | (b / (c | d)): minimizing b leaves c and d in the root row
    let s0 = split(split(single('a'), 'a', 'right', 'b'), 'b', 'down', 'c');
    s0 = split(s0, 'c', 'right', 'd');
    const m = minimize(s0, 'b');
    expect(m.root).toMatchObject({ kind: 'split', dir: 'row' });
    expect(leaves(m.root)).toEqual(['a', 'c', 'd']);
    expect(sameRects(rectsOf(restore(m, 'b')).panes, rectsOf(s0).panes)).toBe(true);
  });
  it('two panes minimized in turn come back in either order as they were', () => {
    // a | (b / c), dragged: minimize b, then c; restore b, then c (and c, then b).
    let s0 = split(split(single('a'), 'a', 'right', 'b'), 'b', 'down', 'c');
    s0 = resize(s0, [], 0, -200, WALL, { gap: 0, minSize: 40 });
    s0 = resize(s0, [1], 0, 150, WALL, { gap: 0, minSize: 40 });
    const both = minimize(minimize(s0, 'b'), 'c');
    expect(leaves(both.root)).toEqual(['a']);
    const fifo = restore(restore(both, 'b'), 'c');
    expect(sameRects(rectsOf(fifo).panes, rectsOf(s0).panes)).toBe(true);
    const lifo = restore(restore(both, 'c'), 'b');
    expect(sameRects(rectsOf(lifo).panes, rectsOf(s0).panes)).toBe(true);
    expect(checkInvariants(restore(both, 'b'))).toEqual([]);
  });
  it('three panes minimized in turn come back as they were when restored in the same order', () => {
    // (a / d) | (b / c), every gap dragged: minimize a, b, c; restore a, b, c.
    let s0 = split(split(split(single('a'), 'a', 'right', 'b'), 'b', 'down', 'c'), 'a', 'down', 'd');
    s0 = resize(s0, [], 0, -250, WALL, { gap: 0, minSize: 40 });
    s0 = resize(s0, [0], 0, 180, WALL, { gap: 0, minSize: 40 });
    s0 = resize(s0, [1], 0, -200, WALL, { gap: 0, minSize: 40 });
    let m = minimize(minimize(minimize(s0, 'a'), 'b'), 'c');
    expect(leaves(m.root)).toEqual(['d']);
    for (const id of ['a', 'b', 'c']) m = restore(m, id);
    expect(sameRects(rectsOf(m).panes, rectsOf(s0).panes)).toBe(true);
    expect(m.snapshots).toBeUndefined();
  });
  it('restore beside what is left of the neighbour, else beside the focused pane', () => {
    const s0 = split(split(single('a'), 'a', 'down', 'b'), 'b', 'right', 'c');
    const m = close(minimize(s0, 'a'), 'b');
    const r = restore(m, 'a');
    expect(leaves(r.root)).toEqual(['a', 'c']);
    expect(rectsOf(r).panes.get('a')).toEqual({ x: 0, y: 0, w: 1200, h: 400 });
    const gone = restore(close(close(minimize(s0, 'a'), 'b'), 'zz'), 'a');
    expect(checkInvariants(gone)).toEqual([]);
    const lost = { ...minimize(s0, 'a'), homes: {}, snapshots: undefined };
    expect(leaves(restore(lost, 'a').root)).toEqual(['b', 'c', 'a']);
  });
  it('a home follows replace and is dropped on close', () => {
    const s0 = split(single('a'), 'a', 'right', 'b');
    const m = minimize(s0, 'a');
    expect(replace(m, 'b', 'c').homes.a.sibling).toEqual(['c']);
    expect(replace(m, 'a', 'x').homes.x).toEqual(m.homes.a);
    expect(close(m, 'a').homes).toEqual({});
  });
  it('parseLayout drops unsound homes', () => {
    const m = minimize(split(single('a'), 'a', 'right', 'b'), 'a');
    const junk = { ...m, homes: { a: { sibling: [], side: 'left', share: 0.5 }, zz: m.homes.a } };
    expect(parseLayout(JSON.parse(JSON.stringify(junk)))?.homes).toEqual({});
    const home = JSON.stringify(m.homes.a);
    const proto = JSON.parse(`{"root":{"kind":"leaf","id":"b"},"minimized":["__proto__"],"homes":{"__proto__":${home}}}`);
    const parsed = parseLayout(proto)!;
    expect(Object.keys(parsed.homes)).toEqual([]);
    expect(Object.getPrototypeOf(parsed.homes)).toBe(Object.prototype);
  });
  it('the last visible pane cannot be minimized', () => {
    const one = single('a');
    expect(minimize(one, 'a')).toBe(one);
  });
  it('prune drops unknown panes everywhere', () => {
    const m = minimize(s, 'b');
    const p = prune(m, (id) => id !== 'b' && id !== 'a');
    expect(allPanes(p)).toEqual(['c']);
    expect(p.focused).toBe('c');
  });
  it('parseLayout round-trips and refuses junk', () => {
    const m = minimize(s, 'b');
    expect(parseLayout(JSON.parse(JSON.stringify(m)))).toEqual(m);
    expect(parseLayout(null)).toBe(null);
    expect(parseLayout({ root: { kind: 'leaf', id: 'a' }, minimized: ['a'] })).toBe(null);
    expect(parseLayout({ root: { kind: 'split', dir: 'row', children: [], weights: [] } })).toBe(null);
    expect(parseLayout({ root: { kind: 'split', dir: 'row', children: [{ kind: 'leaf', id: 'a' }], weights: [-1] } })).toBe(null);
  });
});

// ---------------------------------------------------------------------------------------
// Property test

type Op =
  | { op: 'split'; pick: number; side: 'right' | 'down' }
  | { op: 'close'; pick: number }
  | { op: 'resize'; pick: number; delta: number }
  | { op: 'swap'; pick: number; next: boolean }
  | { op: 'focusDir'; dir: 'left' | 'right' | 'up' | 'down' }
  | { op: 'focusNext' }
  | { op: 'focus'; pick: number }
  | { op: 'zoom' }
  | { op: 'minimize'; pick: number }
  | { op: 'restore'; pick: number }
  | { op: 'add' }
  | { op: 'replace'; pick: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('split' as const), pick: fc.nat(), side: fc.constantFrom('right' as const, 'down' as const) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('close' as const), pick: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('resize' as const), pick: fc.nat(), delta: fc.double({ min: -2000, max: 2000, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('swap' as const), pick: fc.nat(), next: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('focusDir' as const), dir: fc.constantFrom('left' as const, 'right' as const, 'up' as const, 'down' as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('focusNext' as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('focus' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('zoom' as const) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('minimize' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('restore' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('add' as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('replace' as const), pick: fc.nat() }) },
);

function pickOf<T>(xs: T[], n: number): T | undefined {
  return xs.length ? xs[n % xs.length] : undefined;
}

describe('replace', () => {
  it('puts the new pane in the old one\'s place, with focus and zoom', () => {
    let s = split(single('a'), 'a', 'right', 'b');
    s = toggleZoom(focus(s, 'a'), 'a');
    const r = replace(s, 'a', 'c');
    expect(leaves(r.root)).toEqual(['c', 'b']);
    expect(r.focused).toBe('c');
    expect(r.zoomed).toBe('c');
    expect(rectsOf(r).panes.get('c')).toEqual(rectsOf(s).panes.get('a'));
  });
  it('replaces a minimized pane on the baseboard', () => {
    const s = minimize(split(single('a'), 'a', 'down', 'b'), 'a');
    expect(replace(s, 'a', 'c').minimized).toEqual(['c']);
  });
  it('ignores unknown or duplicate ids', () => {
    const s = split(single('a'), 'a', 'right', 'b');
    expect(replace(s, 'x', 'c')).toBe(s);
    expect(replace(s, 'a', 'b')).toBe(s);
  });
});

describe('property: any sequence of operations keeps the wall tiled', () => {
  for (const gap of [0, 6]) {
    it(`with gap ${gap}`, () => {
      fc.assert(
        fc.property(fc.array(opArb, { maxLength: 60 }), (ops) => {
          let s: LayoutState = single('p0');
          let next = 1;
          const known = new Set(['p0']);
          for (const o of ops) {
            const vis = leaves(s.root);
            switch (o.op) {
              case 'split': {
                const t = pickOf(vis, o.pick);
                if (t) {
                  const id = `p${next++}`;
                  s = split(s, t, o.side, id);
                  known.add(id);
                }
                break;
              }
              case 'close': {
                const t = pickOf(allPanes(s), o.pick);
                if (t) {
                  s = close(s, t);
                  known.delete(t);
                }
                break;
              }
              case 'resize': {
                const g = pickOf(rectsOf(s, gap).gaps, o.pick);
                if (g) {
                  const before = rectsOf(s, gap).panes;
                  s = resize(s, g.path, g.index, o.delta, WALL, { gap, minSize: 40 });
                  // No pane shrinks below the minimum along the gap's axis, nested ones included.
                  const size = (r: Rect) => (g.dir === 'row' ? r.w : r.h);
                  for (const [id, r] of rectsOf(s, gap).panes) {
                    const was = size(before.get(id)!);
                    if (size(r) < was - 1e-6) expect(size(r)).toBeGreaterThanOrEqual(Math.min(40, was) - 1e-6);
                  }
                }
                break;
              }
              case 'swap': {
                const t = pickOf(vis, o.pick);
                if (t) s = swap(s, t, o.next ? 'next' : 'prev');
                break;
              }
              case 'focusDir':
                s = focusDirection(s, o.dir, WALL);
                break;
              case 'focusNext':
                s = focusNext(s);
                break;
              case 'focus': {
                const t = pickOf(vis, o.pick);
                if (t) s = focus(s, t);
                break;
              }
              case 'zoom':
                s = toggleZoom(s);
                break;
              case 'minimize': {
                const t = pickOf(vis, o.pick);
                if (t) s = minimize(s, t);
                break;
              }
              case 'restore': {
                const t = pickOf(s.minimized, o.pick);
                if (t) s = restore(s, t);
                break;
              }
              case 'add': {
                const id = `p${next++}`;
                s = add(s, id);
                known.add(id);
                break;
              }
              case 'replace': {
                const t = pickOf(allPanes(s), o.pick);
                if (t) {
                  const id = `p${next++}`;
                  s = replace(s, t, id);
                  known.delete(t);
                  known.add(id);
                }
                break;
              }
            }
            expect(checkInvariants(s)).toEqual([]);
            // every pane id appears exactly once, and exactly the known ones
            const all = allPanes(s);
            expect(new Set(all).size).toBe(all.length);
            expect([...all].sort()).toEqual([...known].sort());
            for (const m of s.minimized) expect(leaves(s.root)).not.toContain(m);
            assertTiles(s, gap);
            // minimizing the focused pane and restoring it at once gives every pane its rectangle back
            const flat = { ...s, zoomed: null };
            if (flat.focused !== null && leaves(flat.root).length > 1) {
              const back = restore(minimize(flat, flat.focused), flat.focused);
              expect(sameRects(rectsOf(back, gap).panes, rectsOf(flat, gap).panes)).toBe(true);
            }
            // up to three panes minimized, then restored in the same order (the hard order):
            // every pane gets its rectangle back
            const some = leaves(flat.root).slice(0, 3).slice(0, Math.max(0, leaves(flat.root).length - 1));
            if (some.length > 1) {
              let m: LayoutState = flat;
              for (const id of some) m = minimize(m, id);
              for (const id of some) m = restore(m, id);
              expect(sameRects(rectsOf(m, gap).panes, rectsOf(flat, gap).panes)).toBe(true);
              expect(m.snapshots).toEqual(flat.snapshots);
            }
            // survives a save/load
            expect(parseLayout(JSON.parse(JSON.stringify(s)))).toEqual(s);
          }
        }),
        { numRuns: 300 },
      );
    });
  }

  it('empty layout has no rectangles', () => {
    expect(rectsOf(EMPTY_LAYOUT).panes.size).toBe(0);
  });
});
