// Whether the page in a frame is instrumented (carries the proxy's shim), judged from the
// frame's load events and the shim's `loaded` location reports.
//
// Pure: the caller passes the time (ms, any monotonic clock) and runs the timer.

/** A load with no `loaded` report within this long after it marks the page uninstrumented. */
export const INSTRUMENTED_WAIT_MS = 1000;
/** A `loaded` report this long before the load event still counts for that load (DOMContentLoaded precedes load). */
export const EARLY_REPORT_MS = 250;

export type Verdict = 'instrumented' | 'uninstrumented';

export class InstrumentationJudge {
  private lastReportAt = -Infinity;
  /** the load awaiting a report, if any */
  private pendingLoadAt: number | null = null;

  /** True iff a load is waiting for its verdict. */
  get waiting(): boolean {
    return this.pendingLoadAt !== null;
  }

  /** The app pointed the frame at a new source: reports from the page being left no longer count. */
  newSource(): void {
    this.lastReportAt = -Infinity;
    this.pendingLoadAt = null;
  }

  /** A `loaded: true` location report arrived. */
  report(now: number): Verdict {
    this.lastReportAt = now;
    this.pendingLoadAt = null;
    return 'instrumented';
  }

  /**
   * The frame fired `load`. Returns the verdict when it is already known, else null: then
   * call `check` once `INSTRUMENTED_WAIT_MS` have passed.
   */
  load(now: number): Verdict | null {
    if (this.lastReportAt >= now - EARLY_REPORT_MS) {
      this.pendingLoadAt = null;
      return 'instrumented';
    }
    this.pendingLoadAt = now;
    return null;
  }

  /** The wait after a load ended: 'uninstrumented' when no report came for it, else null (nothing to say). */
  check(now: number): Verdict | null {
    const at = this.pendingLoadAt;
    if (at === null || now < at + INSTRUMENTED_WAIT_MS) return null;
    this.pendingLoadAt = null;
    return this.lastReportAt >= at - EARLY_REPORT_MS ? 'instrumented' : 'uninstrumented';
  }
}
