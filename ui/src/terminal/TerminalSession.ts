// A terminal's connection to the sidecar: owns the WebSocket, flow control, reconnects.
//
// It knows nothing of xterm.js or React: output goes to a `TerminalSink`, which the view
// (TerminalHost) implements. One session serves one terminal id for its whole life.
import { ApiError } from '../api/client';
import { type TerminalEndpoint, localEndpoint } from './endpoint';
import { DisposableStore } from '../lifecycle/disposable';
import { ACK_CHUNK_BYTES, type Attention, type ClientControl, type ServerControl, type ShellState, validDim } from '../api/protocol';

/** Where the session delivers output. */
export interface TerminalSink {
  /** Writes output; `done` runs once the bytes are processed (xterm's write callback). */
  write(data: Uint8Array | string, done: () => void): void;
  /** Resets the terminal, ordered after earlier writes (called before each scrollback replay). */
  reset(): void;
  /**
   * Marks whether the bytes written after this call (until the next call) are scrollback
   * replay, whose queries must not be answered (protocol §5.2). Ordered with writes.
   */
  setReplaying(on: boolean): void;
  /** Marks whether this client answers queries in the bytes written after this call. Ordered with writes. */
  setAnswering(on: boolean): void;
}

/**
 * Splits a binary message into its replay part (the first `replayLeft` bytes) and its live
 * part; either may be empty. `replayLeft` is what the `replay` (or `catchup`) message
 * announced, minus the bytes of it already received.
 */
export function splitReplay(replayLeft: number, bytes: Uint8Array): { replay: Uint8Array; live: Uint8Array } {
  const k = Math.max(0, Math.min(replayLeft, bytes.byteLength));
  return { replay: bytes.subarray(0, k), live: bytes.subarray(k) };
}

/** A catch-up (protocol §5.4): how much output went by while the view was behind. */
export interface CatchUpInfo {
  /** line feeds that went by */
  lines: number;
  /** bytes that went by */
  skippedBytes: number;
}

export type SessionStatus =
  /** first connection under way */
  | 'connecting'
  /** socket open, output flowing */
  | 'open'
  /** the connection dropped; retrying with backoff */
  | 'reconnecting'
  /** the sidecar no longer knows this terminal */
  | 'gone'
  /** disposed */
  | 'closed';

export interface SessionOptions {
  /** backoff bounds in milliseconds */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** for tests: builds the socket */
  openSocket?: (url: string) => WebSocket;
  /** where the terminal lives (default: the local sidecar) */
  endpoint?: TerminalEndpoint;
}

type Listener<T> = (v: T) => void;

class Emitter<T> {
  private listeners = new Set<Listener<T>>();
  on(l: Listener<T>): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  fire(v: T) {
    for (const l of [...this.listeners]) l(v);
  }
  clear() {
    this.listeners.clear();
  }
}

const encoder = new TextEncoder();
/** `WebSocket.OPEN` (a literal, so the class also runs where WebSocket is not global). */
const WS_OPEN = 1;

export class TerminalSession {
  private ws: WebSocket | null = null;
  /** bumped per socket so that write callbacks of an old socket never ack on a new one */
  private generation = 0;
  /** bytes processed on the current socket and not yet acked */
  private processed = 0;
  /** writes handed to the sink and not yet processed (current socket) */
  private pending = 0;
  private size: { cols: number; rows: number } | null = null;
  private sentSize: string | null = null;
  private attempt = 0;
  private readonly store = new DisposableStore();
  /** the reconnect's backoff */
  private readonly retryTimer = this.store.timer();

  private get disposed(): boolean {
    return this.store.isDisposed;
  }
  private exited = false;
  private _status: SessionStatus = 'connecting';
  private queued: Uint8Array[] = [];
  private queuedBytes = 0;
  /** bytes of replay or catch-up state announced on the current socket and not yet received */
  private replayLeft = 0;
  /** the catch-up whose state is being received, if any */
  private catchUp: CatchUpInfo | null = null;

