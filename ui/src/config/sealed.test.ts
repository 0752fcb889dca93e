import { describe, expect, it } from 'vitest';
import { LEVERS, LIMITS, checkLimit, forceOpenArmed, parseSealed } from './sealed';
import { parseSnapshot } from './config';

/** `[agent.sealed]` as the sidecar sends it, with the defaults of docs/config.md. */
const DEFAULTS = {
  enabled: true,
  discovery: true,
  signatures: true,
  focus_walk: true,
  focus_walk_max_steps: 8,
  focus_walk_restore: true,
  part_highlight: false,
  force_open: false,
  max_frames: 16,
  max_controls: 200,
  crop_max_side: 1024,
  scans_per_minute: 6,
};

describe('[agent.sealed]', () => {
  it('parses the section and refuses a missing or mistyped key', () => {
    expect(parseSealed({ agent: { sealed: DEFAULTS } })).toEqual(DEFAULTS);
    expect(parseSealed({})).toBeNull();
    expect(parseSealed({ agent: { sealed: { ...DEFAULTS, force_open: 'yes' } } })).toBeNull();
    expect(parseSealed({ agent: { sealed: { ...DEFAULTS, max_frames: 1.5 } } })).toBeNull();
    const { max_controls: _, ...missing } = DEFAULTS;
    expect(parseSealed({ agent: { sealed: missing } })).toBeNull();
  });

  it('rides on the snapshot with the environment locks', () => {
    const snap = parseSnapshot({
      file: '/c/config.toml',
      revision: 1,
      error: null,
      unknown_keys: [],
      env_locks: ['agent.sealed'],
      presets: [],
      config: {
        theme: { mode: 'system', colors: {} },
        font: { family: 'Mono', size: 13, line_height: 1.15 },
        cursor: { style: 'block', blink: true },
        terminal: { scrollback_lines: 10 },
        keys: { prefix: 'C-b', bindings: {} },
        browser: { default_mode: 'iframe' },
        notifications: { desktop: true },
        agent: { sealed: { ...DEFAULTS, force_open: true } },
      },
    })!;
    expect(snap.envLocks).toEqual(['agent.sealed']);
    expect(snap.config.sealed?.force_open).toBe(true);
    expect(forceOpenArmed(snap.config.sealed, true)).toBe(false);
    expect(forceOpenArmed(snap.config.sealed, false)).toBe(true);
    expect(forceOpenArmed({ ...snap.config.sealed!, enabled: false }, false)).toBe(false);
    expect(forceOpenArmed(null, false)).toBe(false);
  });

  it('has one lever per switch of the section, RISKY only for force-open', () => {
    expect(LEVERS.map((l) => l.key).sort()).toEqual(Object.keys(DEFAULTS).filter((k) => typeof (DEFAULTS as Record<string, unknown>)[k] === 'boolean' && k !== 'enabled').sort());
    expect(LEVERS.filter((l) => l.tier === 'RISKY').map((l) => l.key)).toEqual(['force_open']);
    expect(LIMITS.map((l) => l.key).sort()).toEqual(Object.keys(DEFAULTS).filter((k) => typeof (DEFAULTS as Record<string, unknown>)[k] === 'number').sort());
  });

  it('checks a typed limit against its bounds', () => {
    const check = (key: Parameters<typeof checkLimit>[0], text: string, expected: number | string) => {
      const r = checkLimit(key, text);
      expect(r.ok ? r.value : r.reason).toEqual(typeof expected === 'number' ? expected : expect.stringContaining(expected));
    };
    check('max_frames', '64', 64);
    check('max_frames', ' 1 ', 1);
    check('max_frames', '65', 'from 1 to 64');
    check('max_frames', '0', 'from 1 to 64');
    check('crop_max_side', '63', 'from 64 to 4096');
    check('max_controls', '2000', 2000);
    check('scans_per_minute', '1.5', 'whole number');
    check('scans_per_minute', '', 'whole number');
    check('focus_walk_max_steps', '-3', 'whole number');
  });
});
