import { describe, expect, it } from 'vitest';
import { formatDate, formatWeek, inRange, initialMonth, isoWeek, mondayOfWeek, monthGrid, stepMonth } from './picker';

describe('picker calendar', () => {
  it('lays out a month Monday first, six weeks', () => {
    const g = monthGrid(2026, 12); // 1 Dec 2026 is a Tuesday
    expect(g).toHaveLength(42);
    expect(formatDate(g[0])).toBe('2026-11-30');
    expect(g[0].inMonth).toBe(false);
    expect(formatDate(g[1])).toBe('2026-12-01');
    expect(g[1].inMonth).toBe(true);
    expect(g.filter((d) => d.inMonth)).toHaveLength(31);
  });

  it('ISO weeks, also across a year end', () => {
    expect(isoWeek({ year: 2026, month: 12, day: 1 })).toEqual({ year: 2026, week: 49 });
    expect(isoWeek({ year: 2021, month: 1, day: 3 })).toEqual({ year: 2020, week: 53 });
    expect(isoWeek({ year: 2024, month: 12, day: 30 })).toEqual({ year: 2025, week: 1 });
    expect(formatDate(mondayOfWeek(2026, 49))).toBe('2026-11-30');
    expect(formatWeek(2026, 5)).toBe('2026-W05');
  });

  it('opens on the value’s month, else today’s', () => {
    const today = { year: 2026, month: 12, day: 1 };
    expect(initialMonth('2024-02-29', today)).toEqual({ year: 2024, month: 2 });
    expect(initialMonth('2024-02-29T10:00', today)).toEqual({ year: 2024, month: 2 });
    expect(initialMonth('2024-07', today)).toEqual({ year: 2024, month: 7 });
    expect(initialMonth('2021-W01', today)).toEqual({ year: 2021, month: 1 });
    expect(initialMonth('', today)).toEqual({ year: 2026, month: 12 });
  });

  it('steps months across years and checks bounds', () => {
    expect(stepMonth({ year: 2026, month: 12 }, 1)).toEqual({ year: 2027, month: 1 });
    expect(stepMonth({ year: 2026, month: 1 }, -1)).toEqual({ year: 2025, month: 12 });
    expect(inRange('2026-12-01', '2026-11-01', '')).toBe(true);
    expect(inRange('2026-10-01', '2026-11-01', '')).toBe(false);
    expect(inRange('2026-12-02', '', '2026-12-01')).toBe(false);
  });
});
