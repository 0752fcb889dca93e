// Reading what the wall starts from: the saved workspace document and the sidecar's
// terminals (protocol §4). A read that fails (an error answer, a request the page's own
// reload interrupted, a sidecar busy starting) is not an empty one: taking it for "nothing
// saved" replaced whole walls by one new pane and saved that over them (issue 22, item 2a).
// So a failed read is asked again, and each failure is reported for the window to show.
import type { TerminalInfo } from '../api/protocol';

/** `GET /api/workspace`'s answer, as the store reads it (doc.ts and restore.ts parse its parts). */
export interface WorkspaceAnswer {
  workspace: unknown;
  revision: number;
  restore?: unknown;
  problem?: unknown;
}

/** What the wall starts from, read together. */
export interface SavedState {
  ws: WorkspaceAnswer;
  terms: TerminalInfo[];
}

/** The first wait before a failed read is asked again, in ms (doubling up to `READ_RETRY_MAX_MS`). */
export const READ_RETRY_FIRST_MS = 200;
/** The longest wait between two attempts, in ms. */
export const READ_RETRY_MAX_MS = 3_000;

/** How `readSavedState` waits and reports. */
export interface ReadHooks {
  /** resolves after `ms` milliseconds (a timer in the app, a fake in tests) */
  wait: (ms: number) => Promise<void>;
  /** told of each failed attempt (1 for the first), before the wait that follows it */
  onFailure: (error: unknown, attempt: number) => void;
}

/**
 * Reads the saved state with `read` until one attempt succeeds: never gives up and never
 * resolves with anything but what `read` returned, so a failure cannot become an empty wall.
 * Waits `READ_RETRY_FIRST_MS`, doubling up to `READ_RETRY_MAX_MS`, between attempts.
 */
export async function readSavedState(read: () => Promise<SavedState>, hooks: ReadHooks): Promise<SavedState> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (e) {
      hooks.onFailure(e, attempt);
      await hooks.wait(Math.min(READ_RETRY_MAX_MS, READ_RETRY_FIRST_MS * 2 ** Math.min(attempt - 1, 16)));
    }
  }
}
