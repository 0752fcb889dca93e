import { describe, expect, it } from 'vitest';
import { BINDINGS, IDLE, step } from '../keys/prefix';
import { DEFAULT_CONFIG, parseSnapshot, problemText, terminalOptions } from './config';

/** A snapshot as the sidecar sends it (sidecar/src/config, protocol §10). */
function wire(over: Record<string, unknown> = {}, error: unknown = null) {
  return {
    file: '/c/porthole/config.toml',
    revision: 2,
    error,
    unknown_keys: ['font.weight'],
    presets: [
      { name: 'Desktop', width: 1440, height: 900, dpr: 1 },
      { name: 'Kiosk', width: 1080, height: 1920, dpr: 1 },
    ],
    config: {
      theme: { mode: 'dark', colors: { background: '#101010', bright_red: '#ff0000' } },
      font: { family: 'Mono', size: 18, line_height: 1.5 },
      cursor: { style: 'bar', blink: false },
      terminal: { scrollback_lines: 500 },
      keys: { prefix: 'C-a', bindings: { 'split-right': '|', zoom: 'Space' } },
      shell: { program: '', args: [], integration: true },
      browser: { default_mode: 'screencast', viewports: [{ name: 'Kiosk', width: 1080, height: 1920, dpr: 1 }] },
      notifications: { desktop: false },
      ...over,
    },
  };
}

describe('config snapshot', () => {
  it('parses what the sidecar sends', () => {
    const s = parseSnapshot(wire())!;
    expect(s.config.font).toEqual({ family: 'Mono', size: 18, lineHeight: 1.5 });
    expect(s.config.prefixLetter).toBe('a');
    expect(s.config.bindings['|']).toEqual({ kind: 'splitRight' });
    expect(s.config.bindings[' ']).toEqual({ kind: 'zoom' });
    expect(s.config.presets).toEqual([
      { name: 'Desktop', width: 1440, height: 900, dpr: 1 },
      { name: 'Kiosk', width: 1080, height: 1920, dpr: 1 },
    ]);
    expect(s.config.desktopNotifications).toBe(false);
    expect(s.unknownKeys).toEqual(['font.weight']);
  });

  it('drops a malformed snapshot whole', () => {
    for (const bad of [null, {}, wire({ font: { family: 'x', size: '18', line_height: 1 } }), wire({ keys: { prefix: 'b', bindings: {} } }), wire({}, { file: 1 }), { ...wire(), presets: [{ name: 'x', width: '1' }] }, { ...wire(), presets: undefined }]) {
      expect(parseSnapshot(bad)).toBeNull();
    }
  });

  it('turns into xterm options with colour overrides over the mode', () => {
    const o = terminalOptions(parseSnapshot(wire())!.config, 'light');
    expect(o.fontSize).toBe(18);
    expect(o.cursorStyle).toBe('bar');
    expect(o.scrollback).toBe(500);
    expect(o.theme.background).toBe('#101010');
    expect(o.theme.brightRed).toBe('#ff0000');
    expect(o.theme.foreground).toBe('#d5d9e0'); // dark mode's, though the desktop is light
    expect(terminalOptions(DEFAULT_CONFIG, 'light').theme.background).toBe('#fbfbfc');
  });

  it('rebinds the prefix and its keys', () => {
    const keymap = parseSnapshot(wire())!.config;
    const key = (k: string, ctrl = false) => ({ key: k, ctrl, alt: false, meta: false, shift: false });
    const armed = step(IDLE, key('a', true), keymap);
    expect(armed.state.armed).toBe(true);
    expect(step(armed.state, key('|'), keymap).decision).toEqual({ kind: 'action', action: { kind: 'splitRight' } });
    expect(step(armed.state, key('%'), keymap).decision).toEqual({ kind: 'consume' });
    expect(step(IDLE, key('b', true), keymap).decision).toEqual({ kind: 'pass' });
  });

  it('names file, line and column of a problem', () => {
    const s = parseSnapshot(wire({}, { file: '/c/config.toml', line: 3, column: 8, message: 'invalid string' }))!;
    expect(problemText(s.error!)).toBe('/c/config.toml:3:8: invalid string');
  });
});

describe('the built-in bindings', () => {
  it('are the same in the config defaults and the prefix machine (workspaces included)', () => {
    expect(DEFAULT_CONFIG.bindings).toEqual(BINDINGS);
    expect(BINDINGS['c']).toEqual({ kind: 'newWorkspace' });
    expect(BINDINGS['0']).toEqual({ kind: 'selectWorkspace', digit: 0 });
  });
});
