// Pure: what still runs in a terminal pane's processes, as the UI says it: the survivors of an
// exited session (issue 12 item 14), the question asked before closing a busy pane, and the
// running terminals no pane shows (item 15).
import type { Survivor, TerminalInfo } from '../api/protocol';
import { commandTitle } from './title';

/** How many survivors are named before "and N more". */
const NAMED = 3;

/** `python3 (pid 1234)`, `a (pid 1), b (pid 2)`, `a (pid 1), b (pid 2), c (pid 3) and 2 more`; '' for none. */
export function survivorText(survivors: readonly Survivor[]): string {
  const named = survivors.slice(0, NAMED).map((s) => `${s.name} (pid ${s.pid})`).join(', ');
  const more = survivors.length - NAMED;
  return more > 0 ? `${named} and ${more} more` : named;
}

/** The banner of an exited pane whose session still has processes: `exited 0 · python3 (pid 1234) still runs from this session · Enter restarts (keeps it)`. */
export function survivorBanner(exitCode: number | null, survivors: readonly Survivor[]): string {
  const verb = survivors.length > 1 ? 'still run' : 'still runs';
  const it = survivors.length > 1 ? 'them' : 'it';
  return `exited ${exitCode ?? '?'} · ${survivorText(survivors)} ${verb} from this session · Enter restarts (keeps ${it})`;
}

/**
 * Why closing a terminal pane needs a question (one line per reason; none: close at once):
 * its program is busy (`busy`: something other than the shell in the foreground, as the
 * desktop app's quit asks), its exited session still has processes, or earlier sessions kept
 * at a restart still do. `current` is the pane's terminal (null when unknown or gone).
 */
export function closeReasons(current: TerminalInfo | null, kept: readonly TerminalInfo[]): string[] {
  const out: string[] = [];
  if (current?.alive && current.busy) out.push(`${current.foreground ?? 'a program'} is running in this pane`);
  if (current && !current.alive && current.survivors?.length) {
    out.push(`${survivorText(current.survivors)} ${current.survivors.length > 1 ? 'still run' : 'still runs'} from this pane's session`);
  }
  for (const k of kept) {
    if (k.survivors?.length) out.push(`${survivorText(k.survivors)} ${k.survivors.length > 1 ? 'still run' : 'still runs'} from an earlier session in this pane`);
  }
  return out;
}

/** A running terminal that no pane shows. */
export interface Orphan {
  id: string;
  /** what runs in it: the foreground program, else the command; the survivors of an exited one */
  name: string;
  /** its command line as a pane title */
  command: string | null;
  /** the pane handle it runs under (protocol §4 `pane`), else its own id */
  handle: string;
}

/**
 * The terminals still running (alive, or exited with survivors) whose id is not in `shown`
 * (the terminals the wall's panes show or keep), in the sidecar's order.
 */
export function findOrphans(terminals: readonly TerminalInfo[], shown: ReadonlySet<string>): Orphan[] {
  const out: Orphan[] = [];
  for (const t of terminals) {
    if (shown.has(t.id)) continue;
    const command = commandTitle(t.command);
    const handle = t.pane ?? t.id;
    if (t.alive) out.push({ id: t.id, name: t.foreground ?? command ?? 'terminal', command, handle });
    else if (t.survivors?.length) out.push({ id: t.id, name: t.survivors.map((s) => s.name).join(', '), command, handle });
  }
  return out;
}

/** `2 terminals running without a pane: bash (t3), npm (t5)`. */
export function orphanText(orphans: readonly Orphan[]): string {
  const n = orphans.length;
  return `${n} terminal${n === 1 ? '' : 's'} running without a pane: ${orphans.map((o) => `${o.name} (${o.id})`).join(', ')}`;
}
