// Which terminal queries xterm.js may answer, and when (protocol §5.2).
//
// xterm.js answers queries it parses (DA, DSR/CPR, DECRQM, window reports, colour queries,
// DECRQSS) by emitting the reply through `onData`, which we send to the program as input.
// Replies to replayed scrollback, or from a client that is not the answerer, must never
// reach the program. Pure: no xterm, no DOM; TerminalHost wires it to xterm's parser hooks.

/** An xterm.js CSI identifier (`IFunctionIdentifier`): prefix, intermediates, final byte. */
export interface CsiId {
  prefix?: string;
  intermediates?: string;
  final: string;
}

/** CSI parameters as xterm.js passes them to a parser hook (sub-parameters as arrays). */
export type CsiParams = (number | number[])[];

/** `CSI Ps t` window operations that report something (xterm's XTWINOPS report set). */
const WINDOW_REPORTS = new Set([11, 13, 14, 15, 16, 18, 19, 20, 21]);

/**
 * The CSI sequences that are queries, each with an optional test on its parameters (absent:
 * every instance is a query). Swallowing one changes no terminal state: they only report.
 * XTVERSION (`CSI > q`) and the kitty keyboard query (`CSI ? u`) are listed for xterm.js
 * versions that answer them.
 */
export const CSI_QUERIES: ReadonlyArray<{ id: CsiId; isQuery?: (params: CsiParams) => boolean }> = [
  { id: { final: 'c' } }, // DA1
  { id: { prefix: '>', final: 'c' } }, // DA2
  { id: { final: 'n' } }, // DSR 5 (status), 6 (CPR)
  { id: { prefix: '?', final: 'n' } }, // DECDSR (DECXCPR, …)
  { id: { intermediates: '$', final: 'p' } }, // DECRQM, ANSI modes
  { id: { prefix: '?', intermediates: '$', final: 'p' } }, // DECRQM, private modes
  { id: { final: 't' }, isQuery: (p) => WINDOW_REPORTS.has(first(p)) }, // XTWINOPS reports
  { id: { prefix: '>', final: 'q' } }, // XTVERSION
  { id: { prefix: '?', final: 'u' } }, // kitty keyboard flags query
];

/** OSC numbers whose payload may hold a `?` query: indexed colours, fg, bg, cursor colour. */
export const OSC_QUERY_IDS: readonly number[] = [4, 10, 11, 12];

/** DCS identifier of DECRQSS (`DCS $ q Pt ST`), a pure query. */
export const DCS_QUERY: CsiId = { intermediates: '$', final: 'q' };

/** Focus reports xterm.js emits while focus reporting (`CSI ? 1004 h`) is on. */
const FOCUS_REPORTS = new Set(['\x1b[I', '\x1b[O']);

function first(p: CsiParams): number {
  const v = p[0];
  return typeof v === 'number' ? v : (v?.[0] ?? 0);
}

/**
 * True iff an OSC 4/10/11/12 payload asks for a colour: any `;`-separated field is exactly
 * `?` (`OSC 11 ; ? ST`, `OSC 4 ; 1 ; ? ST`). A payload mixing sets and queries counts as a
 * query (protocol §5.2: swallowed whole by a client that must not answer).
 */
export function oscIsQuery(data: string): boolean {
  return data.split(';').includes('?');
}

/**
 * Whether xterm.js may answer queries now. `replaying` and `answering` describe the bytes the
 * parser is processing at this moment, so their owner flips them through xterm's write
 * callbacks, in order with the output (never when a message merely arrives).
 */
export class QueryGate {
  /** true iff the parser is processing scrollback replay */
  replaying = false;
  /** true iff the server named this client the answerer (protocol §5.2); false until told */
  answering = false;

  /** True iff a query parsed now must be swallowed (not answered). */
  swallowQuery(): boolean {
    return this.replaying || !this.answering;
  }

  /**
   * True iff `data` from xterm's `onData` must not be sent to the program: a focus report
   * emitted while replaying (the replay may turn focus reporting on for a moment). Keys the
   * user types are never dropped.
   */
  dropInput(data: string): boolean {
    return this.replaying && FOCUS_REPORTS.has(data);
  }
}
