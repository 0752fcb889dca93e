// One screencast view's viewer socket (protocol §8.4): asks for a single-use grant, opens
// the socket, hands frames and state messages to its owner, and reconnects with a fresh
// grant (backoff) when the socket drops while the session is started. Knows nothing of
// canvases or panes.
import type { ViewerOut } from '../api/protocol';
import { DisposableStore } from '../lifecycle/disposable';

/** Input is held back while the socket has more than this many bytes not yet sent (protocol §8.4 backpressure). */
export const INPUT_HIGH_WATER_BYTES = 256 * 1024;
/** How often held input is offered to the socket again, in ms. */
const INPUT_RETRY_MS = 16;

/** A pointer move (coalescable: only the latest position of a run of them matters). */
function isMove(m: object): m is { type: 'input_mouse'; event: 'move'; button?: string; modifiers?: number } {
  const o = m as { type?: string; event?: string };
  return o.type === 'input_mouse' && o.event === 'move';
}

/**
 * Appends input `msg` to `queue` in order, never dropping one: a pointer move right after a
 * move with the same button and modifiers replaces it (only the latest position matters).
 */
export function queueInput(queue: object[], msg: object): void {
  const last = queue[queue.length - 1];
  if (last && isMove(last) && isMove(msg) && last.button === msg.button && last.modifiers === msg.modifiers) queue[queue.length - 1] = msg;
  else queue.push(msg);
}

/** Reconnect delays: from the first to the cap, doubling. */
export const RECONNECT_FIRST_MS = 250;
export const RECONNECT_MAX_MS = 4000;

export interface ViewerEvents {
  /** a socket opened (frame ids start again from 1) */
  onOpen: () => void;
  onFrame: (buf: ArrayBuffer) => void;
  onMessage: (m: ViewerOut) => void;
  /** the socket closed (a reconnect may follow while started) */
  onClose: (code: number) => void;
  /** a grant could not be obtained (the browser may be gone); the session keeps retrying */
  onGrantError: (e: unknown) => void;
}

export class ViewerSession {
  private ws: WebSocket | null = null;
  private started = false;
  private readonly store = new DisposableStore();
  private attempt = 0;
  /** the reconnect's backoff */
  private readonly timer = this.store.timer();
  /** bumps on every start/stop: an answer for an older one is dropped */
  private seq = 0;
  /** input not yet handed to a socket, in order (kept across reconnects) */
  private readonly held: object[] = [];
  private readonly heldTimer = this.store.timer();
  /** `flush` barriers sent and not answered yet, by id */
  private readonly flushes = new Map<number, () => void>();
  private flushId = 0;

  constructor(
    /** asks for a fresh viewer grant: resolves to the socket URL */
    private readonly grant: () => Promise<string>,
    private readonly events: ViewerEvents,
  ) {}

  /** true iff a socket is open now */
  get open(): boolean {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  /** Connects (once; a second call while started is a no-op). */
  start(): void {
    if (this.store.isDisposed || this.started) return;
    this.started = true;
    this.attempt = 0;
    void this.connect(++this.seq);
  }

  /** Closes the socket and stops reconnecting. Idempotent; `start()` may follow. */
  stop(): void {
    this.started = false;
    this.seq++;
    this.timer.clear();
    const ws = this.ws;
    this.ws = null;
    if (ws && ws.readyState !== WebSocket.CLOSED) ws.close(1000, 'view parked');
  }

  /** Sends one JSON message; returns false when no socket is open (the message is dropped). */
  send(msg: object): boolean {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(msg));
    return true;
  }

  /**
   * Sends input (`input_*`, `edit`, `popup_choice`) in order and never drops it: held while
   * no socket is open (sent once one is) or while the socket has more than
   * `INPUT_HIGH_WATER_BYTES` unsent (the sidecar stops reading while the page is behind).
   */
  sendInput(msg: object): void {
    if (this.store.isDisposed) return;
    queueInput(this.held, msg);
    this.flushInput();
  }

  /**
   * Resolves true once every input sent before this call has been dispatched to the page
   * (a `flush` barrier sent behind them, answered by `flushed`; protocol §8.4), false after
   * `timeoutMs` without that answer (a page that takes no input, a socket that dropped).
   * True at once when no socket is open and no input is held: nothing sent can still land
   * (a closed socket's queued inputs end with it).
   */
  settleInput(timeoutMs: number): Promise<boolean> {
    if (this.store.isDisposed) return Promise.resolve(false);
    if (!this.open && this.held.length === 0) return Promise.resolve(true);
    const id = (this.flushId = (this.flushId + 1) % 2 ** 32);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.flushes.delete(id);
        resolve(false);
      }, timeoutMs);
      this.flushes.set(id, () => {
        clearTimeout(timer);
        this.flushes.delete(id);
        resolve(true);
      });
      this.sendInput({ type: 'flush', id });
    });
  }

  /** input held back now (for tests and the pane's state) */
  get heldInputs(): number {
    return this.held.length;
  }

  private flushInput(): void {
    const ws = this.ws;
    while (this.held.length && ws && ws.readyState === WebSocket.OPEN && ws.bufferedAmount <= INPUT_HIGH_WATER_BYTES) {
      ws.send(JSON.stringify(this.held.shift()));
    }
    if (this.held.length && ws && ws.readyState === WebSocket.OPEN && !this.heldTimer.pending) this.heldTimer.set(() => this.flushInput(), INPUT_RETRY_MS);
  }

  /** Stops for good. Idempotent. */
  dispose(): void {
    this.stop();
    this.held.length = 0;
    this.store.dispose();
  }

  private async connect(seq: number) {
    let url: string;
    try {
      url = await this.grant();
    } catch (e) {
      if (seq !== this.seq) return;
      this.events.onGrantError(e);
      this.retry(seq);
      return;
    }
    if (seq !== this.seq || !this.started) return;
    const ws = new WebSocket(url);
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    ws.onopen = () => {
      if (this.ws !== ws) return;
      this.attempt = 0;
      this.events.onOpen();
      this.flushInput();
    };
    ws.onmessage = (e) => {
      if (this.ws !== ws) return;
      if (e.data instanceof ArrayBuffer) this.events.onFrame(e.data);
      else if (typeof e.data === 'string') {
        let m: ViewerOut;
        try {
          m = JSON.parse(e.data) as ViewerOut;
        } catch {
          return; // not JSON: ignore
        }
        if (m.type === 'flushed') this.flushes.get(m.id)?.();
        else this.events.onMessage(m);
      }
    };
    ws.onclose = (e) => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.events.onClose(e.code);
      this.retry(seq);
    };
  }

  private retry(seq: number) {
    if (seq !== this.seq || !this.started || this.store.isDisposed) return;
    const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_FIRST_MS * 2 ** this.attempt++);
    this.timer.set(() => {
      if (seq === this.seq && this.started) void this.connect(seq);
    }, delay);
  }
}
