// The tmux-style prefix as a pure state machine: keystroke in, decision out.
//
// Architecture invariant: pure; no DOM. The caller turns a KeyboardEvent into a `Keystroke`
// (see `keystrokeOf`) and acts on the returned decision.

export type Action =
  | { kind: 'splitRight' }
  | { kind: 'splitDown' }
  | { kind: 'focusDir'; dir: 'left' | 'right' | 'up' | 'down' }
  | { kind: 'focusNext' }
  | { kind: 'close' }
  | { kind: 'zoom' }
  | { kind: 'minimize' }
  | { kind: 'swapPrev' }
  | { kind: 'swapNext' }
  /** open a browser pane beside the focused pane (placement rule: browser/placement.ts) */
  | { kind: 'openBrowser' }
  /** open the focused terminal pane's context menu (its ports first) */
  | { kind: 'contextMenu' }
  /** send a literal prefix byte (Ctrl-b = 0x02) to the focused terminal */
  | { kind: 'sendPrefix' }
  /** focus the next pane that wants attention (DESIGN §13) */
  | { kind: 'nextAttention' }
  /** scroll the focused terminal to its previous / next prompt (shell integration) */
  | { kind: 'promptPrev' }
  | { kind: 'promptNext' };

export interface Keystroke {
  /** `KeyboardEvent.key` */
  key: string;
  ctrl: boolean;
  alt: boolean;
  meta: boolean;
  shift: boolean;
}

export interface PrefixState {
  /** true after the prefix was pressed and before the next (non-modifier) key */
  armed: boolean;
}

export type Decision =
  /** not ours: let the key reach the terminal */
  | { kind: 'pass' }
  /** ours, nothing to do (arming, cancelling, a modifier while armed) */
  | { kind: 'consume' }
  | { kind: 'action'; action: Action };

export const IDLE: PrefixState = { armed: false };

/** The prefix key: Ctrl plus this letter (without Alt/Meta). */
export const PREFIX_LETTER = 'b';

const MODIFIER_KEYS = new Set(['Shift', 'Control', 'Alt', 'Meta', 'AltGraph', 'CapsLock', 'Dead', 'Compose']);

const BINDINGS: Record<string, Action> = {
  '%': { kind: 'splitRight' },
  '"': { kind: 'splitDown' },
  ArrowLeft: { kind: 'focusDir', dir: 'left' },
  ArrowRight: { kind: 'focusDir', dir: 'right' },
  ArrowUp: { kind: 'focusDir', dir: 'up' },
  ArrowDown: { kind: 'focusDir', dir: 'down' },
  o: { kind: 'focusNext' },
  x: { kind: 'close' },
  z: { kind: 'zoom' },
  m: { kind: 'minimize' },
  '{': { kind: 'swapPrev' },
  '}': { kind: 'swapNext' },
  b: { kind: 'openBrowser' },
  p: { kind: 'contextMenu' },
  a: { kind: 'nextAttention' },
  '[': { kind: 'promptPrev' },
  ']': { kind: 'promptNext' },
};

export function isPrefix(k: Keystroke): boolean {
  return k.ctrl && !k.alt && !k.meta && k.key.toLowerCase() === PREFIX_LETTER;
}

/** One step of the machine. */
export function step(state: PrefixState, k: Keystroke): { state: PrefixState; decision: Decision } {
  if (!state.armed) {
    if (isPrefix(k)) return { state: { armed: true }, decision: { kind: 'consume' } };
    return { state, decision: { kind: 'pass' } };
  }
  // Armed: modifiers alone (Shift on the way to `%`) keep it armed.
  if (MODIFIER_KEYS.has(k.key)) return { state, decision: { kind: 'consume' } };
  if (isPrefix(k)) return { state: IDLE, decision: { kind: 'action', action: { kind: 'sendPrefix' } } };
  const action = k.ctrl || k.alt || k.meta ? undefined : BINDINGS[k.key];
  // Any other key (Escape included) cancels the prefix and is swallowed, as in tmux.
  return { state: IDLE, decision: action ? { kind: 'action', action } : { kind: 'consume' } };
}

export function keystrokeOf(e: { key: string; ctrlKey: boolean; altKey: boolean; metaKey: boolean; shiftKey: boolean }): Keystroke {
  return { key: e.key, ctrl: e.ctrlKey, alt: e.altKey, meta: e.metaKey, shift: e.shiftKey };
}

/**
 * The one prefix state of the app: the window's own keydowns and the keys a framed page's
 * shim forwards (protocol §6.5 `key`) go through the same machine, so Ctrl-b pressed in one
 * and the next key in the other still make a pair. `onArmed` hears every change of `armed`.
 */
export class PrefixKeys {
  private state: PrefixState = IDLE;

  constructor(private readonly onArmed: (armed: boolean) => void = () => undefined) {}

  get armed(): boolean {
    return this.state.armed;
  }

  /** Steps the machine with `k`; returns what to do with the key. */
  feed(k: Keystroke): Decision {
    const was = this.state.armed;
    const r = step(this.state, k);
    this.state = r.state;
    if (r.state.armed !== was) this.onArmed(r.state.armed);
    return r.decision;
  }
}
