// TypeScript mirror of docs/protocol.md (the sidecar's contract). Wire types live here only.

/** Protocol version this UI speaks (`GET /api/health` → `protocol`). */
export const PROTOCOL_VERSION = 1;

// Flow control (protocol §5.1, §5.4). Invariant: ACK_CHUNK_BYTES ≤ LOW_WATERMARK_BYTES < HIGH_WATERMARK_BYTES,
// so a client that acks in chunks always gets its catch-up.
/** a client with more than this unacknowledged (replay and catch-ups excluded) falls behind: no more output is queued to it */
export const HIGH_WATERMARK_BYTES = 192 * 1024;
/** a client that fell behind gets its catch-up once below this */
export const LOW_WATERMARK_BYTES = 128 * 1024;
/** the UI acks at least every this many processed bytes */
export const ACK_CHUNK_BYTES = 32 * 1024;

/** Terminal size bounds (cols and rows, both inclusive). */
export const MIN_TERMINAL_DIM = 1;
export const MAX_TERMINAL_DIM = 1000;

// Browser viewports and zoom (protocol §8.2; the sidecar's `constants.rs`, checked equal by
// its test `rust_and_typescript_viewport_and_zoom_values_agree`). Bounds are inclusive.
/** smallest viewport width and height, in CSS px */
export const MIN_VIEWPORT_CSS_PX = 100;
/** largest viewport width and height, in CSS px */
export const MAX_VIEWPORT_CSS_PX = 7680;
/** smallest device pixel ratio */
export const MIN_VIEWPORT_DPR = 0.5;
/** largest device pixel ratio */
export const MAX_VIEWPORT_DPR = 4;
/** the default viewport (the Desktop preset): a new browser's size when none is named, and a pane-mode browser's until the pane's size is sent */
export const DEFAULT_VIEWPORT_WIDTH_CSS_PX = 1440;
export const DEFAULT_VIEWPORT_HEIGHT_CSS_PX = 900;
export const DEFAULT_VIEWPORT_DPR = 1;
/** smallest and largest page zoom factor (1 = none) */
export const MIN_ZOOM = 0.25;
export const MAX_ZOOM = 5;

/** Terminal ids: `^t[0-9]{1,18}$`. */
export const TERMINAL_ID_RE = /^t[0-9]{1,18}$/;

export interface TerminalInfo {
  id: string;
  pid: number;
  cwd: string;
  command: string[];
  /** columns of text */
  cols: number;
  /** lines of text */
  rows: number;
  alive: boolean;
  exit_code: number | null;
  busy: boolean;
  foreground: string | null;
  /**
   * once the child has exited: the processes still running in its process group or session
   * (a `nohup` server), by pid; empty while it lives (protocol §4). Absent from older sidecars.
   */
  survivors?: Survivor[];
  /**
   * the handle of the pane whose current terminal this is (`tN`), null when none is (a later
   * terminal replaced it in its pane). Absent from older sidecars.
   */
  pane?: string | null;
  /** the working directory now: the shell's OSC 7 report, else the child's (protocol §4); absent from older sidecars */
  cwd_now?: string | null;
  /** what the shell's integration reported (protocol §5.3); absent from older sidecars */
  shell?: ShellState;
}

/** One answer of `POST /api/terminals/{id}/resolve` (protocol §4). */
export interface ResolvedPath {
  /** the path as asked */
  path: string;
  /** its canonical absolute path, or null when nothing is there */
  resolved: string | null;
  kind: 'file' | 'dir' | null;
}

/** A terminal's shell state from its integration (protocol §5.3 `shell`). */
export interface ShellState {
  /** OSC 7 working directory, or null */
  cwd: string | null;
  /** true once an OSC 133 mark was seen */
  integration: boolean;
  /** the command running now (OSC 133 C..D); `command` null when the shell sent no command line; `ms` since it started */
  running: { command: string | null; ms: number } | null;
  /** the last OSC 133 D exit status */
  last_exit: number | null;
}

/** Something in a terminal's output that wants the human (protocol §5.3 `attention`). */
export type Attention =
  | { kind: 'bell' }
  | { kind: 'notify'; title: string; body: string }
  | { kind: 'command_done'; command: string | null; exit: number | null; duration_ms: number };

