// The wall's state as React reads it: the pane models, the snapshot, and the pure
// constructors of new models. No runtimes here (PaneRuntime and the browser renderers hold
// those); the store owns the one snapshot.
import type { ShellState, Survivor } from '../api/protocol';
import { type BrowserView, EMPTY_SCREENCAST } from '../pane/types';
import type { RenderMode } from '../browser/modes';
import type { PaneKind } from '../browser/placement';
import type { PopoutOffer } from '../browser/popout';
import type { Liveness } from '../api/liveness';
import * as L from '../layout/engine';
import type { PortOrigin } from '../ports/ports';
import { PANE_VIEWPORT } from '../screencast/viewport';
import type { PaneStatus } from './PaneRuntime';
import type { Orphan } from './survivors';
import type { Workspace } from './workspaces';

/** The gap between panes on the wall, in CSS px. */
export const GAP_PX = 6;
/** The smallest a pane may be made (splits and resizes refuse to go below), in CSS px. */
export const MIN_PANE_PX = 80;

export interface PaneModel {
  id: L.PaneId;
  kind: PaneKind;
  /**
   * the pane's handle for `ph` (protocol §9.2), stable for the pane's life: a terminal pane's
   * is the id of the first terminal it ran (null until that exists); a browser pane's is
   * the `bN` the sidecar assigned (null until it has)
   */
  handle: string | null;
  /** the pane's terminal (terminal panes; null until it exists, always null for browsers) */
  terminalId: string | null;
  /** terminal panes of a remote workspace: the host whose sidecar runs the terminal; browser panes opened from such a pane's port: the host whose network the page is on (its iframe grant and screencast browser go through that host's link, protocol §6, §8) (absent or null: local) */
  remote?: string | null;
  /** OSC title, else the command, else '' */
  title: string;
  command: string | null;
  status: PaneStatus;
  exitCode: number | null;
  /** the find bar is open */
  finding?: boolean;
  /** browser panes: what the pane shows */
  browser?: BrowserView;
  /** browser panes: bumped to ask the header to open (and focus) the URL field */
  editNonce?: number;
  /** browser panes opened from a terminal's port (context menu): which one; reuse looks it up */
  portOrigin?: PortOrigin;
  /** terminal panes, once exited: the processes still running in the terminal's session */
  survivors?: Survivor[];
  /**
   * terminal panes: earlier terminals of this pane kept registered at a restart because
   * processes of their sessions still ran; deleted when those end (swept) or the pane closes
   */
  kept?: string[];
  /** what still runs in the `kept` terminals, as last swept */
  keptSurvivors?: Survivor[];
  /** terminal panes of a restored session: the old terminal whose saved output is shown above the new one's (restore.ts) */
  restoredFrom?: string;
  /** terminal panes: what the shell's integration reported (protocol §5.3) */
  shell?: ShellState | null;
  /** terminal panes without shell integration: the foreground program while one other than the shell runs */
  foreground?: string | null;
  /** something in the pane wants the human (cleared when the pane is focused) */
  attention?: boolean;
}

/**
 * A close that waits for the user's answer: the pane (or, closing a workspace, the
 * workspace) and why it asks (one line per reason).
 */
export type CloseQuestion = { paneId: L.PaneId; reasons: string[] } | { workspaceId: string; reasons: string[] };

export interface Snapshot {
  /** the active workspace's layout (the wall on screen); its entry in `workspaces` is kept equal */
  layout: L.LayoutState;
  /** every workspace in strip order (at least one once ready) */
  workspaces: Workspace[];
  /** the id of the workspace on screen */
  active: string;
  /** the workspace whose name the strip is editing, or null */
  renaming: string | null;
  panes: Record<L.PaneId, PaneModel>;
  /** every pane in creation order: the stable render order (never re-sorted) */
  order: L.PaneId[];
  ready: boolean;
  /** bumped to ask the wall to open pane `paneId`'s context menu from the keyboard (Ctrl-b >) */
  menuRequest: { paneId: L.PaneId; nonce: number } | null;
  /** whether "Pop out" can be chosen (`GET /api/capabilities`, asked at start and whenever a menu offering it opens) */
  popout: PopoutOffer;
  /** whether Porthole still answers (asked after a pane's connection drops); not `up` covers the wall */
  liveness: Liveness;
  /** a close waiting for the user's answer (the pane's program is busy or its processes still run) */
  closing: CloseQuestion | null;
  /** running terminals no pane showed when this window started (offered: Show, Stop) */
  orphans: Orphan[];
  /** why reading the saved wall failed, while it is asked again (before `ready`); null otherwise */
  loadError: string | null;
}

/** What a browser pane shows before its renderer reports anything. */
export const EMPTY_BROWSER: BrowserView = {
  url: '',
  mode: 'iframe',
  title: '',
  view: 'empty',
  message: null,
  loading: false,
  uninstrumented: false,
  blocked: null,
  prompt: null,
  queuedPrompts: [],
  notice: null,
  viewport: PANE_VIEWPORT,
  browserId: null,
  isolated: false,
  restoreTabs: null,
  screencast: null,
};

/** A terminal pane's model on terminal `terminalId` (null: its runtime creates one when mounted), named `handle`, on `remote` (null: local). */
export function terminalModel(id: L.PaneId, terminalId: string | null, title = '', command: string | null = null, handle: string | null = null, remote: string | null = null): PaneModel {
  return { id, kind: 'terminal', handle, terminalId, title, command, status: 'connecting', exitCode: null, ...(remote ? { remote } : {}) };
}

/** A browser pane's model at `url` (empty: its URL field opens) in render `mode`, named `handle`. */
export function browserModel(id: L.PaneId, url: string, title = '', mode: RenderMode = 'iframe', handle: string | null = null): PaneModel {
  return {
    id,
    kind: 'browser',
    handle,
    terminalId: null,
    title,
    command: null,
    status: 'open',
    exitCode: null,
    browser: { ...EMPTY_BROWSER, url, title, mode, screencast: mode === 'screencast' ? EMPTY_SCREENCAST : null },
    editNonce: url ? 0 : 1,
  };
}
