// Small text helpers for a remote link's state as the strip shows it.

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

/** `14:05:09` in local time (`since` of a link, Unix ms). */
export function shortTime(ms: number): string {
  const d = new Date(ms);
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
}
