// Project files (`.porthole.toml`, docs/config.md "Project file") as the window sees them:
// what `GET /api/project` and the UI channel's `project_trust` message carry, parsed field by
// field, and the trust prompt's state (one at a time).
//
// The sidecar owns the files and the trust store; this module only shows what a file would
// start and passes the human's answer on (`POST /api/project/trust`). Pure apart from the
// `api` calls it is handed.

import { loopbackTarget } from '../ports/ports';
import { MAX_VIEWPORT_CSS_PX, MAX_VIEWPORT_DPR, MIN_VIEWPORT_CSS_PX, MIN_VIEWPORT_DPR } from '../api/protocol';

/** One terminal pane a layout starts. */
export interface PlannedPane {
  command: string[];
  cwd: string;
  split: 'right' | 'down' | null;
}

/** One browser pane a layout opens. */
export interface PlannedBrowser {
  port: number;
  url: string;
  mode: string | null;
}

/** A layout with absolute directories and URLs. */
export interface Plan {
  layout: string;
  panes: PlannedPane[];
  browsers: PlannedBrowser[];
}

/** A terminal's project file: `GET /api/project` when a file was found. */
export interface ProjectInfo {
  file: string;
  sha256: string;
  trusted: boolean;
  layouts: Plan[];
}

/** What the trust prompt shows: the file, its hash, every layout, and what to start after. */
export interface TrustQuestion {
  file: string;
  sha256: string;
  layouts: Plan[];
  /** the layout asked for (shown first) */
  layout: string | null;
  /** set when the human asked for the layout in this window: start it once trusted */
  start: { near: string; layout: string } | null;
}

const MAX_TEXT = 8192;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | null {
  return typeof v === 'string' && v.length <= MAX_TEXT ? v : null;
}

function parsePlan(v: unknown): Plan | null {
  if (!isObject(v) || !Array.isArray(v.panes) || !Array.isArray(v.browsers)) return null;
  const layout = str(v.layout);
  if (!layout || v.panes.length > 16 || v.browsers.length > 16) return null;
  const panes: PlannedPane[] = [];
  for (const p of v.panes) {
    if (!isObject(p) || !Array.isArray(p.command) || p.command.length === 0 || p.command.length > 256) return null;
    const command = p.command.map(str);
    const cwd = str(p.cwd);
    const split = p.split === 'right' || p.split === 'down' ? p.split : null;
    if (command.some((c) => c === null) || cwd === null || (p.split != null && split === null)) return null;
    panes.push({ command: command as string[], cwd, split });
  }
  const browsers: PlannedBrowser[] = [];
  for (const b of v.browsers) {
    if (!isObject(b) || typeof b.port !== 'number' || !Number.isInteger(b.port) || b.port < 1 || b.port > 65535) return null;
    const url = str(b.url);
    if (!url) return null;
    browsers.push({ port: b.port, url, mode: str(b.mode) });
  }
  return { layout, panes, browsers };
}

function parseLayouts(v: unknown): Plan[] | null {
  if (!Array.isArray(v) || v.length > 32) return null;
  const out = v.map(parsePlan);
  return out.some((p) => p === null) ? null : (out as Plan[]);
}

function isSha256(v: unknown): v is string {
  return typeof v === 'string' && /^[0-9a-f]{64}$/.test(v);
}

/**
 * Parses `GET /api/project`: null when no project file was found, else the file, whether it
 * is trusted and its layouts. Throws on a malformed answer.
 */
export function parseProjectInfo(v: unknown): ProjectInfo | null {
  if (!isObject(v)) throw new Error('malformed project answer');
  if (v.file === null) return null;
  const file = str(v.file);
  const layouts = parseLayouts(v.layouts);
  if (!file || !isSha256(v.sha256) || typeof v.trusted !== 'boolean' || !layouts) throw new Error('malformed project answer');
  return { file, sha256: v.sha256, trusted: v.trusted, layouts };
}

/** Parses the UI channel's `project_trust` message (protocol §10); null when malformed. */
export function parseTrustMessage(v: Record<string, unknown>): TrustQuestion | null {
  const file = str(v.file);
  const layouts = parseLayouts(v.layouts);
  if (!file || !isSha256(v.sha256) || !layouts) return null;
  const layout = v.layout === null || v.layout === undefined ? null : str(v.layout);
  return { file, sha256: v.sha256, layouts, layout, start: null };
}

