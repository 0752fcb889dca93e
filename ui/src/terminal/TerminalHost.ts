// The xterm.js view of one pane: terminal, addons, renderer, fitting, copy/paste.
//
// It owns the DOM element xterm draws into. That element is created once, here, and the
// pane component mounts it once; it is never re-parented (DESIGN §3).
import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import { WebLinksAddon } from '@xterm/addon-web-links';
import { Unicode11Addon } from '@xterm/addon-unicode11';
import { SearchAddon } from '@xterm/addon-search';
import type { WebglAddon } from '@xterm/addon-webgl';
import { validDim } from '../api/protocol';
import { DisposableStore } from '../lifecycle/disposable';
import { readClipboard, writeClipboard } from '../clipboard';
import { sanitizePaste } from './paste';
import { CSI_QUERIES, DCS_QUERY, OSC_QUERY_IDS, QueryGate, oscIsQuery } from './queryGate';
import type { TerminalSink } from './TerminalSession';
import { type RendererKind, type RendererSetting, chooseRenderer, glInfo } from './renderer';
import type { TerminalOptions } from '../config/config';
import { PromptMarks } from './prompts';
import { findPathRefs } from './pathLinks';

/** Resize settle time before the PTY is told (DESIGN §7). */
export const RESIZE_SETTLE_MS = 100;

const isMac = typeof navigator !== 'undefined' && /Mac/.test(navigator.platform);

export interface HostEvents {
  /** user input to send to the program (already a string; `binary` for onBinary data) */
  onInput: (data: string, binary: boolean) => void;
  /** the terminal's size changed to a valid size */
  onResize: (cols: number, rows: number) => void;
  /** OSC 0/2 title */
  onTitle: (title: string) => void;
  /** the terminal got the keyboard focus */
  onFocus: () => void;
  /** the user asked for the find bar (Ctrl+Shift+F / Cmd+F) */
  onFind: () => void;
  /** the user Ctrl/Cmd+clicked a URL in the output */
  onLink: (url: string) => void;
  /** which of `paths` (as printed) exist as files: their absolute paths, null where none */
  resolvePaths: (paths: string[]) => Promise<(string | null)[]>;
  /** the user Ctrl/Cmd+clicked `file:line` (file absolute) in the output */
  onPathLink: (file: string, line: number) => void;
}

/** How long the "lines went by" note stays after a catch-up, in milliseconds. */
const CATCH_UP_NOTE_MS = 2500;

export class TerminalHost implements TerminalSink {
  readonly element: HTMLDivElement;
  readonly term: Terminal;
  private readonly fitAddon = new FitAddon();
  readonly search = new SearchAddon();
  private webgl: WebglAddon | null = null;
  private opened = false;
  /** `open` was asked while hidden: it happens when the pane is first shown */
  private openWhenShown = false;
  private visible = true;
  private observer: ResizeObserver | null = null;
  /** listeners, observers, addons and the fit timer: released in reverse order on dispose */
  private readonly store = new DisposableStore();
  private readonly fitTimer = this.store.timer();
  private readonly catchUpTimer = this.store.timer();
  /** lines counted by the catch-up note while it shows */
  private burstLines = 0;

  private get disposed(): boolean {
    return this.store.isDisposed;
  }
  /** whether xterm may answer queries now; flipped in order with the output (protocol §5.2) */
  private readonly gate = new QueryGate();
  renderer: RendererKind = 'dom';
  /** why `renderer` is in use (shown in the pane's menu) */
  rendererWhy = 'not open yet';
  /** `terminal.renderer` as last applied */
  private rendererSetting: RendererSetting = 'auto';
  /** the renderer or its reason changed (the pane's menu reads `renderer` and `rendererWhy`) */
  onRendererChange: (() => void) | null = null;
  /** clipboard reads in flight; input is held meanwhile, in order */
  private pendingPastes = 0;
  private held: [string, boolean][] = [];
  /** a paste's own text is being sent (it is not held) */
  private delivering = false;
  /** prompt marks from the shell integration's OSC 133 (protocol §5.3) */
  readonly prompts: PromptMarks;

