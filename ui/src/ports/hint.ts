// The first-time hint beside a terminal's listening-port chip (issue 22, item 15): newcomers
// did not know that a port was listening nor that right-clicking the terminal opens it. It is
// shown until dismissed or until its advice was used once (a right-click on a terminal, a
// click on the chip), and that is remembered in the page's storage, so reloads keep it gone.

/** The storage key remembering that the hint was dismissed or used. */
export const LISTENING_HINT_KEY = 'porthole.hint.listening-port';

/** The one-line hint, for the chip of port `port`. */
export function listeningHintText(port: number): string {
  return `A server is listening on :${port}. Right-click the terminal (or click the chip) to open it in a browser pane.`;
}

/** The part of `Storage` the hint needs (`localStorage` in the app, a map in tests). */
export interface HintStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/**
 * Whether the listening-port hint is still to be shown: one owner for every pane, read from
 * and written to `storage` (a storage that throws, as a locked-down one can, counts as
 * "not done" and keeps the state for this page only). `done()` is idempotent.
 */
export class ListeningHint {
  private isDone: boolean;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly storage: HintStorage | null) {
    let stored: string | null = null;
    try {
      stored = storage?.getItem(LISTENING_HINT_KEY) ?? null;
    } catch {
      stored = null;
    }
    this.isDone = stored === 'done';
  }

  /** True if and only if the hint was neither dismissed nor used. */
  get pending(): boolean {
    return !this.isDone;
  }

  /** The hint was dismissed, or its advice used: never show it again. */
  done(): void {
    if (this.isDone) return;
    this.isDone = true;
    try {
      this.storage?.setItem(LISTENING_HINT_KEY, 'done');
    } catch {
      // Not remembered past this page; nothing else to do.
    }
    for (const l of [...this.listeners]) l();
  }

  /** Subscribes to changes of `pending`; returns the unsubscribe function. */
  subscribe = (l: () => void): (() => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };
}

function pageStorage(): HintStorage | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage;
  } catch {
    return null;
  }
}

/** The app's instance. */
export const listeningHint = new ListeningHint(pageStorage());
