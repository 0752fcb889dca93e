import { describe, expect, it } from 'vitest';
import { menuPosition } from './menu';

describe('menuPosition', () => {
  const check = (args: [number, number, number, number, number, number], want: { left: number; top: number }) =>
    it(`${args.join(',')} → ${want.left},${want.top}`, () => expect(menuPosition(...args)).toEqual(want));
  // Fits: at the pointer.
  check([10, 20, 180, 150, 600, 400], { left: 10, top: 20 });
  // Near the bottom: moved up so its last item is inside the pane.
  check([10, 390, 180, 150, 600, 400], { left: 10, top: 250 });
  // Near the right edge: moved left.
  check([550, 20, 180, 150, 600, 400], { left: 420, top: 20 });
  // Taller than the pane: its top stays visible.
  check([10, 50, 180, 500, 600, 400], { left: 10, top: 0 });
});