/** A process still running in an exited terminal's session (protocol §4). */
export interface Survivor {
  pid: number;
  /** `/proc/<pid>/comm` */
  name: string;
}

export interface CreateTerminal {
  cols: number;
  rows: number;
  cwd?: string;
  command?: string[];
  /**
   * the handle of the terminal pane this terminal is restarted in (a `tN` the sidecar gave
   * out before); absent: a new pane, whose handle is the new terminal's id (protocol §4, §9.2)
   */
  pane?: string;
}

/**
 * Server → client text messages on the terminal socket (protocol §5): `replay` first (the
 * next `bytes` bytes of output are scrollback), `answerer` (whether this client answers
 * terminal queries in the output after it, §5.2), `exit`.
 */
export type ServerControl =
  | { type: 'replay'; bytes: number }
  /** protocol §5.4: the next `bytes` binary bytes are a catch-up state; `lines` (`skipped` bytes) went by */
  | { type: 'catchup'; bytes: number; lines: number; skipped: number }
  | { type: 'answerer'; answers: boolean }
  | { type: 'exit'; code: number }
  | ({ type: 'shell' } & ShellState)
  | ({ type: 'attention' } & Attention);

/** Client → server text messages on the terminal socket. */
export type ClientControl = { type: 'resize'; cols: number; rows: number } | { type: 'ack'; bytes: number };

export interface ApiErrorBody {
  error: { code: string; message: string };
}

/** True iff `n` is a valid cols/rows value. */
export function validDim(n: number): boolean {
  return Number.isInteger(n) && n >= MIN_TERMINAL_DIM && n <= MAX_TERMINAL_DIM;
}

/** `POST /api/proxy/grants` body: the upstream URL and the app's embedder chain. */
export interface ProxyGrantRequest {
  /** an absolute http:// URL */
  url: string;
  /** `location.origin` then `location.ancestorOrigins`, innermost first */
  embedders: string[];
  /** a remote link id: the upstream is dialled on that remote (protocol §6, §11) */
  remote?: string;
}

/** `POST /api/proxy/grants` → 200. */
export interface ProxyGrant {
  /** the URL to frame: `url` with its origin swapped for the grant's proxy origin */
  url: string;
  grant: string;
  /** the proxy's origin, e.g. `http://127.0.0.1:41001` */
  origin: string;
  /** the upstream origin, e.g. `http://localhost:5173` */
  upstream: string;
}

/** Error codes `POST /api/proxy/grants` refuses with (4xx). */
export type ProxyGrantErrorCode = 'https_refused' | 'blocked_address' | 'bad_scheme' | 'bad_url' | 'too_many_grants';

/** One listening socket of a pane's processes (`GET /api/terminals/{id}/ports`, protocol §7). */
export interface ListeningPort {
  /** TCP port, 1..=65535 */
  port: number;
  /** the bound address: `127.0.0.1` (or another 127/8 address), `0.0.0.0`, `::` or `::1` */
  address: string;
  /** the process holding the socket (the one nearest the terminal's child) */
  pid: number;
  /** its command name; "" if it exited during the scan */
  process: string;
}

/** Error codes `GET /api/terminals/{id}/ports` fails with besides `not_found`. */
export type PortsErrorCode = 'scan_failed' | 'unsupported';

// --- Browsers (protocol §8)

/** Browser ids: `^b[0-9]{1,18}$`. */
export const BROWSER_ID_RE = /^b[0-9]{1,18}$/;

export interface MeasuredViewport {
  /** CSS px */
  width: number;
  /** CSS px */
  height: number;
  dpr: number;
}

export interface BrowserTab {
  id: string;
  url: string;
  title: string;
}

export interface PageDialog {
  tab: string;
  kind: 'alert' | 'confirm' | 'prompt' | 'beforeunload';
  message: string;
  default_prompt: string;
}

export interface BrowserInfo {
  id: string;
  connected: boolean;
  url: string;
  title: string;
  active_tab: string | null;
  tabs: BrowserTab[];
  viewport: MeasuredViewport | null;
  mode: 'pane' | 'fixed';
  pid: number | null;
  dialog: PageDialog | null;
  /** popped out to a window (protocol §8.5) */
  popped_out: boolean;
}

