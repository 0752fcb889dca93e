// Who drives which browser pane (issue 26; protocol §9.7, §10 `{"type":"drivers"}`): the
// sidecar pushes the map on the UI channel, the pane header names the driving terminal, and
// the pane menu's "Let tN drive this" hands a pane over (`PUT /api/drivers`).
//
// Architecture invariant: the sidecar owns the map; this is its read-only mirror (a handover
// is a request to the sidecar, whose next push changes what is shown).

import { api } from '../api/client';

const BROWSER_HANDLE_RE = /^b[1-9][0-9]{0,8}$/;
const TERMINAL_HANDLE_RE = /^t[1-9][0-9]{0,8}$/;
/** Most entries kept from one message (a wall has far fewer browser panes). */
const MAX_DRIVERS = 1024;

/**
 * Parses a `drivers` message's map: browser handle → terminal handle. Returns null when it
 * is not an object of such pairs (the whole message is then ignored, never half-applied).
 */
export function parseDrivers(v: unknown): Record<string, string> | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const out: Record<string, string> = {};
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length > MAX_DRIVERS) return null;
  for (const [pane, terminal] of entries) {
    if (!BROWSER_HANDLE_RE.test(pane) || typeof terminal !== 'string' || !TERMINAL_HANDLE_RE.test(terminal)) return null;
    out[pane] = terminal;
  }
  return out;
}

/** The drivers as the sidecar last said, for React (`useSyncExternalStore`). */
export class Drivers {
  private map: Readonly<Record<string, string>> = {};
  private readonly listeners = new Set<() => void>();

  /** Replaces the map (a `drivers` message) and tells every subscriber. */
  set(map: Record<string, string>): void {
    this.map = Object.freeze({ ...map });
    for (const l of this.listeners) l();
  }

  /** The current map (a new object after each `set`). */
  readonly getSnapshot = (): Readonly<Record<string, string>> => this.map;

  /** Calls `l` on every change; returns the unsubscribe. */
  readonly subscribe = (l: () => void): (() => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };

  /** The terminal handle driving browser pane `handle`, if any. */
  driverOf(handle: string | null | undefined): string | null {
    return (handle && this.map[handle]) || null;
  }

  /**
   * The human hands browser pane `pane` to terminal `terminal` (`PUT /api/drivers`); resolves
   * once the sidecar took it (its push updates the map). Rejects with the sidecar's error.
   */
  async handOver(pane: string, terminal: string): Promise<void> {
    const r = await api.handOver(pane, terminal);
    const m = parseDrivers(r.drivers);
    if (m) this.set(m);
  }
}
