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

/** A browser pane handed to the human (issue 26): why, and which terminal asked. */
export interface Handoff {
  reason: string;
  by: string;
}

/** Longest reason shown (the sidecar bounds it at 200 characters). */
const MAX_REASON_CHARS = 200;

/**
 * Parses a `drivers` message's `handoffs`: browser handle → `{reason, by}`. Missing: none.
 * Returns null when malformed (the message is then ignored).
 */
export function parseHandoffs(v: unknown): Record<string, Handoff> | null {
  if (v === undefined) return {};
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const out: Record<string, Handoff> = {};
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length > MAX_DRIVERS) return null;
  for (const [pane, h] of entries) {
    if (!BROWSER_HANDLE_RE.test(pane) || typeof h !== 'object' || h === null) return null;
    const { reason, by } = h as Record<string, unknown>;
    if (typeof reason !== 'string' || typeof by !== 'string' || reason.length > MAX_REASON_CHARS * 2 || by.length > 32) return null;
    out[pane] = { reason, by };
  }
  return out;
}

/** What the sidecar last said: drivers and handoffs. */
export interface DriversState {
  drivers: Readonly<Record<string, string>>;
  handoffs: Readonly<Record<string, Handoff>>;
}

/** The drivers and handoffs as the sidecar last said, for React (`useSyncExternalStore`). */
export class Drivers {
  private map: Readonly<Record<string, string>> = {};
  private state: DriversState = { drivers: {}, handoffs: {} };
  private readonly listeners = new Set<() => void>();

  /** Replaces the map (a `drivers` message) and, when given, the handoffs; tells every subscriber. */
  set(map: Record<string, string>, handoffs?: Record<string, Handoff>): void {
    this.map = Object.freeze({ ...map });
    this.state = { drivers: this.map, handoffs: Object.freeze({ ...(handoffs ?? this.state.handoffs) }) };
    for (const l of this.listeners) l();
  }

  /** The current driver map (a new object after each `set`). */
  readonly getSnapshot = (): Readonly<Record<string, string>> => this.map;

  /** Drivers and handoffs (a new object after each `set`). */
  readonly getState = (): DriversState => this.state;

  /** The human answers the handoff of browser pane `pane` (`POST /api/handoffs/{pane}`). */
  async answer(pane: string, answer: 'done' | 'decline'): Promise<void> {
    await api.answerHandoff(pane, answer);
  }

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