  constructor(
    private readonly events: HostEvents,
    options: TerminalOptions,
  ) {
    this.element = document.createElement('div');
    this.element.className = 'xterm-host';
    this.term = new Terminal({
      allowProposedApi: true,
      ...options,
      macOptionIsMeta: true,
      rightClickSelectsWord: false,
    });
    this.term.loadAddon(this.fitAddon);
    // Ctrl/Cmd+click opens a link (a plain click selects, as in VS Code's terminal).
    this.term.loadAddon(
      new WebLinksAddon((event, uri) => {
        if (isMac ? event.metaKey : event.ctrlKey) this.events.onLink(uri);
      }),
    );
    this.prompts = new PromptMarks(this.term);
    this.store.defer(() => this.prompts.dispose());
    const paths = this.term.registerLinkProvider({ provideLinks: (y, done) => void this.pathLinks(y, done) });
    this.store.defer(() => paths.dispose());
    this.term.loadAddon(new Unicode11Addon());
    this.term.loadAddon(this.search);
    this.term.unicode.activeVersion = '11';
    const subs = [
      this.term.onData((d) => {
        if (!this.gate.dropInput(d)) this.input(d, false);
      }),
      ...this.hookQueries(),
      this.term.onBinary((d) => this.input(d, true)),
      this.term.onResize(({ cols, rows }) => {
        if (validDim(cols) && validDim(rows)) this.events.onResize(cols, rows);
      }),
      this.term.onTitleChange((t) => this.events.onTitle(t)),
    ];
    this.store.defer(() => subs.forEach((s) => s.dispose()));
    this.term.attachCustomKeyEventHandler((e) => this.onKey(e));
    // Pastes from the browser (context menu, middle click) go through the sanitizer too.
    const onPaste = (e: ClipboardEvent) => {
      e.preventDefault();
      e.stopPropagation();
      const text = e.clipboardData?.getData('text/plain') ?? '';
      if (text) this.paste(text);
    };
    this.element.addEventListener('paste', onPaste, true);
    this.store.defer(() => this.element.removeEventListener('paste', onPaste, true));
    const onFocusIn = () => this.events.onFocus();
    this.element.addEventListener('focusin', onFocusIn);
    this.store.defer(() => this.element.removeEventListener('focusin', onFocusIn));
  }

  /**
   * `path:line[:col]` links on buffer row `y` (1-based): only the paths the sidecar finds as
   * files under the terminal's cwd are underlined; Ctrl/Cmd+click opens the editor.
   */
  private async pathLinks(y: number, done: (links: import('@xterm/xterm').ILink[] | undefined) => void) {
    const text = this.term.buffer.active.getLine(y - 1)?.translateToString(true) ?? '';
    const refs = findPathRefs(text);
    if (!refs.length) return done(undefined);
    const found = await this.events.resolvePaths(refs.map((r) => r.path)).catch(() => refs.map(() => null));
    const links = refs.flatMap((r, i) => {
      const file = found[i];
      if (!file) return [];
      return [
        {
          // Columns are 1-based and inclusive; the text has one cell per UTF-16 unit here
          // (a wide character before the reference shifts it: then the link is off, never wrong).
          range: { start: { x: r.start + 1, y }, end: { x: r.end, y } },
          text: text.slice(r.start, r.end),
          decorations: { underline: true, pointerCursor: true },
          activate: (e: MouseEvent) => {
            if (isMac ? e.metaKey : e.ctrlKey) this.events.onPathLink(file, r.line);
          },
        },
      ];
    });
    done(links.length ? links : undefined);
  }