  private readonly _onExit = new Emitter<number>();
  private readonly _onShell = new Emitter<ShellState>();
  private readonly _onAttention = new Emitter<Attention>();
  private readonly _onStatus = new Emitter<SessionStatus>();
  private readonly _onCatchUp = new Emitter<CatchUpInfo>();
  /** fires once per program exit with its code (also after a reconnect to an exited terminal: once) */
  readonly onExit = (l: Listener<number>) => this._onExit.on(l);
  /** the shell's state changed (protocol §5.3); fired once its output is processed */
  readonly onShell = (l: Listener<ShellState>) => this._onShell.on(l);
  /** something in the output wants the human (protocol §5.3); fired once the output before it is processed */
  readonly onAttention = (l: Listener<Attention>) => this._onAttention.on(l);
  readonly onStatus = (l: Listener<SessionStatus>) => this._onStatus.on(l);
  /** the view fell behind and was brought to the terminal's state (protocol §5.4); fired once that state is drawn */
  readonly onCatchUp = (l: Listener<CatchUpInfo>) => this._onCatchUp.on(l);

  constructor(
    readonly terminalId: string,
    private readonly sink: TerminalSink,
    private readonly opts: SessionOptions = {},
  ) {
    this.connect();
  }

  get status(): SessionStatus {
    return this._status;
  }

  /**
   * Sends input (a string is UTF-8 encoded). Before the first connection opens, input is
   * queued (up to 64 KiB) and sent on open; while reconnecting it is dropped (the program's
   * state is unknown then).
   */
  send(data: string | Uint8Array): void {
    const bytes = typeof data === 'string' ? encoder.encode(data) : data;
    if (this.ws?.readyState !== WS_OPEN) {
      if (this._status === 'connecting' && this.queuedBytes + bytes.length <= 65536) {
        this.queued.push(bytes);
        this.queuedBytes += bytes.length;
      }
      return;
    }
    // Protocol: ≤ 64 KiB per input message.
    for (let i = 0; i < bytes.length; i += 65536) this.ws.send(bytes.subarray(i, i + 65536));
  }

  /** Sets the PTY size; invalid sizes (0, NaN, > 1000) are ignored; resent on reconnect. */
  resize(cols: number, rows: number): void {
    if (!validDim(cols) || !validDim(rows)) return;
    this.size = { cols, rows };
    this.flushSize();
  }

