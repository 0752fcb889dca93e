// The `state` message a window reports on the UI channel (protocol §10): built from the
// store's snapshot, bounded to the protocol's limits.
//
// Pure: the caller passes what it read (the snapshot, `document.hasFocus()`).
import { UI_MESSAGE_MAX_BYTES, UI_PANES_MAX, UI_STRING_MAX_BYTES, type UiMode, type UiPane, type UiStateMessage } from '../api/protocol';

/** What the report needs of one pane (a structural subset of the store's `PaneModel`). */
export interface ReportedPane {
  id: string;
  kind: 'terminal' | 'browser';
  handle: string | null;
  /** a remote pane's host: its terminal is not this sidecar's */
  remote?: string | null;
  terminalId: string | null;
  /** OSC title of a terminal, else '' */
  title: string;
  /** a terminal's command line as shown when it has no title */
  command: string | null;
  browser?: {
    /** '' before the first URL */
    url: string;
    mode: 'iframe' | 'screencast';
    title: string;
    screencast: { poppedOut: boolean } | null;
    /** a screencast pane's sidecar browser id (`b7`), once it has one */
    browserId?: string | null;
  };
}

/** What the report reads from the store. */
export interface ReportInput {
  /** pane ids in creation order */
  order: readonly string[];
  panes: Readonly<Record<string, ReportedPane | undefined>>;
  minimized: readonly string[];
  focused: string | null;
  /** the window has the focus (`document.hasFocus()`) */
  active: boolean;
  /** pane id → the number of its workspace (from 1); a pane not in it reports none */
  workspaces?: Readonly<Record<string, number>>;
}

const encoder = new TextEncoder();

/**
 * `s` cut to at most `maxBytes` bytes of UTF-8, on a character boundary (never a lone
 * surrogate half).
 */
export function clipUtf8(s: string, maxBytes: number): string {
  if (s.length * 3 <= maxBytes || encoder.encode(s).length <= maxBytes) return s;
  let bytes = 0;
  let end = 0;
  for (const ch of s) {
    const n = encoder.encode(ch).length;
    if (bytes + n > maxBytes) break;
    bytes += n;
    end += ch.length;
  }
  return s.slice(0, end);
}

/** The mode the control plane reports: a popped-out screencast is `popout`; null for terminals. */
export function reportedMode(p: ReportedPane): UiMode | null {
  if (p.kind !== 'browser' || !p.browser) return null;
  if (p.browser.mode === 'screencast' && p.browser.screencast?.poppedOut) return 'popout';
  return p.browser.mode;
}

/** The sidecar browser id `ph browser` drives: screencast (and popped-out) panes only. */
export function reportedBrowser(p: ReportedPane): string | null {
  if (p.kind !== 'browser' || p.browser?.mode !== 'screencast') return null;
  const id = p.browser.browserId ?? null;
  return id !== null && /^b[0-9]{1,18}$/.test(id) ? id : null;
}

/** The title `ph list` shows and `title:TEXT` matches: the terminal's title (else its command) or the page's title. */
export function reportedTitle(p: ReportedPane): string {
  if (p.kind === 'browser') return p.browser?.title ?? '';
  return p.title || p.command || '';
}

/**
 * The `state` message for `input`: every pane in creation order (at most `UI_PANES_MAX`),
 * each string at most `stringBytes` bytes of UTF-8 (default `UI_STRING_MAX_BYTES`).
 */
export function buildState(input: ReportInput, stringBytes = UI_STRING_MAX_BYTES): UiStateMessage {
  const minimized = new Set(input.minimized);
  const panes: UiPane[] = [];
  for (const id of input.order) {
    if (panes.length >= UI_PANES_MAX) break;
    const p = input.panes[id];
    if (!p) continue;
    const url = p.kind === 'browser' && p.browser?.url ? clipUtf8(p.browser.url, stringBytes) : null;
    panes.push({
      id: p.id,
      handle: p.handle,
      kind: p.kind,
      // A remote pane's terminal is the remote sidecar's: it names no terminal of this one.
      terminal: p.kind === 'terminal' && !p.remote ? p.terminalId : null,
      title: clipUtf8(reportedTitle(p), stringBytes),
      url,
      mode: reportedMode(p),
      minimized: minimized.has(id),
      ...(input.workspaces?.[id] !== undefined ? { workspace: input.workspaces[id] } : {}),
      browser: reportedBrowser(p),
    });
  }
  const focused = input.focused !== null && panes.some((p) => p.id === input.focused) ? input.focused : null;
  return { type: 'state', active: input.active, focused, panes };
}

/**
 * The `state` message as text, within `UI_MESSAGE_MAX_BYTES`: when the full report is
 * longer (hundreds of panes with kilobytes of title each), strings are cut shorter.
 */
export function encodeState(input: ReportInput): string {
  for (const bytes of [UI_STRING_MAX_BYTES, 512, 64]) {
    const text = JSON.stringify(buildState(input, bytes));
    if (encoder.encode(text).length <= UI_MESSAGE_MAX_BYTES) return text;
  }
  return JSON.stringify(buildState(input, 0));
}