  /**
   * Parser hooks that run before xterm's own handlers of the query sequences: they return
   * true (swallow: no reply) while the gate says so, else false (xterm answers as usual).
   */
  private hookQueries(): Array<{ dispose(): void }> {
    const p = this.term.parser;
    const gate = this.gate;
    return [
      ...CSI_QUERIES.map(({ id, isQuery }) =>
        p.registerCsiHandler(id, (params) => gate.swallowQuery() && (isQuery?.(params) ?? true)),
      ),
      ...OSC_QUERY_IDS.map((n) => p.registerOscHandler(n, (data) => gate.swallowQuery() && oscIsQuery(data))),
      p.registerDcsHandler(DCS_QUERY, () => gate.swallowQuery()),
    ];
  }

  /**
   * Opens xterm in `this.element` (call once the element is in the document). Idempotent.
   * While the pane is hidden the opening waits until it is shown (`setVisible`): a hidden
   * pane's xterm parses its output into its buffer but builds no DOM, measures nothing and
   * draws nothing, which is most of a pane's cost (a restored wall's other workspaces).
   */
  open(): void {
    if (this.opened || this.disposed) return;
    if (!this.visible) {
      this.openWhenShown = true;
      return;
    }
    this.opened = true;
    this.term.open(this.element);
    this.applyRenderer();
    this.observer = new ResizeObserver(() => this.scheduleFit());
    this.observer.observe(this.element);
    this.store.defer(() => this.observer?.disconnect());
    this.fitNow();
  }

  /**
   * Applies `terminal.renderer` (issue 27): the renderer `chooseRenderer` picks for this
   * machine and setting, switched live when it differs from the one drawing now.
   */
  setRendererSetting(setting: RendererSetting): void {
    if (this.rendererSetting === setting) return;
    this.rendererSetting = setting;
    if (this.opened && !this.disposed) this.applyRenderer();
  }

  private applyRenderer() {
    const c = chooseRenderer(navigator.userAgent, location.search, this.rendererSetting, glInfo());
    if (c.kind === 'webgl' && !this.webgl) void this.tryWebgl(c.why);
    else if (c.kind === 'dom') this.useDom(c.why);
    else this.said('webgl', c.why);
  }

  private async tryWebgl(why: string) {
    try {
      const { WebglAddon } = await import('@xterm/addon-webgl');
      if (this.disposed || this.webgl) return;
      const addon = new WebglAddon();
      // Chromium keeps at most 16 WebGL contexts: the oldest is lost when more open. Said in
      // the pane's menu, never a silent switch.
      addon.onContextLoss(() => this.useDom('WebGL context lost (a browser keeps at most 16 at once: too many terminal panes, or the GPU reset)'));
      this.term.loadAddon(addon);
      this.webgl = addon;
      this.said('webgl', why);
    } catch (e) {
      this.useDom(`WebGL could not start (${e instanceof Error ? e.message : String(e)})`);
    }
  }

  /** Draws with the DOM renderer from now on (the WebGL addon, if any, disposed), saying why. */
  private useDom(why: string) {
    const w = this.webgl;
    this.webgl = null;
    try {
      w?.dispose();
    } catch {
      /* a lost context may throw on dispose */
    }
    this.said('dom', why);
  }

  private said(kind: RendererKind, why: string) {
    this.renderer = kind;
    this.rendererWhy = why;
    this.element.dataset.renderer = kind;
    this.element.dataset.rendererWhy = why;
    this.onRendererChange?.();
  }

  /**
   * Tells the host whether its pane is shown; fitting is skipped while hidden, and an `open`
   * asked while hidden happens on the first show.
   */
  setVisible(visible: boolean): void {
    if (this.visible === visible) return;
    this.visible = visible;
    if (visible && this.openWhenShown) {
      this.openWhenShown = false;
      this.open();
    } else if (visible) this.scheduleFit();
  }

  /** Whether the pane is shown (as last told by `setVisible`). */
  get isVisible(): boolean {
    return this.visible;
  }

  /** Whether xterm is open in its element (a pane hidden since it was made is not, yet). */
  get isOpen(): boolean {
    return this.opened;
  }

