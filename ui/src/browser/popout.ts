// Pop-out (DESIGN §4.4, protocol §8.5): the capability as the UI offers it, and what a
// screencast pane shows while its browser is popped out. Pure: no DOM, no fetch.
import type { PopoutCapability } from '../api/protocol';

/** Whether "Pop out" can be chosen, and the reason shown beside it when not. */
export interface PopoutOffer {
  available: boolean;
  /** a sentence for the user; null when available */
  reason: string | null;
}

/** Shown until `GET /api/capabilities` has answered. */
export const POPOUT_CHECKING: PopoutOffer = { available: false, reason: 'Checking whether a window can be shown…' };

/**
 * Parses `GET /api/capabilities`'s body. Throws (with what is wrong) unless it is
 * `{"popout":{"available":bool,"reason":string|null}}` with a reason exactly when unavailable.
 */
export function parseCapabilities(v: unknown): PopoutCapability {
  const p = typeof v === 'object' && v !== null ? (v as Record<string, unknown>).popout : undefined;
  if (typeof p !== 'object' || p === null) throw new Error('capabilities: no popout object');
  const { available, reason } = p as Record<string, unknown>;
  if (typeof available !== 'boolean') throw new Error('capabilities: popout.available is not a boolean');
  if (available ? reason !== null : typeof reason !== 'string' || reason === '') {
    throw new Error('capabilities: popout.reason must be null when available, else a sentence');
  }
  return { available, reason: reason as string | null };
}

/** The offer for a capability answer, or for the failure to get one. */
export function popoutOffer(cap: PopoutCapability | { error: string }): PopoutOffer {
  if ('error' in cap) return { available: false, reason: `Couldn't ask the sidecar: ${cap.error}` };
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
