// One terminal pane's live parts: its xterm view (TerminalHost) and its connection
// (TerminalSession). Created with the pane, disposed when the pane is closed; a minimized or
// hidden pane keeps its runtime.
import { ApiError } from '../api/client';
import { type TerminalEndpoint, localEndpoint } from '../terminal/endpoint';
import type { Attention, ShellState, Survivor } from '../api/protocol';
import { TerminalHost } from '../terminal/TerminalHost';
import { type SessionStatus, TerminalSession } from '../terminal/TerminalSession';
import type { Settings } from '../config/Settings';
import { type Disposable, DisposableStore } from '../lifecycle/disposable';
import { survivorText } from './survivors';
import { commandTitle } from './title';
import { type RestoredTerminal, cwdGoneNotice } from './restore';
import type { DeferredStart, StartGate } from './startGate';

/** How often an exited pane asks again which processes of its session still run. */
const SURVIVOR_POLL_MS = 2000;
/**
 * How often a pane whose shell reports no integration (sh, or integration off) asks what runs
 * in its foreground, for the header (protocol §4 `busy`, `foreground`).
 */
const FOREGROUND_POLL_MS = 2000;

export type PaneStatus = SessionStatus | 'starting' | 'exited' | 'failed';

/** What a runtime reports to the workspace. */
export interface RuntimeEvents {
  onTerminal: (terminalId: string, command: string | null) => void;
  /**
   * The pane's handle (protocol §9.2) as the store holds it, or null while it has none: a
   * terminal created for a pane that has one is created with `"pane": handle`, so the
   * handle outlives a restart.
   */
  handle: () => string | null;
  /**
   * The sidecar refused to create a terminal under the pane's handle (an older sidecar, or
   * one that no longer knows it), so the new terminal was created as a new pane: its id is
   * the pane's handle from now on.
   */
  onHandle: (handle: string) => void;
  onTitle: (title: string) => void;
  onStatus: (status: PaneStatus, exitCode?: number) => void;
  onFocus: () => void;
  onFind: () => void;
  /** the exited terminal's session still has these processes running (empty: none, or not exited) */
  onSurvivors: (survivors: Survivor[]) => void;
  /**
   * a restart left terminal `terminalId` registered (not deleted) because processes of its
   * session still run: the pane keeps it until they end or the pane closes
   */
  onKept: (terminalId: string) => void;
  /** the shell's state (protocol §5.3): cwd, running command, last exit status */
  onShell: (shell: ShellState) => void;
  /** without shell integration: the foreground program's name while one other than the shell runs, else null */
  onForeground: (name: string | null) => void;
  /** something in the output wants the human (protocol §5.3) */
  onAttention: (a: Attention) => void;
  /** a Ctrl/Cmd+clicked URL in the output */
  onLink: (url: string) => void;
  /** a Ctrl/Cmd+clicked `file:line` in the output (file absolute, existing) */
  onPathLink: (file: string, line: number) => void;
}

/** How a new terminal starts. */
export interface SpawnOptions {
  /** resolves to the working directory to start in (absolute), or undefined for the default (home) */
  cwd?: () => Promise<string | undefined>;
  /** the program to run instead of the login shell */
  command?: string[];
  /** a pane of a restored session (restore.ts): its saved output shown above the new shell, which starts in its saved directory */
  restored?: RestoredTerminal;
  /** orders the starts of panes on screen before hidden ones (startGate.ts); none: start at mount */
  gate?: StartGate;
  /** where the pane's terminals live (default: the local sidecar; a remote pane's host otherwise) */
  endpoint?: TerminalEndpoint;
}

/** How long a path's existence (for `path:line` links) is remembered, in ms. */
const RESOLVE_CACHE_MS = 5000;

export { commandTitle } from './title';

function binaryToBytes(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i) & 0xff;
  return out;
}

export class PaneRuntime {
  readonly host: TerminalHost;
  private session: TerminalSession | null = null;
  private mounted = false;
  private exited = false;
  private respawning = false;
  /** the survivor and foreground polls; disposed with the runtime */
  private readonly store = new DisposableStore();
  private readonly unsubscribeSettings: () => void;
  /** what still runs in the exited terminal's session, as last asked */
  private survivors: Survivor[] = [];
  private readonly survivorTimer = this.store.timer();
  /** true once any input was sent (typed, pasted, or a terminal reply): the pane is no longer "untouched" */
  touched: boolean;
  /** input typed before the terminal exists (while it is being created) */
  private early: Array<string | Uint8Array> = [];
  /** the shell's state as last reported (null until it reported any) */
  private shell: ShellState | null = null;
  private foregroundPoll: Disposable | null = null;
  /** a hidden pane's start, waiting for the panes on screen (startGate.ts) */
  private deferredStart: DeferredStart | null = null;
  /** tells the gate this pane on screen has started (first output, failure, exit or disposal) */
  private started: (() => void) | null = null;