  /**
   * Applies the configuration's options live (font, line height, cursor, scrollback, theme);
   * a change that moves the cell size refits, so the PTY learns the new size.
   */
  setOptions(options: TerminalOptions): void {
    if (this.disposed) return;
    const o = this.term.options;
    const refit = o.fontFamily !== options.fontFamily || o.fontSize !== options.fontSize || o.lineHeight !== options.lineHeight;
    for (const [k, v] of Object.entries(options)) {
      if ((o as Record<string, unknown>)[k] !== v) (o as Record<string, unknown>)[k] = v;
    }
    if (refit) this.scheduleFit();
  }

  focus(): void {
    this.term.focus();
  }

  /**
   * The size the terminal would have in its element now, or undefined when the element is
   * hidden or too small to measure (never 0×0 or NaN).
   */
  proposeSize(): { cols: number; rows: number } | undefined {
    if (!this.opened || !this.visible) return undefined;
    const el = this.element;
    if (!el.isConnected || el.clientWidth < 2 || el.clientHeight < 2) return undefined;
    const d = this.fitAddon.proposeDimensions();
    if (!d || !validDim(d.cols) || !validDim(d.rows)) return undefined;
    return d;
  }

  /** Fits now (skipped when hidden or unmeasurable). Returns the terminal's size. */
  fitNow(): { cols: number; rows: number } {
    const d = this.proposeSize();
    if (d && (d.cols !== this.term.cols || d.rows !== this.term.rows)) this.term.resize(d.cols, d.rows);
    return { cols: this.term.cols, rows: this.term.rows };
  }

  private scheduleFit() {
    this.fitTimer.set(() => this.fitNow(), RESIZE_SETTLE_MS);
  }

  // TerminalSink
  write(data: Uint8Array | string, done: () => void): void {
    if (this.disposed) return;
    if (data.length > 0) this.pristine = false;
    const first = data.length > 0 ? this.onFirstOutput : null;
    if (!first) return this.term.write(data, done);
    this.onFirstOutput = null;
    this.term.write(data, () => {
      done();
      first();
    });
  }

  /** Called once, when the first output from the terminal has been parsed (then cleared). */
  onFirstOutput: (() => void) | null = null;

  reset(): void {
    // RIS through the write queue, so it lands after output already queued; the prelude
    // stays above what the server replays next. A terminal that holds only the prelude is
    // left as it is: rewriting it would parse and draw a restored pane's saved output twice
    // (once at mount, again when its socket opens).
    if (this.disposed || this.pristine) return;
    this.pristine = true;
    this.term.write(`\x1bc${this.prelude}`);
  }

  private prelude = '';
  /** nothing but the prelude was written since the terminal was made or last reset */
  private pristine = true;

  /**
   * Appends local text shown above the program's output (a restored pane's saved output,
   * workspace/restore.ts): written now, and again after every reset, never sent to the PTY.
   */
  addPrelude(text: string): void {
    this.prelude += text;
    if (!this.disposed) this.term.write(text);
  }

  // A write callback runs once the bytes before it are parsed and before later bytes are, so
  // the gate changes exactly between the two.
  setReplaying(on: boolean): void {
    if (!this.disposed) this.term.write('', () => (this.gate.replaying = on));
  }

  setAnswering(on: boolean): void {
    if (!this.disposed) this.term.write('', () => (this.gate.answering = on));
  }

