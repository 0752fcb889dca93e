// Pure: the `[agent.sealed]` policy (issue 24; docs/config.md) as the config snapshot carries
// it, the Settings panel's levers and limits (tier, one plain line, bounds), and what the
// panel writes (`PATCH /api/config/agent-sealed`, protocol §4).
//
// Architecture invariant: pure; no DOM. The sidecar bounds every value again on write; the
// bounds here only keep the panel from sending what it would refuse.

/** The policy in force (the file's key names). */
export interface SealedPolicy {
  enabled: boolean;
  discovery: boolean;
  signatures: boolean;
  focus_walk: boolean;
  focus_walk_max_steps: number;
  focus_walk_restore: boolean;
  part_highlight: boolean;
  force_open: boolean;
  max_frames: number;
  max_controls: number;
  crop_max_side: number;
  scans_per_minute: number;
}

/** SAFE: read-only; VISIBLE: the page or the user can notice it; RISKY: changes what the page's scripts get. */
export type Tier = 'SAFE' | 'VISIBLE' | 'RISKY';

export type SwitchKey = 'discovery' | 'signatures' | 'focus_walk' | 'focus_walk_restore' | 'part_highlight' | 'force_open';
export type LimitKey = 'focus_walk_max_steps' | 'max_frames' | 'max_controls' | 'crop_max_side' | 'scans_per_minute';

/** One switch of the panel: its key, label, tier badge (none for a sub-option) and one plain line. */
export interface Lever {
  key: SwitchKey;
  label: string;
  tier: Tier | null;
  line: string;
}

/** The levers, in the panel's order (the list; tiers from the plan). */
export const LEVERS: readonly Lever[] = [
  { key: 'discovery', label: 'Sealed discovery', tier: 'SAFE', line: 'An agent that asks may list controls inside closed shadow roots (role, name, state, position; never values).' },
  { key: 'signatures', label: 'Component signatures', tier: 'SAFE', line: 'A closed host shows a short hash of its public surface, so an agent can recognise a component.' },
  { key: 'focus_walk', label: 'Focus walk', tier: 'VISIBLE', line: 'An agent may press Tab through a component to reach its controls; this moves the focus.' },
  { key: 'focus_walk_restore', label: 'Restore focus after a walk', tier: null, line: 'Focus goes back where it was when a walk never reaches the component.' },
  { key: 'part_highlight', label: 'Part highlight', tier: 'VISIBLE', line: 'Outlines a component’s exported parts before a screenshot; the page can see the added style.' },
  { key: 'force_open', label: 'Force-open', tier: 'RISKY', line: 'New documents in screencast panes get closed roots opened at load; the page can detect it.' },
];

/** One numeric limit: key, label, unit and bounds (inclusive; docs/config.md). */
export interface Limit {
  key: LimitKey;
  label: string;
  min: number;
  max: number;
}

export const LIMITS: readonly Limit[] = [
  { key: 'focus_walk_max_steps', label: 'Focus walk: most steps', min: 1, max: 64 },
  { key: 'max_frames', label: 'Most frames read', min: 1, max: 64 },
  { key: 'max_controls', label: 'Most controls listed', min: 1, max: 2000 },
  { key: 'crop_max_side', label: 'Crop: longest side (px)', min: 64, max: 4096 },
  { key: 'scans_per_minute', label: 'Scans per minute per tab', min: 1, max: 120 },
];

const BOOL_KEYS = ['enabled', ...LEVERS.map((l) => l.key)] as const;

/**
 * `config.agent.sealed` of a snapshot's `config`, or null when it is absent or any key is
 * missing or of the wrong kind (the panel then says the sidecar does not offer it).
 */
export function parseSealed(config: unknown): SealedPolicy | null {
  const agent = (config as { agent?: unknown } | null)?.agent;
  const s = (agent as { sealed?: unknown } | null | undefined)?.sealed;
  if (typeof s !== 'object' || s === null || Array.isArray(s)) return null;
  const o = s as Record<string, unknown>;
  for (const k of BOOL_KEYS) if (typeof o[k] !== 'boolean') return null;
  for (const l of LIMITS) if (typeof o[l.key] !== 'number' || !Number.isInteger(o[l.key])) return null;
  const out: Record<string, unknown> = {};
  for (const k of BOOL_KEYS) out[k] = o[k];
  for (const l of LIMITS) out[l.key] = o[l.key];
  return out as unknown as SealedPolicy;
}

/** True if and only if force-open is in force: the policy on, the lever on, and no environment lock. */
export function forceOpenArmed(policy: SealedPolicy | null, envLocked: boolean): boolean {
  return !!policy && !envLocked && policy.enabled && policy.force_open;
}

/** A limit typed in the panel as a value to write, or the reason it is refused (bounds from `LIMITS`). */
export function checkLimit(key: LimitKey, text: string): { ok: true; value: number } | { ok: false; reason: string } {
  const l = LIMITS.find((x) => x.key === key)!;
  const t = text.trim();
  const v = /^\d+$/.test(t) ? Number(t) : NaN;
  if (!Number.isInteger(v) || v < l.min || v > l.max) return { ok: false, reason: `${l.label} must be a whole number from ${l.min} to ${l.max}` };
  return { ok: true, value: v };
}