  constructor(
    readonly paneId: string,
    private terminalId: string | null,
    settings: Settings,
    private readonly events: RuntimeEvents,
    private readonly spawnOptions: SpawnOptions = {},
  ) {
    // A pane restored onto an existing terminal may have been used: never count it untouched.
    this.touched = terminalId !== null;
    this.host = new TerminalHost(
      {
        onInput: (d, binary) => this.input(binary ? binaryToBytes(d) : d),
        onResize: (c, r) => this.session?.resize(c, r),
        onTitle: (t) => this.events.onTitle(t),
        onFocus: () => this.events.onFocus(),
        onFind: () => this.events.onFind(),
        onLink: (url) => this.events.onLink(url),
        resolvePaths: (paths) => this.resolvePaths(paths),
        onPathLink: (file, line) => this.events.onPathLink(file, line),
      },
      settings.terminalOptions(),
    );
    this.host.setRendererSetting(settings.terminalRenderer());
    // Every configuration change applies to this pane live (DESIGN §14).
    this.unsubscribeSettings = settings.subscribe(() => {
      this.host.setOptions(settings.terminalOptions());
      this.host.setRendererSetting(settings.terminalRenderer());
    });
  }

  /** Where this pane's terminals live. */
  get endpoint(): TerminalEndpoint {
    return this.spawnOptions.endpoint ?? localEndpoint;
  }

  /** A remote pane: its terminal is on another machine (no pane handles, no kept terminals there). */
  private get remote(): boolean {
    return this.endpoint.host !== null;
  }

  get currentTerminalId(): string | null {
    return this.terminalId;
  }

  private resolved = new Map<string, { file: string | null; at: number }>();

  /** Which of `paths` exist as files for this terminal (cached briefly; the cwd may change). */
  private async resolvePaths(paths: string[]): Promise<(string | null)[]> {
    const id = this.terminalId;
    if (!id) return paths.map(() => null);
    const now = Date.now();
    const key = (p: string) => `${this.shell?.cwd ?? ''}\0${p}`;
    const missing = [...new Set(paths.filter((p) => (now - (this.resolved.get(key(p))?.at ?? -Infinity)) > RESOLVE_CACHE_MS))];
    if (missing.length) {
      const answers = await this.endpoint.resolvePaths(id, missing);
      if (this.resolved.size > 512) this.resolved.clear();
      for (const a of answers) this.resolved.set(key(a.path), { file: a.kind === 'file' ? a.resolved : null, at: now });
    }
    return paths.map((p) => this.resolved.get(key(p))?.file ?? null);
  }

  /**
   * The terminal's working directory now: the shell's last OSC 7 report, else what the
   * sidecar reads (`cwd_now`, protocol §4); undefined when unknown. A split starts there.
   */
  async cwd(): Promise<string | undefined> {
    if (this.shell?.cwd) return this.shell.cwd;
    const id = this.terminalId;
    if (!id || this.exited) return undefined;
    const info = await this.endpoint.get(id).catch(() => null);
    return info?.cwd_now ?? undefined;
  }

  /**
   * Puts the terminal into `container` (once; later calls are no-ops) and connects it: at once
   * when the pane is shown, else once the panes on screen have started (`SpawnOptions.gate`)
   * or when it is shown, whichever comes first. Call `setVisible` first.
   */
  mount(container: HTMLElement): void {
    if (this.mounted || this.disposed) return;
    this.mounted = true;
    container.appendChild(this.host.element);
    this.host.open();
    if (this.spawnOptions.restored) this.host.addPrelude(this.spawnOptions.restored.prelude);
    const gate = this.spawnOptions.gate;
    if (!gate) return this.connect();
    if (!this.host.isVisible) {
      this.deferredStart = gate.defer(() => {
        this.deferredStart = null;
        this.connect();
      });
      return;
    }
    this.started = gate.begin();
    this.host.onFirstOutput = () => this.markStarted();
    this.connect();
  }

  /** Tells the pane whether it is shown: a hidden pane's waiting start runs when it is shown. */
  setVisible(visible: boolean): void {
    this.host.setVisible(visible);
    if (visible) this.deferredStart?.now();
  }