  /** Writes a local notice (not program output). */
  /**
   * Says, for a moment, that `lines` lines went by while this view was behind (protocol
   * §5.4): they are in the scrollback up to what the sidecar keeps, the screen is current.
   * The count stays on the element (`data-caught-up-lines`, summed) for tools and tests.
   */
  showCatchUp(lines: number): void {
    if (this.disposed) return;
    const total = Number(this.element.dataset.caughtUpLines ?? 0) + lines;
    this.element.dataset.caughtUpLines = String(total);
    let badge = this.element.querySelector<HTMLDivElement>('.catch-up-note');
    if (!badge) {
      badge = document.createElement('div');
      badge.className = 'catch-up-note';
      badge.setAttribute('role', 'status');
      this.element.appendChild(badge);
    }
    // A flood brings a catch-up every fraction of a second: the note counts the whole burst.
    this.burstLines = badge.hidden || !badge.textContent ? lines : this.burstLines + lines;
    badge.textContent = `skipped ahead: ${this.burstLines.toLocaleString('en-US')} lines went by`;
    badge.hidden = false;
    this.catchUpTimer.set(() => {
      if (badge) badge.hidden = true;
    }, CATCH_UP_NOTE_MS);
  }

  notice(text: string): void {
    if (this.disposed) return;
    if (text.length > 0) this.pristine = false;
    this.term.write(text);
  }

  async copySelection(): Promise<boolean> {
    const sel = this.term.getSelection();
    if (!sel) return false;
    await writeClipboard(sel);
    return true;
  }

  /** Pastes text (sanitized; xterm brackets it when the program enabled bracketed paste). */
  paste(text: string): void {
    const clean = sanitizePaste(text);
    if (clean) this.term.paste(clean);
  }

  /**
   * Pastes the clipboard. Reading it is asynchronous: keys typed meanwhile (Ctrl+Shift+V then
   * Enter, faster than the read) are held and sent after the paste, in the order typed, never
   * before it.
   */
  async pasteFromClipboard(): Promise<void> {
    this.pendingPastes++;
    let text = '';
    try {
      text = await readClipboard();
    } finally {
      this.pendingPastes--;
      this.delivering = true;
      try {
        if (text) this.paste(text);
      } finally {
        this.delivering = false;
      }
      if (this.pendingPastes === 0) {
        const held = this.held;
        this.held = [];
        for (const [d, binary] of held) this.events.onInput(d, binary);
      }
    }
  }

  /** The user's input to the PTY, held while a paste is being read (see `pasteFromClipboard`). */
  private input(d: string, binary: boolean) {
    if (this.pendingPastes > 0 && !this.delivering) this.held.push([d, binary]);
    else this.events.onInput(d, binary);
  }

  /** xterm's key hook: copy/paste chords; returns false for keys xterm must ignore. */
  private onKey(e: KeyboardEvent): boolean {
    if (e.type !== 'keydown') return true;
    const key = e.key.toLowerCase();
    const chord = isMac ? e.metaKey && !e.ctrlKey && !e.altKey : e.ctrlKey && e.shiftKey && !e.altKey && !e.metaKey;
    if (chord && key === 'c') {
      if (this.term.hasSelection()) {
        e.preventDefault();
        void this.copySelection();
        return false;
      }
      return !isMac; // Ctrl+Shift+C with nothing selected: ignore; Cmd+C: nothing to do
    }
    if (chord && key === 'f') {
      e.preventDefault();
      this.events.onFind();
      return false;
    }
    if (chord && key === 'v') {
      e.preventDefault();
      void this.pasteFromClipboard();
      return false;
    }
    return true;
  }

  /** Finds `text` forwards or backwards from the selection; returns true iff found. */
  find(text: string, backwards = false): boolean {
    if (!text) {
      this.search.clearDecorations();
      this.term.clearSelection();
      return false;
    }
    return backwards ? this.search.findPrevious(text) : this.search.findNext(text);
  }

  /** The terminal's text (scrollback and screen), trailing blanks trimmed. For tests and tools. */
  text(): string {
    const buf = this.term.buffer.active;
    const lines: string[] = [];
    for (let i = 0; i < buf.length; i++) lines.push(buf.getLine(i)?.translateToString(true) ?? '');
    while (lines.length && lines[lines.length - 1] === '') lines.pop();
    return lines.join('\n');
  }

  /** Disposes xterm and its addons, in reverse order of creation. Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    this.store.dispose();
    this.onRendererChange = null;
    this.useDom('disposed');
    this.term.dispose();
    this.element.remove();
  }
}
