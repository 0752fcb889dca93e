// One terminal pane's live parts: its xterm view (TerminalHost) and its connection
// (TerminalSession). Created with the pane, disposed when the pane is closed; a minimized or
// hidden pane keeps its runtime.
import { ApiError, api } from '../api/client';
import { TerminalHost } from '../terminal/TerminalHost';
import { type SessionStatus, TerminalSession } from '../terminal/TerminalSession';
import type { Scheme } from '../terminal/theme';

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
}

/** A terminal's command line as a pane title: argv[0]'s base name (login `-` dropped) and the arguments; null for none. */
export function commandTitle(command: string[] | undefined): string | null {
  if (!command?.length) return null;
  const argv0 = command[0].replace(/^-/, '').split('/').pop() ?? command[0];
  return [argv0, ...command.slice(1)].join(' ');
}

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
  private disposed = false;
  /** true once any input was sent (typed, pasted, or a terminal reply): the pane is no longer "untouched" */
  touched: boolean;
  /** input typed before the terminal exists (while it is being created) */
  private early: Array<string | Uint8Array> = [];

  constructor(
    readonly paneId: string,
    private terminalId: string | null,
    scheme: Scheme,
    private readonly events: RuntimeEvents,
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
      },
      scheme,
    );
  }

  get currentTerminalId(): string | null {
    return this.terminalId;
  }

  /** Puts the terminal into `container` (once; later calls are no-ops) and connects it. */
  mount(container: HTMLElement): void {
    if (this.mounted || this.disposed) return;
    this.mounted = true;
    container.appendChild(this.host.element);
    this.host.open();
    if (this.terminalId) this.attach(this.terminalId);
    else void this.spawn();
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
    const pane = this.events.handle() ?? undefined;
    let id: string;
    let renamed = false;
    try {
      try {
        id = await api.createTerminal(pane ? { cols, rows, pane } : { cols, rows });
      } catch (e) {
        // Refused under the pane's handle (4xx): a new pane's terminal is better than none.
        if (!pane || !(e instanceof ApiError) || e.status < 400 || e.status >= 500 || this.disposed) throw e;
        id = await api.createTerminal({ cols, rows });
        renamed = true;
      }
    } catch (e) {
      if (this.disposed) return;
      this.host.notice(`\r\n\x1b[31m[could not start a terminal: ${e instanceof Error ? e.message : String(e)}]\x1b[0m\r\n[press Enter to retry]`);
      this.exited = true;
      this.events.onStatus('failed');
      return;
    }
    if (this.disposed) {
      void api.deleteTerminal(id).catch(() => undefined);
      return;
    }
    this.terminalId = id;
    if (renamed) this.events.onHandle(id);
    this.events.onTerminal(id, null);
    this.attach(id);
    api
      .getTerminal(id)
      .then((info) => {
        if (!this.disposed && this.terminalId === id) this.events.onTerminal(id, commandTitle(info.command));
      })
      .catch(() => undefined);
  }

  private attach(id: string) {
    this.exited = false;
    const s = new TerminalSession(id, this.host);
    this.session = s;
    const { cols, rows } = this.host.fitNow();
    s.resize(cols, rows);
    s.onStatus((st) => {
      if (st === 'gone') {
        this.exited = true;
        this.host.notice('\r\n\x1b[2m[terminal is gone; press Enter for a new one]\x1b[0m');
      }
      if (!this.exited || st === 'gone') this.events.onStatus(st);
    });
    for (const d of this.early.splice(0)) s.send(d);
    s.onExit((code) => {
      this.exited = true;
      this.host.notice(`\r\n[process exited with code ${code}]`);
      this.events.onStatus('exited', code);
    });
    this.events.onStatus(s.status);
  }

  /** Replaces an exited terminal with a new one in the same pane. */
  private async respawn() {
    if (this.respawning || this.disposed) return;
    this.respawning = true;
    const old = this.terminalId;
    this.session?.dispose();
    this.session = null;
    this.terminalId = null;
    if (old) void api.deleteTerminal(old).catch(() => undefined);
    this.host.term.reset();
    await this.spawn();
    this.respawning = false;
  }

  /** Closes the pane's terminal for good: disposes the view and connection, deletes the terminal. */
  close(): void {
    const id = this.terminalId;
    this.dispose();
    if (id) void api.deleteTerminal(id).catch(() => undefined);
  }

  /** Disposes the view and the connection (the terminal keeps running). Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.session?.dispose();
    this.session = null;
    this.host.dispose();
  }
}

