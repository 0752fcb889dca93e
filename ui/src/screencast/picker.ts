// Calendar arithmetic of the pane's own date/month/week pickers (the page's native pickers
// never show in frames, so the pane draws them). Values are spelled as HTML spells them
// (HTML §2.3.5 dates and times): `YYYY-MM-DD`, `YYYY-MM`, `YYYY-Www`, months 1-based.

/** A calendar day; `month` is 1..=12. */
export interface Day {
  year: number;
  month: number;
  day: number;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** `YYYY-MM-DD` of a day. */
export function formatDate(d: Day): string {
  return `${pad(d.year, 4)}-${pad(d.month)}-${pad(d.day)}`;
}

/** `YYYY-MM` of a month. */
export function formatMonth(year: number, month: number): string {
  return `${pad(year, 4)}-${pad(month)}`;
}

/** `YYYY-Www` of an ISO week. */
export function formatWeek(year: number, week: number): string {
  return `${pad(year, 4)}-W${pad(week)}`;
}

function utc(d: Day): Date {
  const t = new Date(0);
  t.setUTCFullYear(d.year, d.month - 1, d.day);
  return t;
}

function dayOf(t: Date): Day {
  return { year: t.getUTCFullYear(), month: t.getUTCMonth() + 1, day: t.getUTCDate() };
}

/** The day `n` days after `d` (negative: before). */
export function addDays(d: Day, n: number): Day {
  const t = utc(d);
  t.setUTCDate(t.getUTCDate() + n);
  return dayOf(t);
}

/** ISO 8601 week of a day: the week (Monday first) holding that year's first Thursday is week 1. */
export function isoWeek(d: Day): { year: number; week: number } {
  const t = utc(d);
  const dow = (t.getUTCDay() + 6) % 7; // Monday 0
  const thursday = addDays(d, 3 - dow);
  const jan1 = utc({ year: thursday.year, month: 1, day: 1 });
  const week = Math.floor((utc(thursday).getTime() - jan1.getTime()) / 86_400_000 / 7) + 1;
  return { year: thursday.year, week };
}

/** Monday of ISO week `week` of `year`. */
export function mondayOfWeek(year: number, week: number): Day {
  const jan4: Day = { year, month: 1, day: 4 };
  const dow = (utc(jan4).getUTCDay() + 6) % 7;
  return addDays(jan4, -dow + (week - 1) * 7);
}

/**
 * The 6 weeks (Monday first) shown for `month` of `year`: 42 days from the Monday on or
 * before the 1st, each with whether it is in the month.
 */
export function monthGrid(year: number, month: number): (Day & { inMonth: boolean })[] {
  const first: Day = { year, month, day: 1 };
  const start = addDays(first, -((utc(first).getUTCDay() + 6) % 7));
  return Array.from({ length: 42 }, (_, i) => {
    const d = addDays(start, i);
    return { ...d, inMonth: d.month === month && d.year === year };
  });
}

/** The month a picker opens on for a `value` of its type (today's when empty or unreadable). */
export function initialMonth(value: string, today: Day): { year: number; month: number } {
  let m = /^(\d{4,6})-(\d{2})(?:-(\d{2}))?/.exec(value);
  if (m) return { year: Number(m[1]), month: Math.min(12, Math.max(1, Number(m[2]))) };
  m = /^(\d{4,6})-W(\d{2})$/.exec(value);
  if (m) {
    const d = mondayOfWeek(Number(m[1]), Number(m[2]));
    return { year: d.year, month: d.month };
  }
  return { year: today.year, month: today.month };
}

/**
 * True iff `v` is within [min, max] of an input whose values all have the same format
 * (an empty bound is open). Same-format values with 4-digit years compare as strings.
 */
export function inRange(v: string, min: string, max: string): boolean {
  return (!min || v >= min) && (!max || v <= max);
}

/** The month after (`+1`) or before (`-1`) a month. */
export function stepMonth(ym: { year: number; month: number }, by: 1 | -1): { year: number; month: number } {
  const i = ym.year * 12 + (ym.month - 1) + by;
  return { year: Math.floor(i / 12), month: (i % 12) + 1 };
}
