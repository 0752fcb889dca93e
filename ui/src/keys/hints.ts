// What the UI prints for a prefix binding ("Ctrl-b %"), from the keymap in force, so that a
// rebound prefix or key shows where the user reads it (menus, tooltips, the baseboard).
import type { Action, Keymap } from './prefix';

/** `KeyboardEvent.key` names printed as a user reads them on a key cap. */
const KEY_CAPS: Record<string, string> = {
  ArrowLeft: '←',
  ArrowRight: '→',
  ArrowUp: '↑',
  ArrowDown: '↓',
  ' ': 'Space',
  Enter: 'Enter',
  Tab: 'Tab',
  Escape: 'Esc',
};

/** The prefix key as printed: `Ctrl-b` for letter `b`. */
export function prefixCap(keymap: Keymap): string {
  return `Ctrl-${keymap.prefixLetter}`;
}

/** The key after the prefix as printed (`%`, `←`, `Space`). */
export function keyCap(key: string): string {
  return KEY_CAPS[key] ?? key;
}

/**
 * The key bound to `action` under `keymap` (the first in the keymap's order when several
 * are), or null when the action is unbound. Actions compare by value (`focusDir` by `dir`).
 */
export function boundKey(keymap: Keymap, action: Action): string | null {
  const want = JSON.stringify(action);
  for (const [key, a] of Object.entries(keymap.bindings)) if (JSON.stringify(a) === want) return key;
  return null;
}

/** "Ctrl-b %": the prefix then `action`'s key, as printed; null when the action is unbound. */
export function keyHint(keymap: Keymap, action: Action): string | null {
  const key = boundKey(keymap, action);
  return key === null ? null : `${prefixCap(keymap)} ${keyCap(key)}`;
}

/** `label` with its key hint in parentheses ("Zoom (Ctrl-b z)"), or `label` alone when unbound. */
export function withHint(label: string, keymap: Keymap, action: Action): string {
  const hint = keyHint(keymap, action);
  return hint ? `${label} (${hint})` : label;
}
