// One screencast view's viewer socket (protocol §8.4): asks for a single-use grant, opens
// the socket, hands frames and state messages to its owner, and reconnects with a fresh
// grant (backoff) when the socket drops while the session is started. Knows nothing of
// canvases or panes.
import type { ViewerOut } from '../api/protocol';

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
  private disposed = false;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** bumps on every start/stop: an answer for an older one is dropped */
  private seq = 0;

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
    if (this.disposed || this.started) return;
    this.started = true;
    this.attempt = 0;
    void this.connect(++this.seq);
  }

  /** Closes the socket and stops reconnecting. Idempotent; `start()` may follow. */
  stop(): void {
    this.started = false;
    this.seq++;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
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

  /** Stops for good. Idempotent. */
  dispose(): void {
    this.stop();
    this.disposed = true;
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
    };
    ws.onmessage = (e) => {
      if (this.ws !== ws) return;
      if (e.data instanceof ArrayBuffer) this.events.onFrame(e.data);
      else if (typeof e.data === 'string') {
        try {
          this.events.onMessage(JSON.parse(e.data) as ViewerOut);
        } catch {
          /* not JSON: ignore */
        }
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
    if (seq !== this.seq || !this.started || this.disposed) return;
    const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_FIRST_MS * 2 ** this.attempt++);
    this.timer = setTimeout(() => {
      this.timer = null;
      if (seq === this.seq && this.started) void this.connect(seq);
    }, delay);
  }
}
