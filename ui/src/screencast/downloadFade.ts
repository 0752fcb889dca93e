// When the downloads shelf lets go of a row (issue #22 item 9): a finished download fades
// away on its own so that the shelf stops covering the page, as Chrome's download bubble
// does; one that failed stays until dismissed (it needs reading), and one the user touched
// ("Show in folder") or is pointing at stays while that lasts. Pure: the clock is a parameter.
import type { Download } from '../api/protocol';

/** How long a finished (completed or cancelled) row stays, in ms, counted from when it finished or the pointer left the shelf. */
export const DOWNLOAD_FADE_AFTER_MS = 8000;
/** How long the fade itself lasts before the row is gone, in ms (the CSS transition). */
export const DOWNLOAD_FADE_MS = 500;

/** What the shelf remembers per row between renders. */
export interface FadeClock {
  /** row id → ms (the caller's clock) at which its countdown started */
  since: Map<string, number>;
  /** rows the user acted on: they stay until dismissed */
  pinned: Set<string>;
}

/** A fresh clock: nothing finished yet, nothing pinned. */
export function newFadeClock(): FadeClock {
  return { since: new Map(), pinned: new Set() };
}

function fades(d: Download): boolean {
  return d.state === 'completed' || d.state === 'canceled';
}

/**
 * Advances `clock` to `now` for the rows `downloads` while the pointer is (`hovered`) or is
 * not over the shelf, and returns the ids whose time is up (`fade`) and the earliest `now`
 * at which another one will be (`nextAt`, null when none is counting down). A hovered shelf
 * restarts every countdown: the user is reading it.
 */
export function fadePlan(clock: FadeClock, downloads: readonly Download[], hovered: boolean, now: number): { fade: string[]; nextAt: number | null } {
  const live = new Set(downloads.map((d) => d.id));
  for (const id of [...clock.since.keys()]) if (!live.has(id)) clock.since.delete(id);
  const fade: string[] = [];
  let nextAt: number | null = null;
  for (const d of downloads) {
    if (!fades(d) || clock.pinned.has(d.id)) {
      clock.since.delete(d.id);
      continue;
    }
    if (hovered || !clock.since.has(d.id)) clock.since.set(d.id, now);
    if (hovered) continue;
    const at = clock.since.get(d.id)! + DOWNLOAD_FADE_AFTER_MS;
    if (at <= now) fade.push(d.id);
    else nextAt = nextAt === null ? at : Math.min(nextAt, at);
  }
  return { fade, nextAt };
}
