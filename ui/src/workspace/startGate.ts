// Which terminal panes connect first (issue 27, restore of many panes). A restored wall mounts
// every pane of every workspace at once; the panes on screen must not queue behind the hidden
// ones for the browser's six HTTP connections to the sidecar, its one-at-a-time WebSocket
// handshakes and the main thread. So a pane on screen starts at once and says when it has
// drawn its first output; a hidden pane's start waits until no pane on screen is still
// starting (or a bound passed), then runs. Hidden panes still start on their own: their
// terminals run and report attention while their workspace stays hidden.

/** Schedules `fn` after `ms` milliseconds; returns a function that cancels it. */
export type Schedule = (fn: () => void, ms: number) => () => void;

const realSchedule: Schedule = (fn, ms) => {
  const h = setTimeout(fn, ms);
  return () => clearTimeout(h);
};

/** A waiting start, as `StartGate.defer` hands it back. */
export interface DeferredStart {
  /** Runs the start now (the pane was shown) unless it ran already. */
  now(): void;
  /** Drops the start (the pane was disposed). */
  cancel(): void;
}

/** How long a hidden pane's start waits at most for the panes on screen, in ms. */
export const START_GATE_BOUND_MS = 2000;

/**
 * Holds hidden panes' starts back while panes on screen are starting. The check runs in a
 * later task, so panes mounted in the same React commit as the hidden ones count whatever
 * their order.
 */
export class StartGate {
  private starting = 0;
  private waiting = new Set<() => void>();
  private cancelCheck: (() => void) | null = null;
  private cancelBound: (() => void) | null = null;

  constructor(
    private readonly boundMs = START_GATE_BOUND_MS,
    private readonly schedule: Schedule = realSchedule,
  ) {}

  /**
   * A pane on screen starts now. Returns the function to call once it has drawn its first
   * output, failed or gone (later calls are no-ops); after the bound it counts as started
   * anyway (a program that prints nothing holds nobody back for long).
   */
  begin(): () => void {
    this.starting++;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      cancel();
      this.starting--;
      if (this.starting === 0) this.check();
    };
    const cancel = this.schedule(finish, this.boundMs);
    return finish;
  }

  /** Runs `start` once no pane on screen is starting, or after the bound at most. */
  defer(start: () => void): DeferredStart {
    let ran = false;
    const run = () => {
      if (ran) return;
      ran = true;
      this.waiting.delete(run);
      start();
    };
    this.waiting.add(run);
    this.check();
    if (!this.cancelBound) this.cancelBound = this.schedule(() => ((this.cancelBound = null), this.release()), this.boundMs);
    return {
      now: run,
      cancel: () => {
        ran = true;
        this.waiting.delete(run);
      },
    };
  }

  /** How many starts wait (for tests and tools). */
  get waitingCount(): number {
    return this.waiting.size;
  }

  /** Releases the waiting starts in a later task if no pane on screen is starting by then. */
  private check() {
    if (this.cancelCheck || this.waiting.size === 0) return;
    this.cancelCheck = this.schedule(() => {
      this.cancelCheck = null;
      if (this.starting === 0) this.release();
    }, 0);
  }

  private release() {
    const all = [...this.waiting];
    this.waiting.clear();
    if (this.cancelBound) this.cancelBound(), (this.cancelBound = null);
    for (const run of all) run();
  }
}
