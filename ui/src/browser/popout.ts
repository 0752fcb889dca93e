// Pop-out (DESIGN §4.4, protocol §8.5): the capability as the UI offers it, and what a
// screencast pane shows while its browser is popped out. Pure: no DOM, no fetch.
import type { PopoutCapability, ScreenRect } from '../api/protocol';

/** Whether "Pop out" can be chosen, and the reason shown beside it when not. */
export interface PopoutOffer {
  available: boolean;
  /** a sentence for the user; null when available */
  reason: string | null;
}

/**
 * Where the app's window is on the screen (`screenX`, `screenY`, `outerWidth`, `outerHeight`
 * of its window, integers), or null when the platform does not say (Wayland reports 0×0 at
 * the origin, some webviews no size): then the sidecar places the window as before.
 */
export function appWindowRect(w: { screenX: number; screenY: number; outerWidth: number; outerHeight: number }): ScreenRect | null {
  const r = { x: Math.round(w.screenX), y: Math.round(w.screenY), width: Math.round(w.outerWidth), height: Math.round(w.outerHeight) };
  if (![r.x, r.y, r.width, r.height].every(Number.isFinite) || r.width < 1 || r.height < 1) return null;
  if (Math.abs(r.x) > 100_000 || Math.abs(r.y) > 100_000 || r.width > 100_000 || r.height > 100_000) return null;
  return r;
}

/** Shown until `GET /api/capabilities` has answered. */
export const POPOUT_CHECKING: PopoutOffer = { available: false, reason: 'Checking whether a window can be shown…' };

/** The offer for a capability answer, or for the failure to get one. */
export function popoutOffer(cap: PopoutCapability | { error: string }): PopoutOffer {
  if ('error' in cap) return { available: false, reason: `Couldn't ask whether a window can open: ${cap.error}` };
  return cap.available ? { available: true, reason: null } : { available: false, reason: cap.reason };
}

/** What the pane's stub says, or null when the pane shows the screencast itself. */
export type StubState =
  /** a pop-out is under way: the window is opening (the stub offers nothing yet) */
  | 'opening'
  /** popped out, the window's Chromium is up: "Pop back in" */
  | 'out'
  /** a pop-in is under way */
  | 'returning'
  /** popped out and its Chromium crashed: Relaunch (the window) or Pop back in */
  | 'crashed';

/**
 * The stub for a screencast pane: `poppedOut` as the sidecar last said, `popping` the request
 * this pane has in flight, `connected` the browser's Chromium up, `launching` a launch under
 * way on the sidecar (a window closed by the user returns through one: not a crash).
 */
export function stubState(s: { poppedOut: boolean; popping: 'out' | 'in' | null; connected: boolean; launching: boolean }): StubState | null {
  if (s.popping === 'out') return 'opening';
  if (s.popping === 'in') return 'returning';
  if (!s.poppedOut) return null;
  if (s.connected) return 'out';
  return s.launching ? 'returning' : 'crashed';
}

/**
 * Whether a pop request in direction `dir` goes to the sidecar: never while one is in flight,
 * and a pop-out of a browser already popped out is nothing to do (the caller just shows the
 * pane; asking would only earn a stale "popped_out" error).
 */
export function shouldRequestPop(s: { poppedOut: boolean; popping: 'out' | 'in' | null }, dir: 'out' | 'in'): boolean {
  if (s.popping) return false;
  return dir === 'in' || !s.poppedOut;
}

/**
 * Whether a viewer `status` shows that a pop error is stale: a popped-out window is up (the
 * pop-out, or a relaunch of the window, succeeded after the error). A failed pop-out never
 * reports this, so its error stays until the next action.
 */
export function statusClearsPopError(status: { connected: boolean; popped_out?: boolean }): boolean {
  return status.connected && status.popped_out === true;
}

/**
 * Where a page dialog (alert, confirm, prompt, beforeunload) is answered: in the pane's
 * overlay only while the browser is in the pane. Popped out (or popping) the window shows it
 * and is where the user is; the pane's stub only notes it, and nothing may block "Pop back in".
 */
export function dialogInPane(s: { poppedOut: boolean; popping: 'out' | 'in' | null }): boolean {
  return !s.poppedOut && s.popping === null;
}

/**
 * The banner for a failed pop in direction `dir` with the sidecar's `message`: its display
 * reasons are sentences of their own ("Couldn't open a window on display :99: …", protocol
 * §8.5) and are shown as they are; anything else gets "Couldn't pop out: " (or back in).
 */
export function popErrorText(dir: 'out' | 'in', message: string): string {
  if (message.startsWith("Couldn't")) return message;
  return `${dir === 'out' ? "Couldn't pop out" : "Couldn't pop back in"}: ${message}`;
}