/** A command as the human reads it: `sh -c LINE` shows LINE, an argv is joined by spaces. */
export function commandText(argv: readonly string[]): string {
  if (argv.length === 3 && argv[0] === '/bin/sh' && argv[1] === '-c') return argv[2];
  return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** The calls the prompt makes (the sidecar's API; faked in tests). */
export interface ProjectApi {
  project(terminal: string): Promise<unknown>;
  trust(file: string, sha256: string): Promise<unknown>;
  up(near: string, layout: string): Promise<unknown>;
}

/** The prompt's state: the question shown (null: none), whether an answer is being sent, the last error, and what the last start did. */
export interface PromptState {
  question: TrustQuestion | null;
  busy: boolean;
  error: string | null;
  done: string | null;
}

/** "Layout dev: 2 started, 1 reused" from `POST /api/control/up`'s answer. */
export function upSummary(v: unknown): string {
  const o = isObject(v) ? v : {};
  const items = [...(Array.isArray(o.panes) ? o.panes : []), ...(Array.isArray(o.browsers) ? o.browsers : [])];
  const reused = items.filter((i) => isObject(i) && i.reused === true).length;
  const layout = str(o.layout) ?? '?';
  return `Layout ${layout}: ${items.length - reused} started, ${reused} reused`;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * The trust prompt (one question at a time; a newer one replaces it) and starting a layout
 * from the window. Subscribe with `subscribe`, read with `state`.
 */
export class ProjectPrompts {
  private st: PromptState = { question: null, busy: false, error: null, done: null };
  private listeners = new Set<() => void>();

  constructor(private readonly api: ProjectApi) {}

  readonly subscribe = (fn: () => void) => {
    this.listeners.add(fn);
    return () => void this.listeners.delete(fn);
  };

  readonly state = (): PromptState => this.st;

  private set(p: Partial<PromptState>) {
    this.st = { ...this.st, ...p };
    for (const fn of this.listeners) fn();
  }

  /** Asks the human to trust a file (the sidecar refused `ph up` on it). */
  ask(q: TrustQuestion) {
    this.set({ question: q, busy: false, error: null, done: null });
  }

  /** The human declined: nothing is trusted, nothing starts. */
  dismiss() {
    this.set({ question: null, busy: false, error: null });
  }

  /**
   * Starts `layout` of the project of pane `near` (its handle), running on terminal
   * `terminal`: at once when the file is trusted, else after the human trusts it in the
   * prompt. Errors are shown in the prompt's notice.
   */
  async start(near: string, terminal: string, layout: string) {
    try {
      const info = parseProjectInfo(await this.api.project(terminal));
      if (!info) throw new Error('no .porthole.toml was found for this pane any more');
      if (!info.trusted) {
        this.ask({ file: info.file, sha256: info.sha256, layouts: info.layouts, layout, start: { near, layout } });
        return;
      }
      this.set({ busy: true, error: null, done: null });
      this.set({ busy: false, done: upSummary(await this.api.up(near, layout)) });
    } catch (e) {
      this.set({ busy: false, error: `Couldn't start ${layout}: ${message(e)}` });
    }
  }

  /** The human trusts the file shown: records it, then starts the layout asked for in this window (if any). */
  async trust() {
    const q = this.st.question;
    if (!q || this.st.busy) return;
    this.set({ busy: true, error: null });
    try {
      await this.api.trust(q.file, q.sha256);
      this.set({ question: null });
      const done = q.start ? upSummary(await this.api.up(q.start.near, q.start.layout)) : null;
      this.set({ busy: false, done });
    } catch (e) {
      this.set({ busy: false, error: message(e) });
    }
  }

  /** Hides the notice. */
  clearNotice() {
    this.set({ error: null, done: null });
  }
}

/** A viewport preset as the sidecar sends it. */
export interface Preset {
  name: string;
  width: number;
  height: number;
  dpr: number;
  /** a phone: the pane emulates touch and a mobile user agent (absent: a desktop) */
  mobile?: boolean;
}

/**
 * The presets of a `GET /api/project` answer (built-in, then the user's, then the
 * project's, already merged by the sidecar); null when no project file was found. Throws on
 * a malformed answer.
 */
export function parsePresets(v: unknown): Preset[] | null {
  if (!isObject(v)) throw new Error('malformed project answer');
  if (v.file === null) return null;
  if (!Array.isArray(v.viewports) || v.viewports.length > 128) throw new Error('malformed project answer');
  return v.viewports.map((p) => {
    const ok =
      isObject(p) &&
      typeof p.name === 'string' &&
      p.name.length > 0 &&
      p.name.length <= 64 &&
      [p.width, p.height].every((n) => typeof n === 'number' && Number.isInteger(n) && n >= MIN_VIEWPORT_CSS_PX && n <= MAX_VIEWPORT_CSS_PX) &&
      typeof p.dpr === 'number' &&
      p.dpr >= MIN_VIEWPORT_DPR &&
      p.dpr <= MAX_VIEWPORT_DPR;
    if (!ok) throw new Error('malformed viewport preset');
    const preset: Preset = { name: p.name as string, width: p.width as number, height: p.height as number, dpr: p.dpr as number };
    return p.mobile === true ? { ...preset, mobile: true } : preset;
  });
}

/** The loopback port a browser pane's URL shows (any loopback host, as `loopbackTarget`), else null. */
export function loopbackPort(url: string): number | null {
  return loopbackTarget(url)?.port ?? null;
}