  /** Closes the socket and stops reconnecting. Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    this.store.dispose();
    this.generation++;
    const ws = this.ws;
    this.ws = null;
    if (ws) {
      ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
      try {
        ws.close(1000);
      } catch {
        /* already closing */
      }
    }
    this.setStatus('closed');
    this._onExit.clear();
    this._onShell.clear();
    this._onAttention.clear();
    this._onStatus.clear();
    this._onCatchUp.clear();
  }

  private setStatus(s: SessionStatus) {
    if (this._status === s) return;
    this._status = s;
    this._onStatus.fire(s);
  }

  private control(msg: ClientControl) {
    if (this.ws?.readyState === WS_OPEN) this.ws.send(JSON.stringify(msg));
  }

  private flushSize() {
    if (!this.size) return;
    const key = `${this.size.cols}x${this.size.rows}`;
    if (key === this.sentSize || this.ws?.readyState !== WS_OPEN) return;
    this.sentSize = key;
    this.control({ type: 'resize', ...this.size });
  }

  private connect() {
    if (this.disposed) return;
    const gen = ++this.generation;
    this.processed = 0;
    this.pending = 0;
    this.sentSize = null;
    this.replayLeft = 0;
    let ws: WebSocket;
    try {
      const url = (this.opts.endpoint ?? localEndpoint).socketUrl(this.terminalId);
      // A remote link not made yet: the retry's GET makes it.
      if (url === null) throw new Error('no link yet');
      ws = this.opts.openSocket ? this.opts.openSocket(url) : new WebSocket(url);
    } catch {
      this.scheduleRetry();
      return;
    }
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    ws.onopen = () => {
      if (gen !== this.generation) return;
      // The server starts with the scrollback: clear what an earlier connection drew.
      this.sink.reset();
      this.attempt = 0;
      this.setStatus('open');
      this.flushSize();
      const queued = this.queued.splice(0);
      this.queuedBytes = 0;
      for (const q of queued) this.send(q);
    };
    ws.onmessage = (ev: MessageEvent) => {
      if (gen !== this.generation) return;
      if (typeof ev.data === 'string') {
        this.onControl(ev.data);
        return;
      }
      const { replay, live } = splitReplay(this.replayLeft, new Uint8Array(ev.data as ArrayBuffer));
      if (replay.byteLength > 0) {
        this.output(gen, replay);
        this.replayLeft -= replay.byteLength;
        if (this.replayLeft === 0) {
          this.sink.setReplaying(false);
          this.catchUpDrawn();
        }
      }
      this.output(gen, live);
    };
    ws.onclose = () => {
      if (gen !== this.generation) return;
      this.ws = null;
      this.endReplay();
      if (this.exited) return; // the terminal ended; the pane decides what comes next
      this.scheduleRetry();
    };
    ws.onerror = () => {
      /* onclose follows */
    };
  }

  private output(gen: number, bytes: Uint8Array) {
    const n = bytes.byteLength;
    if (n === 0) return;
    this.pending++;
    this.sink.write(bytes, () => this.processedBytes(gen, n));
  }

  /** The socket ended before the whole replay came: what did come was replay all the same. */
  private endReplay() {
    this.catchUp = null;
    if (this.replayLeft === 0) return;
    this.replayLeft = 0;
    this.sink.setReplaying(false);
  }

  /** The catch-up state (if the bytes just ended one) is written: tell once it is drawn. */
  private catchUpDrawn() {
    const info = this.catchUp;
    if (!info) return;
    this.catchUp = null;
    this.sink.write('', () => {
      if (!this.disposed) this._onCatchUp.fire(info);
    });
  }

  private processedBytes(gen: number, n: number) {
    if (gen !== this.generation) return;
    this.pending--;
    this.processed += n;
    if (this.processed >= ACK_CHUNK_BYTES || this.pending === 0) {
      const bytes = this.processed;
      this.processed = 0;
      this.control({ type: 'ack', bytes });
    }
  }

  private onControl(text: string) {
    let msg: ServerControl;
    try {
      msg = JSON.parse(text) as ServerControl;
    } catch {
      return;
    }
    if (msg?.type === 'replay' && Number.isSafeInteger(msg.bytes) && msg.bytes >= 0) {
      // The first message on a socket: the next `bytes` bytes are replay (protocol §5).
      this.endReplay();
      this.replayLeft = msg.bytes;
      if (msg.bytes > 0) this.sink.setReplaying(true);
    } else if (
      msg?.type === 'catchup' &&
      Number.isSafeInteger(msg.bytes) &&
      msg.bytes >= 0 &&
      Number.isSafeInteger(msg.lines) &&
      Number.isSafeInteger(msg.skipped)
    ) {
      // Output went by while this view was behind; the next `bytes` bytes draw the
      // terminal's state as it is now (protocol §5.4). Its queries were answered already.
      this.endReplay();
      this.replayLeft = msg.bytes;
      this.catchUp = { lines: msg.lines, skippedBytes: msg.skipped };
      if (msg.bytes > 0) this.sink.setReplaying(true);
      else this.catchUpDrawn();
    } else if (msg?.type === 'answerer' && typeof msg.answers === 'boolean') {
      this.sink.setAnswering(msg.answers);
    } else if (msg?.type === 'shell' && typeof msg.integration === 'boolean') {
      const { type: _t, ...state } = msg;
      this.sink.write('', () => {
        if (!this.disposed) this._onShell.fire(state);
      });
    } else if (msg?.type === 'attention' && typeof msg.kind === 'string') {
      const { type: _t, ...att } = msg;
      this.sink.write('', () => {
        if (!this.disposed) this._onAttention.fire(att as Attention);
      });
    } else if (msg?.type === 'exit' && typeof msg.code === 'number') {
      const first = !this.exited;
      this.exited = true;
      // Ordered after the output that preceded it.
      this.sink.write('', () => {
        if (first && !this.disposed) this._onExit.fire(msg.code);
      });
    }
  }

  private scheduleRetry() {
    if (this.disposed || this.retryTimer.pending) return;
    this.setStatus('reconnecting');
    const min = this.opts.minBackoffMs ?? 250;
    const max = this.opts.maxBackoffMs ?? 5000;
    const delay = Math.min(max, min * 2 ** this.attempt) * (0.75 + Math.random() * 0.5);
    this.attempt++;
    this.retryTimer.set(() => void this.retry(), delay);
  }

  private async retry() {
    if (this.disposed) return;
    try {
      await (this.opts.endpoint ?? localEndpoint).get(this.terminalId);
    } catch (e) {
      if (this.disposed) return;
      // Only the terminal's own 404 is "gone": a remote link down (503 remote_disconnected),
      // a link not made yet or the sidecar away are retried.
      if (e instanceof ApiError && e.status === 404) {
        this.setStatus('gone');
        return;
      }
      this.scheduleRetry(); // sidecar down or restarting: keep trying
      return;
    }
    this.connect();
  }
}
