// Pure: the user's configuration as the sidecar sends it (protocol §10 `config`,
// `GET /api/config`; docs/config.md), parsed field by field, and what it means for a
// terminal's xterm.js options and the prefix bindings.
//
// Architecture invariant: pure; no DOM. The sidecar has already bounded every value; this
// parser only refuses shapes it does not know (a malformed snapshot is dropped whole).
import type { ITheme } from '@xterm/xterm';
import type { Action } from '../keys/prefix';
import type { RendererSetting } from '../terminal/renderer';
import { DARK, LIGHT, type Scheme } from '../terminal/theme';
import { type SealedPolicy, parseSealed } from './sealed';

export type ThemeMode = 'system' | 'light' | 'dark';
export type CursorStyle = 'block' | 'underline' | 'bar';

/** The configuration in force (the keys the UI uses). */
export interface UiConfig {
  theme: { mode: ThemeMode; colors: Record<string, string> };
  /** font size in CSS pixels; line height as a multiple of it */
  font: { family: string; size: number; lineHeight: number };
  cursor: { style: CursorStyle; blink: boolean };
  /** lines kept above the screen */
  scrollbackLines: number;
  /** `terminal.renderer`: which xterm renderer draws terminals (`auto`: the machine decides) */
  terminalRenderer: RendererSetting;
  /** the prefix letter (Ctrl plus it) */
  prefixLetter: string;
  /** key after the prefix → action */
  bindings: Record<string, Action>;
  defaultMode: 'iframe' | 'screencast';
  /** the Display menu's viewport presets outside a project: the sidecar's list (built-in, then `browser.viewports`) */
  presets: { name: string; width: number; height: number; dpr: number; mobile?: boolean }[];
  desktopNotifications: boolean;
  /** `[agent.sealed]` (config/sealed.ts); null when the sidecar sends none */
  sealed: SealedPolicy | null;
  /** `[agent] show_secrets`: `network --id` and `--har` show credential headers; null when the sidecar sends none */
  showSecrets: boolean | null;
}

/** Why the file as it is now is not applied (its line and column when the parser gave a span). */
export interface ConfigProblem {
  file: string;
  line: number | null;
  column: number | null;
  message: string;
}

export interface ConfigSnapshot {
  file: string;
  revision: number;
  config: UiConfig;
  error: ConfigProblem | null;
  unknownKeys: string[];
  /** sections the environment overrides (`agent.sealed` under `PORTHOLE_AGENT_SEALED=off`): shown locked */
  envLocks: string[];
}

/** Action names of `[keys.bindings]` → the prefix machine's actions. */
export const ACTION_NAMES: Record<string, Action> = {
  'split-right': { kind: 'splitRight' },
  'split-down': { kind: 'splitDown' },
  'focus-left': { kind: 'focusDir', dir: 'left' },
  'focus-right': { kind: 'focusDir', dir: 'right' },
  'focus-up': { kind: 'focusDir', dir: 'up' },
  'focus-down': { kind: 'focusDir', dir: 'down' },
  'focus-next': { kind: 'focusNext' },
  close: { kind: 'close' },
  zoom: { kind: 'zoom' },
  minimize: { kind: 'minimize' },
  'swap-prev': { kind: 'swapPrev' },
  'swap-next': { kind: 'swapNext' },
  'open-browser': { kind: 'openBrowser' },
  'context-menu': { kind: 'contextMenu' },
  'next-attention': { kind: 'nextAttention' },
  'prompt-prev': { kind: 'promptPrev' },
  'prompt-next': { kind: 'promptNext' },
  'new-workspace': { kind: 'newWorkspace' },
  'next-workspace': { kind: 'nextWorkspace' },
  'prev-workspace': { kind: 'prevWorkspace' },
  'rename-workspace': { kind: 'renameWorkspace' },
  'close-workspace': { kind: 'closeWorkspace' },
  'break-pane': { kind: 'breakPane' },
  ...Object.fromEntries(Array.from({ length: 10 }, (_, d) => [`workspace-${d}`, { kind: 'selectWorkspace', digit: d } as Action])),
};

