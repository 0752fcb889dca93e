import { describe, expect, it } from 'vitest';
import { Drivers, parseDrivers } from './drivers';

describe('drivers', () => {
  it('parses a map of browser handles to terminal handles, or nothing', () => {
    expect(parseDrivers({ b1: 't3', b2: 't1' })).toEqual({ b1: 't3', b2: 't1' });
    expect(parseDrivers({})).toEqual({});
    expect(parseDrivers({ t1: 't3' })).toBeNull();
    expect(parseDrivers({ b1: 'b2' })).toBeNull();
    expect(parseDrivers({ b1: 3 })).toBeNull();
    expect(parseDrivers(['b1'])).toBeNull();
    expect(parseDrivers(null)).toBeNull();
  });

  it('tells subscribers and answers who drives a pane', () => {
    const d = new Drivers();
    let calls = 0;
    const off = d.subscribe(() => calls++);
    const before = d.getSnapshot();
    d.set({ b1: 't2' });
    expect(calls).toBe(1);
    expect(d.getSnapshot()).not.toBe(before);
    expect(d.driverOf('b1')).toBe('t2');
    expect(d.driverOf('b2')).toBeNull();
    expect(d.driverOf(null)).toBeNull();
    off();
    d.set({});
    expect(calls).toBe(1);
  });
});