  private connect() {
    if (this.disposed) return;
    if (this.terminalId) this.attach(this.terminalId);
    else void this.spawn();
  }

  private markStarted() {
    this.host.onFirstOutput = null;
    const s = this.started;
    this.started = null;
    s?.();
  }

  /** Sends input to the program; in the exited state, Enter starts a new shell. */
  input(data: string | Uint8Array): void {
    this.touched = true;
    if (this.exited) {
      const s = typeof data === 'string' ? data : '';
      if (s.includes('\r')) void this.respawn();
      return;
    }
    if (this.session) this.session.send(data);
    else if (this.early.length < 1024) this.early.push(data);
  }

  private async spawn() {
    this.events.onStatus('starting');
    const { cols, rows } = this.host.fitNow();
    // A remote daemon knows nothing of this window's handles.
    const pane = this.remote ? undefined : (this.events.handle() ?? undefined);
    let id: string;
    let renamed = false;
    try {
      const restored = this.spawnOptions.restored;
      const cwd = restored ? restored.cwd : await this.spawnOptions.cwd?.().catch(() => undefined);
      const command = this.spawnOptions.command;
      const where = { cols, rows, ...(cwd ? { cwd } : {}), ...(command ? { command } : {}) };
      try {
        id = await this.endpoint.create(pane ? { ...where, pane } : where);
      } catch (e) {
        if (!(e instanceof ApiError) || e.status < 400 || e.status >= 500 || this.disposed) throw e;
        if (cwd && e.code === 'bad_cwd') {
          // The directory went away since the shell reported it: start at home instead.
          if (restored) this.host.addPrelude(cwdGoneNotice(cwd));
          const home = { cols, rows, ...(command ? { command } : {}) };
          id = await this.endpoint.create(pane ? { ...home, pane } : home);
        } else {
          // Refused under the pane's handle (4xx): a new pane's terminal is better than none.
          if (!pane) throw e;
          id = await this.endpoint.create(where);
          renamed = true;
        }
      }
    } catch (e) {
      if (this.disposed) return;
      this.host.notice(`\r\n\x1b[31m[could not start a terminal: ${e instanceof Error ? e.message : String(e)}]\x1b[0m\r\n[press Enter to retry]`);
      this.exited = true;
      this.events.onStatus('failed');
      this.markStarted();
      return;
    }
    if (this.disposed) {
      void this.endpoint.delete(id).catch(() => undefined);
      return;
    }
    this.terminalId = id;
    if (renamed) this.events.onHandle(id);
    this.events.onTerminal(id, null);
    this.attach(id);
    this.endpoint
      .get(id)
      .then((info) => {
        if (!this.disposed && this.terminalId === id) this.events.onTerminal(id, commandTitle(info.command));
      })
      .catch(() => undefined);
  }

  private attach(id: string) {
    this.exited = false;
    const s = new TerminalSession(id, this.host, { endpoint: this.endpoint });
    this.session = s;
    let opened = false;
    const { cols, rows } = this.host.fitNow();
    s.resize(cols, rows);
    s.onStatus((st) => {
      if (st === 'open') opened = true;
      if (st === 'gone' && this.remote && !opened && !this.disposed) {
        // A restored remote pane whose terminal the remote no longer has: a new shell there.
        this.host.notice('\r\n\x1b[2m[the remote terminal is gone; starting a new one]\x1b[0m');
        this.exited = true;
        void this.respawn();
        return;
      }
      if (st === 'gone') {
        this.markStarted();
        this.exited = true;
        this.host.notice('\r\n\x1b[2m[terminal is gone; press Enter for a new one]\x1b[0m');
      }
      if (!this.exited || st === 'gone') this.events.onStatus(st);
    });
    for (const d of this.early.splice(0)) s.send(d);
    s.onShell((shell) => {
      this.shell = shell;
      if (shell.integration) this.stopForeground();
      this.events.onShell(shell);
    });
    s.onAttention((a) => this.events.onAttention(a));
    s.onCatchUp((c) => this.host.showCatchUp(c.lines));
    this.watchForeground(id);
    s.onExit((code) => {
      this.markStarted();
      this.exited = true;
      this.host.notice(`\r\n[process exited with code ${code}]`);
      this.events.onStatus('exited', code);
      this.watchSurvivors(id);
    });
    this.events.onStatus(s.status);
  }

