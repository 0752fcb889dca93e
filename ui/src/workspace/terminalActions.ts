// What the terminal panes' menus and find bar ask of their terminal: find, selection and
// clipboard, the last command's output, prompt jumps, and stopping survivors. Routing only:
// the state is the terminal host's (`TerminalHost`) and the pane model's.
import { writeClipboard } from '../clipboard';
import type * as L from '../layout/engine';
import type { PaneModel, Snapshot } from './model';
import type { PaneRuntime } from './PaneRuntime';

export interface TerminalActionsHost {
  readonly snap: Snapshot;
  runtime(id: L.PaneId): PaneRuntime | undefined;
  updatePane(id: L.PaneId, patch: Partial<PaneModel>): void;
  /** gives the keyboard back to the focused pane */
  focusTerminal(): void;
}

export class TerminalActions {
  constructor(private readonly host: TerminalActionsHost) {}

  /** Opens or closes pane `id`'s find bar (closing clears the highlight and refocuses the terminal). */
  setFinding(id: L.PaneId, finding: boolean): void {
    this.host.updatePane(id, { finding });
    if (!finding) {
      this.host.runtime(id)?.host.find('');
      this.host.focusTerminal();
    }
  }

  /** Finds `text` in pane `id`; returns true iff found. */
  find(id: L.PaneId, text: string, backwards = false): boolean {
    return this.host.runtime(id)?.host.find(text, backwards) ?? false;
  }

  /** true iff pane `id`'s terminal has a selection */
  hasSelection(id: L.PaneId): boolean {
    return this.host.runtime(id)?.host.term.hasSelection() ?? false;
  }

  /** Copies pane `id`'s selection to the clipboard. */
  async copy(id: L.PaneId): Promise<void> {
    await this.host.runtime(id)?.host.copySelection();
  }

  /** Pastes the clipboard into pane `id` (sanitized; bracketed when the program asked). */
  async paste(id: L.PaneId): Promise<void> {
    await this.host.runtime(id)?.host.pasteFromClipboard();
  }

  /** Scrolls the focused terminal to its previous (−1) or next (+1) prompt (needs shell integration). */
  jumpPrompt(dir: -1 | 1): void {
    const f = this.host.snap.layout.focused;
    if (f) this.host.runtime(f)?.host.prompts.jump(dir);
  }

  /** The output of pane `id`'s last finished command (needs shell integration), or null. */
  lastOutput(id: L.PaneId): string | null {
    return this.host.runtime(id)?.host.prompts.lastOutput() ?? null;
  }

  /** Copies pane `id`'s last command's output to the clipboard; false if there is none. */
  async copyLastOutput(id: L.PaneId): Promise<boolean> {
    const text = this.lastOutput(id);
    if (text === null) return false;
    await writeClipboard(text);
    return true;
  }

  /** Stops what still runs in exited terminal pane `id`'s session (its banner's "Stop it"). */
  stopSurvivors(id: L.PaneId): void {
    void this.host.runtime(id)?.stopSurvivors();
  }
}