/** `GET /api/capabilities`'s `popout` (protocol §8.5): `reason` says why not, for the user. */
export interface PopoutCapability {
  available: boolean;
  reason: string | null;
}

/** `POST /api/browsers/{id}/viewport` (protocol §8.2); `mobile`: a phone (touch, mobile user agent). */
export type ViewportBody = { mode: 'pane' } | { mode: 'fixed'; width: number; height: number; dpr: number; mobile?: boolean };

export interface SelectPopup {
  kind: 'select';
  /** the element's box in page CSS px */
  x: number;
  y: number;
  width: number;
  height: number;
  options: { label: string; value: string; disabled: boolean }[];
  selected: number;
}

/** The type of a picker input the pane draws its own picker for. */
export type PickerType = 'date' | 'time' | 'datetime-local' | 'month' | 'week' | 'color';

/** A picker input (`<input type=date|…|color>`) the page asked to open (protocol §8.4 `popup`). */
export interface InputPopup {
  kind: 'input';
  /** the element's box in page CSS px */
  x: number;
  y: number;
  width: number;
  height: number;
  input_type: PickerType;
  /** the element's value, min, max and step attributes as HTML spells them ("" when unset) */
  value: string;
  min: string;
  max: string;
  step: string;
}

/** A page's file input waiting for the user's files (protocol §8.4 `file_chooser`). */
export interface FileChooser {
  id: number;
  tab: string;
  multiple: boolean;
  /** the input's `accept` attribute ("" for any file) */
  accept: string;
}

/** A rectangle of the screen, in screen px (`POST /api/browsers/{id}/popout`'s `beside`, protocol §8.5). */
export interface ScreenRect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** One download of a screencast browser (protocol §8.4 `downloads`). */
export interface Download {
  id: string;
  name: string;
  url: string;
  /** bytes */
  received: number;
  /** bytes; 0 when unknown */
  total: number;
  state: 'in_progress' | 'completed' | 'canceled' | 'failed';
  /** where it was saved (completed) */
  path: string | null;
  error: string | null;
}

/** Viewer socket messages, sidecar → view (JSON text). */
export type ViewerOut =
  | { type: 'status'; connected: boolean; launching: boolean; viewport: MeasuredViewport | null; popped_out: boolean; crashed?: boolean }
  | { type: 'tabs'; tabs: BrowserTab[]; active: string | null }
  | { type: 'url'; url: string; title: string }
  /** the active tab is loading; `url` is where it is going until that commits (null: unknown or committed) */
  | { type: 'loading'; loading: boolean; url: string | null }
  | { type: 'dialog'; dialog: PageDialog | null }
  | { type: 'sync'; state: 'off' | 'applying' | 'synced' }
  | ({ type: 'popup' } & SelectPopup)
  | ({ type: 'popup' } & InputPopup)
  | { type: 'file_chooser'; chooser: FileChooser | null }
  | { type: 'downloads'; downloads: Download[] }
  | { type: 'zoom'; factor: number }
  /** the answer to `flush` `id`: every input sent before it has been dispatched */
  | { type: 'flushed'; id: number }
  | { type: 'inspect'; x: number; y: number; link: string | null; image: { x: number; y: number; width: number; height: number } | null }
  | { type: 'scroll'; x: number; y: number; width: number; height: number; view_width: number; view_height: number }
  | { type: 'clipboard'; text: string }
  /** the answer to a `find`: the active match (1-based; 0 when none) of `count` (`capped`: at least that many) */
  | { type: 'find'; text: string; index: number; count: number; capped: boolean }
  | ({ type: 'agent' } & AgentActivity)
  | { type: 'error'; message: string };

/**
 * What an agent (`ph browser`) is doing in the browser, sent to every view (protocol §8.4
 * `agent`): the verb, whether it still runs, and where it acts in the page's top-level
 * viewport CSS px (a point for pointer input, a box for keys), or null. `seq` grows by one
 * per action.
 */
export interface AgentActivity {
  seq: number;
  verb: string;
  acting: boolean;
  point: { x: number; y: number } | null;
  rect: { x: number; y: number; width: number; height: number } | null;
}

