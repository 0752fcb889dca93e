// Where the keyboard goes: the focused pane's terminal or browser body gets it at once when
// the pane is already shown (keys typed right after a focus change must land there), and
// again once React has rendered the change. The DOM is reached through the host (tests pass
// fakes).
import type * as L from '../layout/engine';
import { DisposableStore } from '../lifecycle/disposable';

/** A pane body that can take the keyboard. */
export interface Focusable {
  readonly element: { readonly isConnected: boolean; contains(other: unknown): boolean };
  focus(): void;
}

export interface FocusHost {
  /** the pane focused in the layout, or null */
  focused(): L.PaneId | null;
  /** the strip's name field is open (it keeps the keyboard) */
  renaming(): boolean;
  /** pane `id`'s terminal host, or its browser pane's renderer (undefined: neither) */
  target(id: L.PaneId): { focusable: Focusable; terminal: boolean } | undefined;
  /** the element holding the keyboard now */
  activeElement(): unknown;
}

export class FocusSync {
  private readonly store = new DisposableStore();
  private readonly timer = this.store.timer();

  constructor(private readonly host: FocusHost) {}

  /**
   * Gives the keyboard to pane `id` unless it already has it. `connectedOnly`: skip a pane not
   * in the DOM yet. A terminal is focused only if the keyboard is not inside it already (its
   * own helper textarea has it); a browser pane's body whenever it is connected.
   */
  focusPane(id: L.PaneId, connectedOnly: boolean): void {
    const t = this.host.target(id);
    if (!t) return;
    const el = t.focusable.element;
    if (t.terminal) {
      if (connectedOnly && !el.isConnected) return;
      if (!el.contains(this.host.activeElement())) t.focusable.focus();
    } else if (el.isConnected) t.focusable.focus();
  }

  /**
   * Gives the keyboard to the focused pane after the DOM settled (the next task). It reads the
   * focused pane when it runs (not when scheduled), so focus events cannot ping-pong; calls
   * while one is pending share it.
   */
  schedule(): void {
    if (this.timer.pending) return;
    this.timer.set(() => {
      if (this.host.renaming()) return;
      const f = this.host.focused();
      if (f) this.focusPane(f, false);
    }, 0);
  }

  /** Cancels a pending sync. Idempotent. */
  dispose(): void {
    this.store.dispose();
  }
}
