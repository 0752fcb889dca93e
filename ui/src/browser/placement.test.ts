import { describe, expect, it } from 'vitest';
import { type LayoutState, type Rect, minimize, single, split, toggleZoom } from '../layout/engine';
import { type PaneFacts, type Placement, decidePlacement } from './placement';

const WIDE: Rect = { x: 0, y: 0, w: 1200, h: 800 };
const TALL: Rect = { x: 0, y: 0, w: 600, h: 900 };

const T = (untouched = false): PaneFacts => ({ kind: 'terminal', untouched });
const B: PaneFacts = { kind: 'browser', untouched: false };

// a | b side by side on a wide wall: each half is 600×800 (taller than wide)
const twoCols = split(single('a'), 'a', 'right', 'b');
// a over b on a wide wall: each half is 1200×400 (wider than tall)
const twoRows = split(single('a'), 'a', 'down', 'b');

describe('decidePlacement', () => {
  const cases: Array<[string, LayoutState, string | null, Rect, Record<string, PaneFacts>, Placement | null]> = [
    ['touched terminal on a wide wall: split right', single('a'), 'a', WIDE, { a: T() }, { kind: 'split', target: 'a', side: 'right' }],
    ['touched terminal on a tall wall: split down', single('a'), 'a', TALL, { a: T() }, { kind: 'split', target: 'a', side: 'down' }],
    ['untouched terminal: replaced', single('a'), 'a', WIDE, { a: T(true) }, { kind: 'replace', target: 'a' }],
    ['browser: never replaced', single('a'), 'a', WIDE, { a: B }, { kind: 'split', target: 'a', side: 'right' }],
    ['browser marked untouched is still never replaced', single('a'), 'a', WIDE, { a: { kind: 'browser', untouched: true } }, { kind: 'split', target: 'a', side: 'right' }],
    ['half of two columns is tall: split down', twoCols, 'b', WIDE, { a: T(), b: T() }, { kind: 'split', target: 'b', side: 'down' }],
    ['half of two rows is wide: split right', twoRows, 'a', WIDE, { a: B, b: T() }, { kind: 'split', target: 'a', side: 'right' }],
    ['a square pane splits down', single('a'), 'a', { x: 0, y: 0, w: 500, h: 500 }, { a: T() }, { kind: 'split', target: 'a', side: 'down' }],
    ['zoom is ignored: the pane\'s own rectangle decides', toggleZoom(twoCols, 'a'), 'a', WIDE, { a: T() }, { kind: 'split', target: 'a', side: 'down' }],
    ['unknown facts: split', single('a'), 'a', WIDE, {}, { kind: 'split', target: 'a', side: 'right' }],
    ['no reference pane', single('a'), null, WIDE, { a: T(true) }, null],
    ['a minimized reference pane', minimize(twoCols, 'b'), 'b', WIDE, { a: T(), b: T(true) }, null],
  ];
  for (const [name, layout, ref, wall, facts, want] of cases) {
    it(name, () => expect(decidePlacement(layout, ref, wall, (id) => facts[id])).toEqual(want));
  }
});