/** The built-in configuration (the sidecar's defaults; used until it answers). */
export const DEFAULT_CONFIG: UiConfig = {
  theme: { mode: 'system', colors: {} },
  font: { family: '"JetBrains Mono", "Fira Code", "Cascadia Mono", "DejaVu Sans Mono", Menlo, Consolas, monospace', size: 13, lineHeight: 1.15 },
  cursor: { style: 'block', blink: true },
  scrollbackLines: 10000,
  terminalRenderer: 'auto',
  prefixLetter: 'b',
  bindings: bindingsOf({
    'split-right': '%',
    'split-down': '"',
    'focus-left': 'ArrowLeft',
    'focus-right': 'ArrowRight',
    'focus-up': 'ArrowUp',
    'focus-down': 'ArrowDown',
    'focus-next': 'o',
    close: 'x',
    zoom: 'z',
    minimize: 'm',
    'swap-prev': '{',
    'swap-next': '}',
    'open-browser': 'b',
    'context-menu': '>',
    'next-attention': 'a',
    'prompt-prev': '[',
    'prompt-next': ']',
    'new-workspace': 'c',
    'next-workspace': 'n',
    'prev-workspace': 'p',
    'rename-workspace': ',',
    'close-workspace': '&',
    'break-pane': '!',
    ...Object.fromEntries(Array.from({ length: 10 }, (_, d) => [`workspace-${d}`, String(d)])),
  })!,
  defaultMode: 'iframe',
  presets: [],
  desktopNotifications: true,
  sealed: null,
  showSecrets: null,
};

function bindingsOf(byAction: Record<string, unknown>): Record<string, Action> | null {
  const out: Record<string, Action> = {};
  for (const [name, key] of Object.entries(byAction)) {
    const action = ACTION_NAMES[name];
    if (!action) continue;
    if (typeof key !== 'string' || !key) return null;
    // `Space` names the key whose `KeyboardEvent.key` is ' '.
    out[key === 'Space' ? ' ' : key] = action;
  }
  return out;
}

const obj = (v: unknown): Record<string, unknown> | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const bool = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);
const oneOf = <T extends string>(v: unknown, options: readonly T[]): T | null => (options.includes(v as T) ? (v as T) : null);

function parseProblem(v: unknown): ConfigProblem | null | undefined {
  if (v === null) return null;
  const o = obj(v);
  if (!o) return undefined;
  const file = str(o.file);
  const message = str(o.message);
  if (file === null || message === null) return undefined;
  return { file, message, line: num(o.line), column: num(o.column) };
}

/**
 * A snapshot (`GET /api/config`'s body, or a `config` message without its `type`), or null
 * when any field the UI uses is missing or of the wrong kind.
 */
