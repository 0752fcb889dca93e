// Session restore (DESIGN §14, protocol §4 `GET /api/workspace`): after a sidecar restart the
// saved wall comes back. A terminal pane whose terminal is gone but which the saved session
// describes gets a new shell in the saved directory, with the saved output written into its
// xterm (locally, never into the new PTY) above a "restored" divider; browser panes come back
// at their URL, render mode and viewport, popped-out ones as screencasts. Running programs do
// not survive: the divider names the command that was running.
//
// The store asks a `RestorePlan` about each saved pane while it loads the document; the
// session file's problem (a corrupt file moved aside) is held here for its banner.
import { TERMINAL_ID_RE } from '../api/protocol';

/** What the sidecar kept of a terminal (protocol §4 `TerminalRecord`). */
export interface TerminalRecord {
  /** its last working directory */
  cwd: string;
  /** argv as started (`["-bash"]` for a login shell) */
  command: string[];
  /** the command line running when it was saved, when shell integration reported one */
  running: string | null;
  /** the end of its output: plain text lines joined with `\n` */
  scrollback: string;
}

/** Why the saved session was not restored (protocol §4 `problem`). */
export interface SessionProblem {
  file: string;
  /** where the bad file was moved, or null when moving it failed too */
  movedTo: string | null;
  message: string;
}

/** How a restored terminal pane starts (handed to its runtime with the spawn options). */
export interface RestoredTerminal {
  /** the directory to start in (the runtime falls back to home when it is gone) */
  cwd: string;
  /** written into xterm before the new terminal's output, and again after each reset */
  prelude: string;
}

/** The longest saved output written into a pane, in characters (the sidecar keeps 64 KiB). */
const MAX_PRELUDE_CHARS = 256 * 1024;

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

/** Reads one `TerminalRecord`; null when it is not one. */
export function parseRecord(v: unknown): TerminalRecord | null {
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  const cwd = str(o.cwd);
  const scrollback = str(o.scrollback);
  if (cwd === null || scrollback === null || !Array.isArray(o.command)) return null;
  return {
    cwd,
    command: o.command.filter((a): a is string => typeof a === 'string'),
    running: str(o.running),
    scrollback: scrollback.slice(-MAX_PRELUDE_CHARS),
  };
}

/** Reads `problem` of `GET /api/workspace`; null when absent or not one. */
export function parseProblem(v: unknown): SessionProblem | null {
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  const file = str(o.file);
  const message = str(o.message);
  if (file === null || message === null) return null;
  return { file, movedTo: str(o.moved_to), message };
}

/** Control characters (C0 but for none kept, DEL, C1): a saved text is shown, never interpreted. */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

/** `2026-12-01 21:40` in local time. */
export function shortDate(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
}

/**
 * What a restored pane's xterm shows before its new shell: the saved output (each line's
 * control characters removed), then a dim divider `── restored 2026-12-01 21:40 ──` and,
 * when a command was running at the save, a line saying it did not survive. Lines end with
 * CR LF (xterm's newline alone does not return the cursor).
 */
export function restoredPrelude(rec: TerminalRecord, savedAt: number): string {
  const lines = rec.scrollback === '' ? [] : rec.scrollback.split('\n').map((l) => l.replace(CONTROLS, ''));
  const out = lines.map((l) => `${l}\r\n`);
  out.push(`\x1b[2m──── restored ${shortDate(savedAt)} ────\x1b[0m\r\n`);
  const running = rec.running?.replace(CONTROLS, '');
  if (running) out.push(`\x1b[2m[was running: ${running} — programs do not survive a quit; start it again]\x1b[0m\r\n`);
  return out.join('');
}

/** The notice in a restored pane whose saved directory is gone. */
export function cwdGoneNotice(cwd: string): string {
  return `\x1b[33m[${cwd.replace(CONTROLS, '')} is gone; started in the home directory]\x1b[0m\r\n`;
}

/** The banner's text for a session file that could not be restored. */
export function problemText(p: SessionProblem): string {
  const where = p.movedTo ? `it was moved to ${p.movedTo}` : `it stays at ${p.file}`;
  return `The saved session could not be restored (${p.message}); ${where}. Porthole started with a fresh wall.`;
}

/** A saved browser pane, as far as restoring touches it. */
interface SavedBrowserPane {
  mode: string;
  browser?: string;
  handle?: string;
}

/**
 * How the saved document is brought back after a sidecar restart. Gone terminals and browsers
 * are planned only in the document the sidecar restored (`revision` 0): once a UI has put its
 * own, a reload finds live terminals and browsers as before, and only the saved output of the
 * panes restored earlier is shown again (`shown`).
 */
export class RestorePlan {
  private constructor(
    private readonly savedAt: number,
    private readonly records: ReadonlyMap<string, TerminalRecord>,
    /** the document is the one the sidecar restored: nothing of it runs yet */
    private readonly restarting: boolean,
  ) {}

  /** The plan for `GET /api/workspace`'s answer; null when the sidecar restored no session. */
  static from(ws: { revision?: unknown; restore?: unknown } | null): RestorePlan | null {
    if (!ws || typeof ws.restore !== 'object' || ws.restore === null) return null;
    const r = ws.restore as Record<string, unknown>;
    const savedAt = typeof r.saved_at === 'number' ? r.saved_at : Date.now();
    const records = new Map<string, TerminalRecord>();
    if (typeof r.terminals === 'object' && r.terminals !== null) {
      for (const [id, v] of Object.entries(r.terminals as Record<string, unknown>)) {
        const rec = parseRecord(v);
        if (rec && TERMINAL_ID_RE.test(id)) records.set(id, rec);
      }
    }
    return new RestorePlan(savedAt, records, ws.revision === 0);
  }

  /** True if and only if a pane whose terminal `terminalId` is gone comes back (the session has a record of it). */
  has(terminalId: string): boolean {
    return this.restarting && this.records.has(terminalId);
  }

  /** How to bring back a pane whose terminal `terminalId` is gone; null when it does not come back. */
  terminal(terminalId: string): RestoredTerminal | null {
    return this.restarting ? this.shown(terminalId) : null;
  }

  /** The saved output of old terminal `terminalId` (a pane restored from it shows it again after a reload); null when unknown. */
  shown(terminalId: string): RestoredTerminal | null {
    const rec = this.records.get(terminalId);
    return rec ? { cwd: rec.cwd, prelude: restoredPrelude(rec, this.savedAt) } : null;
  }

  /**
   * A saved browser pane as it comes back: no Chromium survived the restart, so its browser
   * id goes (a screencast pane, popped out or not, starts a new headless browser), and so does
   * its handle (the new sidecar assigns one).
   */
  browser<T extends SavedBrowserPane>(saved: T): T {
    if (!this.restarting) return saved;
    const { browser: _b, handle: _h, ...rest } = saved;
    return rest as T;
  }
}

// --- the session file's problem, for its banner (one per page load)

let problem: SessionProblem | null = null;
const listeners = new Set<() => void>();

/** Records the problem `GET /api/workspace` reported (null: none). */
export function reportProblem(p: SessionProblem | null): void {
  problem = p;
  for (const l of listeners) l();
}

/** The problem to show, or null (none, or dismissed). */
export function currentProblem(): SessionProblem | null {
  return problem;
}

/** Subscribes to changes of `currentProblem()`; returns the unsubscribe function. */
export function subscribeProblem(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}
