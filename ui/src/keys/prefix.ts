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
  | { kind: 'promptNext' }
  /** workspaces (DESIGN §14): a new one, the next / previous, one by its digit (1…9, 0 the tenth), rename and close the one on screen */
  | { kind: 'newWorkspace' }
  | { kind: 'nextWorkspace' }
  | { kind: 'prevWorkspace' }
  | { kind: 'selectWorkspace'; digit: number }
  | { kind: 'renameWorkspace' }
  | { kind: 'closeWorkspace' }
  /** move the focused pane to a new workspace (tmux's break-pane) */
  | { kind: 'breakPane' };

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

/** The prefix key: Ctrl plus this letter (without Alt/Meta), unless the config says otherwise. */
export const PREFIX_LETTER = 'b';

/** The prefix letter and the key after it for each action (the config's `[keys]`). */
export interface Keymap {
  prefixLetter: string;
  /** `KeyboardEvent.key` → action */
  bindings: Readonly<Record<string, Action>>;
}

const MODIFIER_KEYS = new Set(['Shift', 'Control', 'Alt', 'Meta', 'AltGraph', 'CapsLock', 'Dead', 'Compose']);

/** The built-in bindings (docs/config.md `[keys.bindings]`). */
export const BINDINGS: Record<string, Action> = {
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
  '>': { kind: 'contextMenu' },
  a: { kind: 'nextAttention' },
  '[': { kind: 'promptPrev' },
  ']': { kind: 'promptNext' },
  c: { kind: 'newWorkspace' },
  n: { kind: 'nextWorkspace' },
  p: { kind: 'prevWorkspace' },
  ',': { kind: 'renameWorkspace' },
  '&': { kind: 'closeWorkspace' },
  '!': { kind: 'breakPane' },
  ...Object.fromEntries(Array.from({ length: 10 }, (_, d) => [String(d), { kind: 'selectWorkspace', digit: d } as Action])),
};

export const DEFAULT_KEYMAP: Keymap = { prefixLetter: PREFIX_LETTER, bindings: BINDINGS };

export function isPrefix(k: Keystroke, letter: string = PREFIX_LETTER): boolean {
  return k.ctrl && !k.alt && !k.meta && k.key.toLowerCase() === letter;
}

/** One step of the machine under `keymap` (default: the built-in one). */
export function step(state: PrefixState, k: Keystroke, keymap: Keymap = DEFAULT_KEYMAP): { state: PrefixState; decision: Decision } {
  const isPrefix_ = (x: Keystroke) => isPrefix(x, keymap.prefixLetter);
  if (!state.armed) {
    if (isPrefix_(k)) return { state: { armed: true }, decision: { kind: 'consume' } };
    return { state, decision: { kind: 'pass' } };
  }
  // Armed: modifiers alone (Shift on the way to `%`) keep it armed.
  if (MODIFIER_KEYS.has(k.key)) return { state, decision: { kind: 'consume' } };
  if (isPrefix_(k)) return { state: IDLE, decision: { kind: 'action', action: { kind: 'sendPrefix' } } };
  const action = k.ctrl || k.alt || k.meta || !Object.hasOwn(keymap.bindings, k.key) ? undefined : keymap.bindings[k.key];
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

  /** `keymap`: the prefix and bindings in force, asked at each key (the config may change them live). */
  constructor(
    private readonly onArmed: (armed: boolean) => void = () => undefined,
    private readonly keymap: () => Keymap = () => DEFAULT_KEYMAP,
  ) {}

  get armed(): boolean {
    return this.state.armed;
  }

  /** Steps the machine with `k`; returns what to do with the key. */
  feed(k: Keystroke): Decision {
    const was = this.state.armed;
    const r = step(this.state, k, this.keymap());
    this.state = r.state;
    if (r.state.armed !== was) this.onArmed(r.state.armed);
    return r.decision;
  }
}
