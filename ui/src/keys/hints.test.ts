import { describe, expect, it } from 'vitest';
import { boundKey, keyCap, keyHint, prefixCap, withHint } from './hints';
import { BINDINGS, DEFAULT_KEYMAP, type Keymap } from './prefix';

describe('key hints', () => {
  it('print the built-in prefix and keys', () => {
    expect(prefixCap(DEFAULT_KEYMAP)).toBe('Ctrl-b');
    expect(keyHint(DEFAULT_KEYMAP, { kind: 'splitRight' })).toBe('Ctrl-b %');
    expect(keyHint(DEFAULT_KEYMAP, { kind: 'focusDir', dir: 'left' })).toBe('Ctrl-b ←');
    expect(withHint('Zoom', DEFAULT_KEYMAP, { kind: 'zoom' })).toBe('Zoom (Ctrl-b z)');
  });

  it('follow a rebound prefix and key', () => {
    const km: Keymap = { prefixLetter: 'a', bindings: { ...BINDINGS, '|': { kind: 'splitRight' } } };
    delete (km.bindings as Record<string, unknown>)['%'];
    expect(keyHint(km, { kind: 'splitRight' })).toBe('Ctrl-a |');
    expect(keyHint(km, { kind: 'zoom' })).toBe('Ctrl-a z');
  });

  it('say nothing for an unbound action, and tell focus directions apart', () => {
    const km: Keymap = { prefixLetter: 'b', bindings: { z: { kind: 'zoom' } } };
    expect(boundKey(km, { kind: 'close' })).toBeNull();
    expect(keyHint(km, { kind: 'close' })).toBeNull();
    expect(withHint('Close', km, { kind: 'close' })).toBe('Close');
    expect(boundKey(DEFAULT_KEYMAP, { kind: 'focusDir', dir: 'up' })).toBe('ArrowUp');
    expect(keyCap(' ')).toBe('Space');
  });
});
