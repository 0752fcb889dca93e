// The app-side list of URLs a browser pane visited, so back/forward work whether or not the
// page is instrumented by the shim.
//
// Pure: no DOM, no timers.

export class NavHistory {
  private entries: string[] = [];
  private index = -1;
  /** a step asked of the shim and not yet confirmed by a location report */
  private pending: -1 | 1 | 0 = 0;

  /** The current entry, or null before the first navigation. */
  get current(): string | null {
    return this.index >= 0 ? this.entries[this.index] : null;
  }

  /** True iff there is an entry `delta` steps away. */
  canGo(delta: -1 | 1): boolean {
    const t = this.index + delta;
    return t >= 0 && t < this.entries.length;
  }

  /** The entry `delta` steps away, or null. */
  peek(delta: -1 | 1): string | null {
    return this.canGo(delta) ? this.entries[this.index + delta] : null;
  }

  /** A navigation the app started: drops the forward entries, then adds `url` (unless it is the current one). */
  push(url: string): void {
    this.pending = 0;
    this.entries = this.entries.slice(0, this.index + 1);
    if (this.entries[this.index] === url) return;
    this.entries.push(url);
    this.index = this.entries.length - 1;
  }

  /** Moves `delta` steps at once (the app reloads the frame there); returns the URL, or null when there is none. */
  step(delta: -1 | 1): string | null {
    if (!this.canGo(delta)) return null;
    this.pending = 0;
    this.index += delta;
    return this.entries[this.index];
  }

  /** Records that the shim was asked to go `delta` steps; its next location report settles it. */
  expect(delta: -1 | 1): void {
    this.pending = delta;
  }

  /**
   * A location the page reported: the current entry (nothing changes), the entry a pending
   * step leads to (we moved there), or a new navigation inside the page (pushed).
   */
  follow(url: string): void {
    const d = this.pending;
    this.pending = 0;
    if (this.entries[this.index] === url) return;
    if (d !== 0 && this.entries[this.index + d] === url) {
      this.index += d;
      return;
    }
    this.push(url);
  }

  /** The entries and the index (for tests and debugging). */
  snapshot(): { entries: string[]; index: number } {
    return { entries: [...this.entries], index: this.index };
  }
}