// --- UI channel (protocol §10): `GET /api/ui/socket`, JSON text messages both ways

/** A UI channel message (either way) is at most this long; a longer one closes the socket (1008). */
export const UI_MESSAGE_MAX_BYTES = 256 * 1024;
/** A `state` message reports at most this many panes. */
export const UI_PANES_MAX = 256;
/** Each string in a `state` message is at most this many bytes of UTF-8. */
export const UI_STRING_MAX_BYTES = 8 * 1024;

/** Terminal pane handles are their first terminal's id (`tN`); browser pane handles are `bN` (protocol §9.2). */
export const TERMINAL_HANDLE_RE = TERMINAL_ID_RE;
export const BROWSER_HANDLE_RE = /^b[0-9]{1,18}$/;

/** How a browser pane renders, as the control plane names it: a popped-out screencast is `popout`. */
export type UiMode = 'iframe' | 'screencast' | 'popout';

/** One pane in a `state` message. */
export interface UiPane {
  /** the UI's own pane id (`p3`) */
  id: string;
  /** `tN` / `bN`; null for a browser pane the sidecar has not named yet (it answers with `handles`) */
  handle: string | null;
  kind: 'terminal' | 'browser';
  /** the terminal the pane shows now (terminal panes; null until it exists) */
  terminal: string | null;
  title: string;
  /** browser panes: the URL on screen (null before the first one and for terminals) */
  url: string | null;
  mode: UiMode | null;
  minimized: boolean;
  /** the number of the workspace the pane is in (its place in the strip, from 1); absent when unknown */
  workspace?: number;
  /** screencast and popped-out panes: the sidecar's browser id (`b7`, §8), once it has one */
  browser: string | null;
}

/** UI → sidecar: the window's panes in creation order; sent on connect and whenever a field changes. */
export interface UiStateMessage {
  type: 'state';
  /** this window has the focus now (`document.hasFocus()`) */
  active: boolean;
  /** the focused pane's id */
  focused: string | null;
  panes: UiPane[];
}

/** UI → sidecar: the human focused or used this window. */
export interface UiActiveMessage {
  type: 'active';
}

/** UI → sidecar: the answer to request `id` (`pane`: the new or acted-on pane's id; null for `system` opens). */
export type UiReplyMessage =
  | { type: 'reply'; id: number; ok: true; pane: string | null }
  /** `code`: `refused`, or the link's code when a `workspace` request's connect failed (`host_key`, …; protocol §11.5) */
  | { type: 'reply'; id: number; ok: false; code: string; message: string };

export type UiOutbound = UiStateMessage | UiActiveMessage | UiReplyMessage;

/** What `ph pane` can ask of a pane (`zoom`/`unzoom` set the state; `focus` restores a minimized pane). */
export type UiPaneAction = 'focus' | 'zoom' | 'unzoom' | 'minimize' | 'restore' | 'close';
/** How `ph open` shows a page. */
export type UiOpenMode = 'iframe' | 'screencast' | 'popout' | 'system';

/** Sidecar → UI requests, after parsing (`request` messages; `id` is the one to reply to). */
export type UiRequest =
  /**
   * a new terminal pane showing the existing terminal `terminal` (its handle) beside `near`, or with
   * `balance` (the caller named neither pane nor side) beside the wall's largest pane; the focus stays
   */
  | { verb: 'split'; id: number; near: string | null; side: 'right' | 'down' | null; terminal: string; balance: boolean }
  /** a browser pane named `handle` at `url` beside `near` (never replacing it), or with `balance` beside the wall's largest pane; the focus stays; `isolated`: its browser keeps cookies of its own */
  | { verb: 'open'; id: number; near: string | null; url: string; mode: UiOpenMode; handle: string | null; balance: boolean; isolated: boolean }
  | { verb: 'pane'; id: number; pane: string; action: UiPaneAction }
  /** a new workspace with one terminal pane, shown: remote on `host` (connected as the "New remote workspace…" dialog does), else local; named `name` (null: the default) */
  | { verb: 'workspace'; id: number; host: string | null; name: string | null };
