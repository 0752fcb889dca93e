// The window's end of the UI channel (protocol §10): one WebSocket to `/api/ui/socket`,
// reopened with backoff for as long as the app lives. It reports the window's panes
// (`state`) and the human's activity (`active`), and hands the sidecar's relayed layout
// requests to its host (the store) one at a time, answering each with `reply`.
//
// It knows nothing of panes or layout: the host builds the state text and applies requests.
import { uiSocketUrl } from '../api/client';
import type { UiOutbound, UiRequest } from '../api/protocol';
import { DisposableStore } from '../lifecycle/disposable';
import { parseInbound, replyTo } from './messages';
import type { TrustQuestion } from '../project/project';

/** What the channel needs from the store. */
export interface UiChannelHost {
  /** The `state` message for the window as it is now, as JSON text (see `encodeState`). */
  stateText(): string;
  /**
   * Carries out a relayed request exactly as the equivalent click would. Resolves with the
   * new or acted-on pane's id (null when no pane is involved: a `system` open); rejects
   * (with `Refused`, or any error whose message says why) having changed nothing.
   */
  apply(request: UiRequest): Promise<string | null>;
  /** Records the handles the sidecar gave browser panes (UI pane id → `bN`). */
  assignHandles(assign: Record<string, string>): void;
  /** The configuration in force changed (or the channel connected): the snapshot, unparsed. */
  config(snapshot: unknown): void;
  /** The sidecar asks the human to trust a project file (a refused `ph up`). */
  projectTrust(question: TrustQuestion): void;
  /** Which terminal drives each browser pane, or a handoff, changed (both unparsed). */
  drivers(map: unknown, handoffs: unknown): void;
}

export interface UiChannelOptions {
  /** reconnect backoff bounds, in milliseconds (defaults 250 and 5000) */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** a change is reported at most this long after it, in milliseconds (default 50); changes within it go as one `state` */
  stateDebounceMs?: number;
  /** at most one `active` per this many milliseconds (default 1000) */
  activeEveryMs?: number;
  /** the socket's URL (default: `/api/ui/socket` on the page's own origin) */
  url?: () => string;
  /** for tests: builds the socket */
  openSocket?: (url: string) => WebSocket;
  /** for tests: the clock, in milliseconds */
  now?: () => number;
}

/** `WebSocket.OPEN` (a literal, so the class also runs where WebSocket is not global). */
const WS_OPEN = 1;

/**
 * After the page starts to leave (`beforeunload`, `pagehide`), refusals are held this long,
 * in milliseconds: a reload cancels the page's requests in flight (a proxy grant) while its
 * socket is still open, and the failure that follows is the reload's, not the request's. If
 * the page is really gone by then, the refusal is never sent and the sidecar asks the next
 * window (protocol §9.6); if it stays (a cancelled navigation), the refusal goes then.
 */
export const LEAVING_HOLD_MS = 2000;

export class UiChannel {
  private ws: WebSocket | null = null;
  /** bumped per socket: a reply to a request that came on an older socket is never sent */
  private generation = 0;
  private attempt = 0;
  private readonly store = new DisposableStore();
  private readonly retryTimer = this.store.timer();
  private readonly stateTimer = this.store.timer();
  private readonly activeTimer = this.store.timer();
  /** the last `state` text sent on the current socket (null: none yet) */
  private lastState: string | null = null;
  private lastActiveAt = -Infinity;
  /** requests run one at a time, in the order they came */
  private queue: Promise<unknown> = Promise.resolve();
  /** the page started to leave: refusals wait in `held` until `LEAVING_HOLD_MS` has passed */
  private readonly leaveTimer = this.store.timer();
  private held: Array<{ gen: number; text: string }> = [];

  constructor(
    private readonly host: UiChannelHost,
    private readonly opts: UiChannelOptions = {},
  ) {
    this.connect();
  }

  /** True iff the socket is open now. */
  get connected(): boolean {
    return this.ws?.readyState === WS_OPEN;
  }

  /**
   * Something a `state` reports may have changed: within `stateDebounceMs` the state is
   * built and sent if its text differs from the last one sent on this socket. Cheap to
   * call on every store change.
   */
  changed(): void {
    if (this.store.isDisposed || this.stateTimer.pending || !this.connected) return;
    this.stateTimer.set(() => this.flushState(), this.opts.stateDebounceMs ?? 50);
  }

  /**
   * The human focused or used this window: sends `{"type":"active"}` now, or, when one went
   * less than `activeEveryMs` ago, once that much time has passed (several calls meanwhile
   * give one message).
   */
  activity(): void {
    if (this.store.isDisposed || this.activeTimer.pending || !this.connected) return;
    const every = this.opts.activeEveryMs ?? 1000;
    const wait = this.lastActiveAt + every - this.now();
    if (wait <= 0) {
      this.sendActive();
      return;
    }
    this.activeTimer.set(() => this.sendActive(), wait);
  }