export function parseSnapshot(v: unknown): ConfigSnapshot | null {
  const o = obj(v);
  const c = obj(o?.config);
  if (!o || !c) return null;
  const theme = obj(c.theme);
  const font = obj(c.font);
  const cursor = obj(c.cursor);
  const terminal = obj(c.terminal);
  const keys = obj(c.keys);
  const browser = obj(c.browser);
  const notifications = obj(c.notifications);
  const colors = obj(theme?.colors);
  const mode = oneOf(theme?.mode, ['system', 'light', 'dark'] as const);
  const family = str(font?.family);
  const size = num(font?.size);
  const lineHeight = num(font?.line_height);
  const style = oneOf(cursor?.style, ['block', 'underline', 'bar'] as const);
  const blink = bool(cursor?.blink);
  const scrollback = num(terminal?.scrollback_lines);
  // Absent from an older sidecar's snapshot: automatic.
  const renderer = terminal?.renderer === undefined ? 'auto' : oneOf(terminal.renderer, ['auto', 'webgl', 'dom'] as const);
  const prefix = str(keys?.prefix);
  const bindingTable = obj(keys?.bindings);
  const bindings = bindingTable && bindingsOf(bindingTable);
  const defaultMode = oneOf(browser?.default_mode, ['iframe', 'screencast'] as const);
  const desktop = bool(notifications?.desktop);
  const error = parseProblem(o.error);
  const file = str(o.file);
  const revision = num(o.revision);
  const presetsRaw = Array.isArray(o.presets) ? (o.presets as unknown[]) : null;
  const presets = presetsRaw?.map((p) => {
    const q = obj(p);
    const name = str(q?.name);
    const width = num(q?.width);
    const height = num(q?.height);
    const dpr = num(q?.dpr);
    if (name === null || width === null || height === null || dpr === null) return null;
    return q?.mobile === true ? { name, width, height, dpr, mobile: true } : { name, width, height, dpr };
  });
  const unknownKeys = Array.isArray(o.unknown_keys) ? o.unknown_keys.filter((k): k is string => typeof k === 'string') : [];
  const envLocks = Array.isArray(o.env_locks) ? o.env_locks.filter((k): k is string => typeof k === 'string') : [];
  if (
    !mode || !colors || family === null || size === null || lineHeight === null || !style || blink === null ||
    scrollback === null || !renderer || !prefix || !/^C-[a-z]$/.test(prefix) || !bindings || !defaultMode || desktop === null ||
    error === undefined || file === null || revision === null || !presets || presets.some((p) => p === null)
  ) {
    return null;
  }
  const colorTable: Record<string, string> = {};
  for (const [k, val] of Object.entries(colors)) if (typeof val === 'string') colorTable[k] = val;
  return {
    file,
    revision,
    error,
    unknownKeys,
    envLocks,
    config: {
      theme: { mode, colors: colorTable },
      font: { family, size, lineHeight },
      cursor: { style, blink },
      scrollbackLines: scrollback,
      terminalRenderer: renderer,
      prefixLetter: prefix.slice(2),
      bindings,
      defaultMode,
      presets: presets as UiConfig['presets'],
      desktopNotifications: desktop,
      sealed: parseSealed(c),
      showSecrets: showSecretsOf(c),
    },
  };
}

/** `agent.show_secrets` of the config object, or null when it is not a boolean there. */
function showSecretsOf(config: unknown): boolean | null {
  const agent = (config as { agent?: unknown } | null)?.agent as { show_secrets?: unknown } | null | undefined;
  return typeof agent?.show_secrets === 'boolean' ? agent.show_secrets : null;
}

/** `cursor_accent` → `cursorAccent`: the config's snake_case slot names to xterm.js's. */
function camel(slot: string): string {
  return slot.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** The terminal theme for `config` when the desktop prefers `system`: the mode's theme with the overrides on top. */
export function themeOf(config: UiConfig, system: Scheme): ITheme {
  const scheme = config.theme.mode === 'system' ? system : config.theme.mode;
  const theme: ITheme = { ...(scheme === 'dark' ? DARK : LIGHT) };
  for (const [slot, colour] of Object.entries(config.theme.colors)) (theme as Record<string, string>)[camel(slot)] = colour;
  return theme;
}

/** xterm.js options for `config` (everything a live terminal can change). */
export function terminalOptions(config: UiConfig, system: Scheme) {
  return {
    fontFamily: config.font.family,
    fontSize: config.font.size,
    lineHeight: config.font.lineHeight,
    cursorStyle: config.cursor.style,
    cursorBlink: config.cursor.blink,
    scrollback: config.scrollbackLines,
    theme: themeOf(config, system),
  };
}

/** The options type `terminalOptions` returns. */
export type TerminalOptions = ReturnType<typeof terminalOptions>;

/** The `Problem` as one line: `file:line:column: message`. */
export function problemText(p: ConfigProblem): string {
  const at = p.line !== null && p.column !== null ? `:${p.line}:${p.column}` : '';
  return `${p.file}${at}: ${p.message}`;
}