  /**
   * Without shell integration nothing tells the pane what runs in it: ask every
   * FOREGROUND_POLL_MS until the shell reports integration or the terminal changes.
   */
  private watchForeground(id: string) {
    this.stopForeground();
    let last: string | null | undefined;
    const ask = async () => {
      if (this.disposed || this.exited || this.terminalId !== id || this.shell?.integration) return this.stopForeground();
      const info = await this.endpoint.get(id).catch(() => null);
      if (!info || this.disposed || this.terminalId !== id || this.shell?.integration) return;
      const name = info.alive && info.busy ? info.foreground : null;
      if (name !== last) this.events.onForeground((last = name));
    };
    const h = setInterval(() => void ask(), FOREGROUND_POLL_MS);
    this.foregroundPoll = this.store.defer(() => clearInterval(h));
  }

  private stopForeground() {
    if (this.foregroundPoll) this.store.delete(this.foregroundPoll);
    this.foregroundPoll = null;
  }

  private setSurvivors(list: Survivor[]) {
    const same = list.length === this.survivors.length && list.every((s, i) => s.pid === this.survivors[i].pid && s.name === this.survivors[i].name);
    if (same) return;
    this.survivors = list;
    this.events.onSurvivors(list);
  }

  /**
   * Asks which processes still run in exited terminal `id`'s session (protocol §4
   * `survivors`), now and every 2 s while some do and the pane still shows that terminal.
   */
  private watchSurvivors(id: string) {
    this.survivorTimer.clear();
    const current = () => !this.disposed && this.exited && this.terminalId === id;
    const ask = async () => {
      if (!current()) return;
      let list = this.survivors;
      let again = true;
      try {
        list = (await this.endpoint.get(id)).survivors ?? [];
      } catch (e) {
        // Deleted elsewhere: nothing of it runs any more. Otherwise ask again later.
        if (e instanceof ApiError && e.status === 404) (list = []), (again = false);
      }
      if (!current()) return;
      const announce = this.survivors.length === 0 && list.length > 0;
      this.setSurvivors(list);
      if (announce) this.host.notice(`\r\n[${survivorText(list)} still ${list.length > 1 ? 'run' : 'runs'} from this session: Enter restarts and keeps ${list.length > 1 ? 'them' : 'it'} running]`);
      if (again && list.length) this.survivorTimer.set(() => void ask(), SURVIVOR_POLL_MS);
    };
    void ask();
  }

  /**
   * Stops what still runs in the exited terminal's session: the terminal is deleted (SIGHUP,
   * SIGKILL after 2 s, protocol §4); the pane stays exited, and Enter still restarts.
   */
  async stopSurvivors(): Promise<void> {
    const id = this.terminalId;
    if (!this.exited || !id || this.disposed) return;
    const names = survivorText(this.survivors);
    // Closed first, so the deletion's close does not read as "terminal is gone".
    this.session?.dispose();
    this.session = null;
    this.setSurvivors([]);
    await this.endpoint.delete(id).catch(() => undefined);
    if (names) this.host.notice(`\r\n[stopped ${names}]`);
  }

  /**
   * Replaces an exited terminal with a new one in the same pane. When processes of the old
   * session still run (asked afresh: a server started with `nohup … &`), the old terminal is
   * kept registered (`onKept`) so they go on running; otherwise it is deleted.
   */
  private async respawn() {
    if (this.respawning || this.disposed) return;
    this.respawning = true;
    const old = this.terminalId;
    this.session?.dispose();
    this.session = null;
    this.terminalId = null;
    this.survivorTimer.clear();
    if (old) {
      const info = await this.endpoint.get(old).catch(() => null);
      if (info?.survivors?.length && !this.remote) this.events.onKept(old);
      else void this.endpoint.delete(old).catch(() => undefined);
    }
    this.setSurvivors([]);
    this.shell = null;
    this.host.term.reset();
    await this.spawn();
    this.respawning = false;
  }

  private get disposed(): boolean {
    return this.store.isDisposed;
  }

  /** Closes the pane's terminal for good: disposes the view and connection, deletes the terminal. */
  close(): void {
    const id = this.terminalId;
    this.dispose();
    if (id) void this.endpoint.delete(id).catch(() => undefined);
  }

  /** Disposes the view and the connection (the terminal keeps running). Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    this.deferredStart?.cancel();
    this.deferredStart = null;
    this.markStarted();
    this.store.dispose();
    this.unsubscribeSettings();
    this.session?.dispose();
    this.session = null;
    this.host.dispose();
  }
}

