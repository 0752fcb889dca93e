// The one disposal pattern of the UI (after VS Code's `DisposableStore`): a stateful class
// registers what it owns (listeners, observers, timers, animation frames, children) in a
// store as it takes them, and its `dispose()` is the store's. Pure: no DOM of its own; the
// timer functions are injected so tests drive them with a fake clock.

/** Something that can be released. `dispose()` must be safe to call more than once. */
export interface Disposable {
  dispose(): void;
}

/** Wraps a release function as a `Disposable` that runs it at most once. */
export function toDisposable(release: () => void): Disposable {
  let done = false;
  return {
    dispose() {
      if (done) return;
      done = true;
      release();
    },
  };
}

/** The timer functions a store uses (the global ones by default; a fake clock in tests). */
export interface Clock {
  setTimeout(f: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const GLOBAL_CLOCK: Clock = {
  setTimeout: (f, ms) => setTimeout(f, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

/** A one-shot timer slot: `set` replaces any timer pending in it; `clear` cancels it. */
export interface TimerSlot extends Disposable {
  /** Runs `f` after `ms` milliseconds, cancelling a timer still pending in this slot. Does nothing once the store is disposed. */
  set(f: () => void, ms: number): void;
  /** Cancels the pending timer, if any. Idempotent. */
  clear(): void;
  /** true iff a timer is pending in this slot */
  readonly pending: boolean;
}

/**
 * Owns disposables and disposes them all, once, in reverse order of registration (what was
 * taken last is released first). Idempotent: a second `dispose()` does nothing. Anything
 * added after disposal is disposed at once (it would otherwise leak), and timers are not set.
 * A disposable that throws does not stop the others; the first error is rethrown at the end.
 */
export class DisposableStore implements Disposable {
  private readonly items = new Set<Disposable>();
  private done = false;

  constructor(private readonly clock: Clock = GLOBAL_CLOCK) {}

  /** true iff `dispose()` was called */
  get isDisposed(): boolean {
    return this.done;
  }

  /** Registers `d` (returned, for chaining); disposes it at once if this store is disposed already. */
  add<T extends Disposable>(d: T): T {
    if (this.done) d.dispose();
    else this.items.add(d);
    return d;
  }

  /** Registers a release function (run once, on dispose). */
  defer(release: () => void): Disposable {
    return this.add(toDisposable(release));
  }

  /** Adds `listener` for `type` on `target` and registers its removal. */
  listen<K extends string>(target: EventTarget, type: K, listener: (e: Event) => void, opts?: AddEventListenerOptions): Disposable {
    if (this.done) return toDisposable(() => {});
    target.addEventListener(type, listener, opts);
    return this.defer(() => target.removeEventListener(type, listener, opts));
  }

  /** Runs `f` once after `ms` milliseconds unless the store is disposed first. */
  timeout(f: () => void, ms: number): Disposable {
    const slot = this.timer();
    slot.set(() => {
      this.items.delete(slot);
      f();
    }, ms);
    return slot;
  }

  /** A reusable one-shot timer slot, cleared on dispose (see `TimerSlot`). */
  timer(): TimerSlot {
    const clock = this.clock;
    let handle: unknown = null;
    const slot: TimerSlot = {
      set: (f, ms) => {
        slot.clear();
        if (this.done) return;
        handle = clock.setTimeout(() => {
          handle = null;
          f();
        }, ms);
      },
      clear: () => {
        if (handle === null) return;
        clock.clearTimeout(handle);
        handle = null;
      },
      get pending() {
        return handle !== null;
      },
      dispose: () => slot.clear(),
    };
    return this.add(slot);
  }

  /** Unregisters `d` and disposes it (the caller is done with it before the store is). */
  delete(d: Disposable): void {
    if (this.items.delete(d)) d.dispose();
  }

  /** Disposes everything registered, in reverse order, once. */
  dispose(): void {
    if (this.done) return;
    this.done = true;
    const all = [...this.items].reverse();
    this.items.clear();
    let first: unknown = undefined;
    let failed = false;
    for (const d of all) {
      try {
        d.dispose();
      } catch (e) {
        if (!failed) first = e;
        failed = true;
      }
    }
    if (failed) throw first;
  }
}
