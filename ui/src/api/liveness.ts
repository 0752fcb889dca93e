// Whether the sidecar (the Porthole process this page talks to) is still there.
//
// A dropped socket alone can't tell a hiccup from a stop: panes reconnect by themselves.
// When one drops, the store calls `suspect()`, and this asks `GET /api/health` until it
// answers. While it doesn't, the app shows one "Porthole has stopped" state instead of
// every pane offering its own way out (Relaunch, reconnecting…).
import { DisposableStore } from '../lifecycle/disposable';

/**
 * `up`: the sidecar answers with this page's session. `stopped`: nothing answers (the
 * process is gone). `signed-out`: something answers 401: a new sidecar on the same port
 * (a restart gives a new token), so this page must be opened again from its new URL.
 */
export type Liveness = 'up' | 'stopped' | 'signed-out';

/** Asks the sidecar once. Never rejects: a network error is `stopped`. */
export async function probeHealth(): Promise<Liveness> {
  try {
    const res = await fetch('/api/health', { credentials: 'same-origin', cache: 'no-store' });
    // Any other answer (even a 5xx) comes from a live process with our session.
    return res.status === 401 ? 'signed-out' : 'up';
  } catch {
    return 'stopped';
  }
}

export interface LivenessOptions {
  /** first delay between probes while not `up`, in ms (doubles up to `maxDelayMs`) */
  minDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * Probes while suspected, reporting each change of state through `onChange`. Stops
 * probing once a probe says `up`; keeps probing (backing off to `maxDelayMs`) otherwise,
 * so a sidecar that comes back clears the state by itself.
 */
export class LivenessWatch {
  private state: Liveness = 'up';
  private probing = false;
  private readonly store = new DisposableStore();
  /** the next probe while not up */
  private readonly timer = this.store.timer();
  private heartbeat = false;

  constructor(
    private readonly probe: () => Promise<Liveness>,
    private readonly onChange: (state: Liveness) => void,
    private readonly opts: LivenessOptions = {},
  ) {}

  get current(): Liveness {
    return this.state;
  }

  /** Something dropped: probe now (unless a probe is already under way or waiting). */
  suspect(): void {
    if (this.store.isDisposed || this.probing || this.timer.pending) return;
    void this.run(0);
  }

  /**
   * Also probes every `everyMs` while `visible()` (a wall of iframe panes has no socket to
   * drop, and a clean shutdown ends terminals with an exit, not a drop). Idempotent.
   */
  watch(everyMs: number, visible: () => boolean): void {
    if (this.store.isDisposed || this.heartbeat) return;
    this.heartbeat = true;
    const h = setInterval(() => {
      if (visible()) this.suspect();
    }, everyMs);
    this.store.defer(() => clearInterval(h));
  }

  /** Stops probing and the heartbeat. Idempotent. */
  dispose(): void {
    this.store.dispose();
  }

  private async run(attempt: number): Promise<void> {
    this.probing = true;
    const next = await this.probe();
    this.probing = false;
    if (this.store.isDisposed) return;
    if (next !== this.state) {
      this.state = next;
      this.onChange(next);
    }
    if (next === 'up') return;
    const min = this.opts.minDelayMs ?? 1000;
    const max = this.opts.maxDelayMs ?? 5000;
    this.timer.set(() => void this.run(attempt + 1), Math.min(max, min * 2 ** attempt));
  }
}
