import { describe, expect, it } from 'vitest';
import { initialFocus, moveInList } from './popup';

describe('select list keyboard', () => {
  const en = [true, false, true, true, false];
  it('opens on the selected option, or the first enabled one', () => {
    expect(initialFocus(en, 2)).toBe(2);
    expect(initialFocus(en, 1)).toBe(0);
    expect(initialFocus(en, -1)).toBe(0);
    expect(initialFocus([false, false], 0)).toBeNull();
  });
  it('arrows skip disabled options and stop at the ends', () => {
    expect(moveInList(en, 0, 'ArrowDown')).toBe(2);
    expect(moveInList(en, 2, 'ArrowDown')).toBe(3);
    expect(moveInList(en, 3, 'ArrowDown')).toBe(3);
    expect(moveInList(en, 2, 'ArrowUp')).toBe(0);
    expect(moveInList(en, 0, 'ArrowUp')).toBe(0);
    expect(moveInList(en, -1, 'ArrowDown')).toBe(0);
    expect(moveInList(en, -1, 'ArrowUp')).toBe(3);
  });
  it('Home and End go to the first and last enabled option; other keys do nothing', () => {
    expect(moveInList(en, 2, 'Home')).toBe(0);
    expect(moveInList(en, 0, 'End')).toBe(3);
    expect(moveInList(en, 0, 'a')).toBeNull();
    expect(moveInList([false], 0, 'ArrowDown')).toBeNull();
  });
});
