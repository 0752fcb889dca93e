// A screencast pane's JavaScript dialogs as the pane closing sees them (DESIGN §4, protocol
// §8.4 `dialog`): which kind is pending, the user's answers to `beforeunload`, and waiting for
// a dialog to be gone. No DOM, no socket: answers are sent by the caller.
import { DisposableStore } from '../lifecycle/disposable';

export class PageDialogs {
  /** the pending dialog's kind (from the socket), null when none */
  private kind: string | null = null;
  /** waiting for the pending dialog to be gone: each called once */
  private goneWaiters: (() => void)[] = [];
  /** a close waiting for the user's answer to the page's beforeunload: resolves with it */
  private unloadAnswer: ((leave: boolean) => void) | null = null;
  /** answers given to beforeunload dialogs so far, and the last one (the dialog can be answered before the unload call returns) */
  private unloadAnswers = 0;
  private lastUnloadAnswer = false;
  private readonly store = new DisposableStore();

  /** The socket said which dialog is pending (`null`: none; the waiters for that are released). */
  onDialog(kind: string | null): void {
    this.kind = kind;
    if (kind === null) for (const w of this.goneWaiters.splice(0)) w();
  }

  /** The count of beforeunload answers so far: pass it to `leaveAnswer` after asking the page to unload. */
  get answers(): number {
    return this.unloadAnswers;
  }

  /**
   * The user's answer to the beforeunload dialog the unload call `answered` (the count before
   * it) raised: the one already given if it came first, else the next one. true: leave.
   */
  leaveAnswer(answered: number): Promise<boolean> {
    if (this.unloadAnswers !== answered) return Promise.resolve(this.lastUnloadAnswer);
    return new Promise<boolean>((res) => {
      this.unloadAnswer = res;
    });
  }

  /** The user answered the pending dialog (`accept`: OK / Leave). */
  answer(accept: boolean): void {
    if (this.kind !== 'beforeunload') return;
    this.unloadAnswers++;
    this.lastUnloadAnswer = accept;
    const waiting = this.unloadAnswer;
    this.unloadAnswer = null;
    if (waiting) queueMicrotask(() => waiting(accept));
  }

  /** Resolves once no dialog is pending (at once when none is), or after `timeoutMs`. */
  gone(timeoutMs: number): Promise<void> {
    if (this.kind === null || this.store.isDisposed) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        this.store.delete(timer);
        resolve();
      };
      const timer = this.store.timeout(() => {
        this.goneWaiters = this.goneWaiters.filter((w) => w !== done);
        resolve();
      }, timeoutMs);
      this.goneWaiters.push(done);
    });
  }

  /** Cancels the timers; waiters are released. Idempotent. */
  dispose(): void {
    for (const w of this.goneWaiters.splice(0)) w();
    this.store.dispose();
  }
}
