// The pane types shared by the iframe (`browser/`) and screencast (`screencast/`) render
// modes and the workspace that holds them: what a browser pane shows, the events its runtime
// reports, and the screencast's state. A leaf: types and constants only, importing nothing
// but wire types and other leaves (so neither render mode imports the other).
import type { BrowserTab, Download, FileChooser, InputPopup, PageDialog, SelectPopup } from '../api/protocol';
import type { RenderMode } from '../browser/modes';
import type { BlockedVia } from '../browser/shim';
import type { Keystroke } from '../keys/prefix';
import type { ViewportChoice } from '../screencast/viewport';

/** A screencast's tabs as saved: their URLs in order (at least two) and the active one's index. */
export interface RestoreTabs {
  tabs: string[];
  active: number;
}

/** What the pane shows, as the header and the panels read it. */
export interface BrowserView {
  /** the upstream URL on screen ('' before the first navigation) */
  url: string;
  mode: RenderMode;
  /** the page's title as the shim last reported it */
  title: string;
  /** empty: no URL yet; loading: waiting for a grant or the first load; https: refused by the iframe renderer */
  view: 'empty' | 'loading' | 'ready' | 'https' | 'error';
  /** the panel's message for `https` and `error` */
  message: string | null;
  /** a navigation is under way: from its start (for one inside the frame, the shim's `navigating`) until the frame's load (or the shim's report of a history step or of the next page) */
  loading: boolean;
  /** a load came with no location report from the shim (not HTML, off the proxy, or refused); the banner can be dismissed (false again) */
  uninstrumented: boolean;
  /** the page's first failed load from the upstream's own origin (CORS: shim `blocked`), until the next navigation or a dismissal */
  blocked: { url: string; via: BlockedVia } | null;
  /** a page asked to open this URL in a new window; the pane asks the user */
  prompt: string | null;
  /** further new-window requests waiting behind `prompt`, oldest first (prompts.ts) */
  queuedPrompts: string[];
  /** a way the page just behaved differently here than in a browser (said once per pane; dismissable; offers a screencast) */
  notice: string | null;
  /** the screencast viewport choice (kept across mode switches; persisted) */
  viewport: ViewportChoice;
  /** the sidecar browser behind a screencast pane (persisted so a reloaded UI reuses it) */
  browserId: string | null;
  /** screencast panes: the browser keeps cookies of its own instead of sharing the wall's login (`ph browser open --isolated`; persisted) */
  isolated: boolean;
  /** a restored screencast pane's tabs (their URLs in order, and the active one's index), opened when its browser is created; null once it is */
  restoreTabs: RestoreTabs | null;
  /** screencast panes: tabs, dialog, popup, Chromium up, parked; null in iframe mode */
  screencast: ScreencastState | null;
}

export interface BrowserEvents {
  onChange: (patch: Partial<BrowserView>) => void;
  /** the user pressed a pointer inside the frame */
  onFocus: () => void;
  /** the prefix key or the key after it, pressed inside the frame (the shim swallowed it there) */
  onKey: (k: Keystroke) => void;
  /** the page asked to open `url` (an upstream URL) in a new window: the pane asks the user, one request at a time */
  onOpenWindow: (url: string) => void;
}

/** The screencast's state as the pane's React view reads it (high-rate facts live on DOM attributes). */
export interface ScreencastState {
  /** Chromium is up and connected (false and not `launching`: it stopped; the pane offers Relaunch) */
  connected: boolean;
  /** a launch, relaunch, pop-out or pop-in is under way on the sidecar (not a stop) */
  launching: boolean;
  tabs: BrowserTab[];
  activeTab: string | null;
  dialog: PageDialog | null;
  /** a `<select>` or picker input the page asked to open, with its box mapped to the pane body's CSS px */
  popup: ((SelectPopup | InputPopup) & { box: { x: number; y: number; width: number; height: number } }) | null;
  /** a page's file input waiting for the user's files */
  fileChooser: FileChooser | null;
  /** why answering the file chooser failed (shown in its panel) */
  fileChooserError: string | null;
  /** this browser's downloads, oldest first */
  downloads: Download[];
  /** the page zoom factor of every tab (1 = none) */
  zoom: number;
  /** the canvas's context menu: where (pane body CSS px), and the link and image under it once the sidecar said (`pending` until then) */
  contextMenu: CanvasMenuState | null;
  /** the viewer socket is closed because the pane is hidden */
  parked: boolean;
  /** a relaunch asked for by the user is under way (its button is disabled) */
  relaunching: boolean;
  /** why the last relaunch failed (shown in the "Chromium quit" panel) */
  relaunchError: string | null;
  /** the last failure on a live browser (navigate, tab, viewport, grant): a banner until dismissed or the socket reopens */
  error: string | null;
  /** the browser is popped out to a window (the sidecar's `status`); the pane shows a stub */
  poppedOut: boolean;
  /** the active tab's renderer crashed (the sidecar's `status`): the pane says so and offers Reload */
  crashed: boolean;
  /** a pop-out or pop-in this pane asked for and the sidecar has not answered yet */
  popping: 'out' | 'in' | null;
  /** why the last pop-out or pop-in failed (cleared by the next one) */
  popError: string | null;
  /** an agent's action (`ph browser`) running, or just ended (shown for a moment): the header names its verb */
  agent: { verb: string; acting: boolean } | null;
  /** the find bar's last answer from the page (null until one came, or once the bar closed) */
  find: FindAnswer | null;
  /** grows by one each time the user asks for the find bar (its field takes the caret again) */
  findFocus: number;
}

/** What find in page found (protocol §8.4 `find`). */
export interface FindAnswer {
  text: string;
  /** the active match, 1-based; 0 when nothing matched */
  index: number;
  count: number;
  /** the count stopped at its bound: there are more */
  capped: boolean;
}

/** The canvas's context menu (see `ScreencastState.contextMenu`). */
export interface CanvasMenuState {
  /** where it opened, in pane body CSS px */
  x: number;
  y: number;
  /** the page point (CSS px) it was opened on */
  page: { x: number; y: number };
  link: string | null;
  /** the image's box in page CSS px */
  image: { x: number; y: number; width: number; height: number } | null;
  /** the sidecar has not said yet what is there */
  pending: boolean;
}

/** Chromium has stopped (crashed, killed, closed) and nothing is starting it: Relaunch (or a navigation) brings it back. */
export function chromiumStopped(sc: ScreencastState): boolean {
  return !sc.connected && !sc.launching;
}

export const EMPTY_SCREENCAST: ScreencastState = {
  connected: true,
  launching: false,
  tabs: [],
  activeTab: null,
  dialog: null,
  popup: null,
  fileChooser: null,
  fileChooserError: null,
  downloads: [],
  zoom: 1,
  contextMenu: null,
  parked: false,
  relaunching: false,
  relaunchError: null,
  error: null,
  poppedOut: false,
  crashed: false,
  popping: null,
  popError: null,
  agent: null,
  find: null,
  findFocus: 0,
};