  /**
   * Follows the window `target`: gaining focus is activity and changes `active`, losing it
   * changes `active`, a pointer press or key press (capture phase, so nothing can hide it)
   * is activity, and `beforeunload`/`pagehide` mean the page is leaving (see `leaving`).
   * Returns the function that stops following.
   */
  listen(target: EventTarget): () => void {
    const onFocus = () => {
      this.activity();
      this.changed();
    };
    const onBlur = () => this.changed();
    const onUse = () => this.activity();
    const onLeave = () => this.leaving();
    target.addEventListener('focus', onFocus);
    target.addEventListener('blur', onBlur);
    target.addEventListener('pointerdown', onUse, { capture: true });
    target.addEventListener('keydown', onUse, { capture: true });
    target.addEventListener('beforeunload', onLeave);
    target.addEventListener('pagehide', onLeave);
    return () => {
      target.removeEventListener('focus', onFocus);
      target.removeEventListener('blur', onBlur);
      target.removeEventListener('pointerdown', onUse, { capture: true });
      target.removeEventListener('keydown', onUse, { capture: true });
      target.removeEventListener('beforeunload', onLeave);
      target.removeEventListener('pagehide', onLeave);
    };
  }

  /**
   * The page is starting to leave (a reload, a navigation): for `LEAVING_HOLD_MS` from now,
   * refusals are held back (successes still go). A page that is still here then sends them.
   */
  leaving(): void {
    if (this.store.isDisposed) return;
    this.leaveTimer.set(() => {
      for (const h of this.held.splice(0)) if (h.gen === this.generation) this.send(h.text);
    }, LEAVING_HOLD_MS);
  }

  /** Closes the socket and stops reconnecting; requests still running get no reply. Idempotent. */
  dispose(): void {
    if (this.store.isDisposed) return;
    this.store.dispose();
    this.held = [];
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
  }

  private now(): number {
    return this.opts.now ? this.opts.now() : Date.now();
  }

  private send(msg: UiOutbound | string): boolean {
    if (!this.connected) return false;
    this.ws!.send(typeof msg === 'string' ? msg : JSON.stringify(msg));
    return true;
  }

  private sendActive() {
    if (this.send({ type: 'active' })) this.lastActiveAt = this.now();
  }

  /** Sends the state now if it differs from the last one sent (a pending debounced send is folded in). */
  private flushState() {
    this.stateTimer.clear();
    if (!this.connected) return;
    const text = this.host.stateText();
    if (text === this.lastState) return;
    if (this.send(text)) this.lastState = text;
  }

  private connect() {
    if (this.store.isDisposed) return;
    const gen = ++this.generation;
    let ws: WebSocket;
    try {
      const url = this.opts.url ? this.opts.url() : uiSocketUrl();
      ws = this.opts.openSocket ? this.opts.openSocket(url) : new WebSocket(url);
    } catch {
      this.scheduleRetry();
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      if (gen !== this.generation) return;
      this.attempt = 0;
      // Always a full report on a new socket: the sidecar knows nothing of this window yet.
      this.lastState = null;
      this.flushState();
    };
    ws.onmessage = (ev: MessageEvent) => {
      if (gen !== this.generation || typeof ev.data !== 'string') return;
      this.receive(gen, ev.data);
    };
    ws.onclose = () => {
      if (gen !== this.generation) return;
      this.ws = null;
      this.stateTimer.clear();
      this.activeTimer.clear();
      this.scheduleRetry();
    };
    ws.onerror = () => {
      /* onclose follows */
    };
  }

  private receive(gen: number, text: string) {
    const msg = parseInbound(text);
    if (!msg) return;
    if (msg.type === 'handles') {
      this.host.assignHandles(msg.assign);
      return;
    }
    if (msg.type === 'config') {
      this.host.config(msg.snapshot);
      return;
    }
    if (msg.type === 'drivers') {
      this.host.drivers(msg.drivers, msg.handoffs);
      return;
    }
    if (msg.type === 'project_trust') {
      this.host.projectTrust(msg.question);
      return;
    }
    if (msg.type === 'unusable') {
      this.send(replyTo(msg.id, { error: new Error(msg.message) }));
      return;
    }
    const req = msg.request;
    const run = async () => {
      let outcome: { pane: string | null } | { error: unknown };
      try {
        outcome = { pane: await this.host.apply(req) };
      } catch (error) {
        outcome = { error };
      }
      // A request that came on a socket since closed is not answered there: the sidecar
      // asks the window attached next, which finds the change (or not) in its state.
      if (gen !== this.generation) return;
      // The state showing the change goes first, so that a verb naming the new pane right
      // after this one finds it.
      this.flushState();
      const reply = replyTo(req.id, outcome);
      if (!reply.ok && this.leaveTimer.pending) this.held.push({ gen, text: JSON.stringify(reply) });
      else this.send(reply);
    };
    this.queue = this.queue.then(run, run);
  }

  private scheduleRetry() {
    if (this.store.isDisposed || this.retryTimer.pending) return;
    const min = this.opts.minBackoffMs ?? 250;
    const max = this.opts.maxBackoffMs ?? 5000;
    const delay = Math.min(max, min * 2 ** this.attempt) * (0.75 + Math.random() * 0.5);
    this.attempt++;
    this.retryTimer.set(() => this.connect(), delay);
  }
}
