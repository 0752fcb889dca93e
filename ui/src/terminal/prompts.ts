// Prompt marks in a terminal's buffer, from the shell integration's OSC 133 (protocol §5.3):
// where each prompt starts, where its command's output starts and ends, and its exit status.
// They give prompt navigation (prefix + [ / ]), "copy last command's output", and a mark on
// the prompt of a command that failed.
//
// The marks are xterm markers, so they move with the buffer and vanish with the lines that
// scroll out of the scrollback. Replayed scrollback carries its marks too, so a reload keeps
// them.
import type { IDisposable, IMarker, Terminal } from '@xterm/xterm';

/** One prompt and what followed it. */
export interface PromptMark {
  /** the prompt's first line (OSC 133 A) */
  prompt: IMarker;
  /** where the command's output starts (OSC 133 C), once it ran */
  output: IMarker | null;
  /** where the command ended (OSC 133 D) */
  end: IMarker | null;
  /** the exit status D reported */
  exit: number | null;
}

/** The most prompts remembered per terminal (older ones are forgotten). */
export const MAX_PROMPTS = 2000;

/** The colour of a failed command's mark (the left edge of its prompt line). */
const FAILED_COLOR = '#e5534b';

/**
 * Parses an OSC 133 payload (`A`, `B`, `C[;…]`, `D[;status]`) into its kind and, for D, the
 * exit status (null when absent or not an integer).
 */
export function parseMark(data: string): { kind: 'A' | 'B' | 'C' | 'D'; exit: number | null } | null {
  const [kind, arg] = data.split(';');
  if (kind !== 'A' && kind !== 'B' && kind !== 'C' && kind !== 'D') return null;
  const exit = kind === 'D' && arg !== undefined && /^-?\d+$/.test(arg.trim()) ? Number(arg.trim()) : null;
  return { kind, exit };
}

/**
 * The line to scroll to for the previous (`dir` −1) or next (+1) prompt, from viewport top
 * `top` (buffer line), given the prompts' buffer lines in order; null when there is none.
 */
export function jumpTarget(lines: number[], top: number, dir: -1 | 1): number | null {
  if (dir < 0) {
    const before = lines.filter((l) => l < top);
    return before.length ? before[before.length - 1] : null;
  }
  const after = lines.find((l) => l > top);
  return after ?? null;
}

/** Follows OSC 133 in one terminal. */
export class PromptMarks {
  private marks: PromptMark[] = [];
  private readonly sub: IDisposable;

  constructor(private readonly term: Terminal) {
    // Returns false: xterm has no handler of its own for 133, and nothing else must be skipped.
    this.sub = term.parser.registerOscHandler(133, (data) => {
      this.onMark(data);
      return false;
    });
  }

  private onMark(data: string) {
    const m = parseMark(data);
    if (!m) return;
    const last = this.marks[this.marks.length - 1];
    if (m.kind === 'A') {
      this.marks.push({ prompt: this.term.registerMarker(0), output: null, end: null, exit: null });
      this.prune();
    } else if (m.kind === 'C' && last && !last.output) {
      last.output = this.term.registerMarker(0);
    } else if (m.kind === 'D' && last && !last.end) {
      last.end = this.term.registerMarker(0);
      last.exit = m.exit;
      if (m.exit !== null && m.exit !== 0 && !last.prompt.isDisposed) this.markFailed(last.prompt);
    }
  }

  private markFailed(marker: IMarker) {
    const d = this.term.registerDecoration({
      marker,
      width: 1,
      overviewRulerOptions: { color: FAILED_COLOR, position: 'left' },
    });
    d?.onRender((el) => {
      el.classList.add('prompt-failed');
      el.title = 'This command failed';
    });
  }

  private prune() {
    this.marks = this.marks.filter((m) => !m.prompt.isDisposed);
    if (this.marks.length > MAX_PROMPTS) this.marks.splice(0, this.marks.length - MAX_PROMPTS);
  }

  /** The prompts still in the buffer, oldest first. */
  get prompts(): PromptMark[] {
    return this.marks.filter((m) => !m.prompt.isDisposed);
  }

  /** Scrolls the previous (−1) or next (+1) prompt to the top of the viewport; false if there is none. */
  jump(dir: -1 | 1): boolean {
    const top = this.term.buffer.active.viewportY;
    const target = jumpTarget(
      this.prompts.map((m) => m.prompt.line),
      top,
      dir,
    );
    if (target === null) {
      // Past the last prompt: the bottom, as a shell user expects.
      if (dir > 0) this.term.scrollToBottom();
      return false;
    }
    this.term.scrollToLine(target);
    return true;
  }

  /** The output of the last command that finished (OSC 133 C to D), as text; null if none. */
  lastOutput(): string | null {
    const done = this.prompts.filter((m) => m.output && m.end && !m.output.isDisposed && !m.end.isDisposed);
    const m = done[done.length - 1];
    if (!m?.output || !m.end) return null;
    const buf = this.term.buffer.active;
    let text = '';
    for (let y = m.output.line; y < m.end.line; y++) {
      const line = buf.getLine(y);
      if (!line) break;
      // A wrapped line continues the previous one: no newline between them.
      if (y > m.output.line && !line.isWrapped) text += '\n';
      text += line.translateToString(true);
    }
    return text.replace(/\n+$/, '');
  }

  dispose() {
    this.sub.dispose();
    this.marks = [];
  }
}
