import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { UiRequest } from '../api/protocol';
import { Refused } from './messages';
import { LEAVING_HOLD_MS, UiChannel, type UiChannelHost } from './UiChannel';
import type { TrustQuestion } from '../project/project';

/** A fake WebSocket driven by the test. */
class FakeSocket {
  static all: FakeSocket[] = [];
  readyState = 0;
  sent: string[] = [];
  onopen: (() => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: (() => void) | null = null;
  onerror: (() => void) | null = null;
  constructor(readonly url: string) {
    FakeSocket.all.push(this);
  }
  send(d: string) {
    this.sent.push(d);
  }
  close() {
    this.readyState = 3;
  }
  open() {
    this.readyState = 1;
    this.onopen?.();
  }
  text(v: unknown) {
    this.onmessage?.({ data: typeof v === 'string' ? v : JSON.stringify(v) });
  }
  drop() {
    this.readyState = 3;
    this.onclose?.();
  }
  messages(): Array<Record<string, unknown>> {
    return this.sent.map((s) => JSON.parse(s));
  }
  types(): string[] {
    return this.messages().map((m) => m.type as string);
  }
}

/** A host whose state is a counter the test bumps, and whose requests the test settles. */
class FakeHost implements UiChannelHost {
  version = 1;
  assigned: Array<Record<string, string>> = [];
  requests: Array<{ r: UiRequest; resolve: (p: string | null) => void; reject: (e: unknown) => void }> = [];
  stateText() {
    return JSON.stringify({ type: 'state', active: true, focused: null, panes: [], v: this.version });
  }
  apply(r: UiRequest) {
    return new Promise<string | null>((resolve, reject) => this.requests.push({ r, resolve, reject }));
  }
  assignHandles(assign: Record<string, string>) {
    this.assigned.push(assign);
  }
  configs: unknown[] = [];
  config(snapshot: unknown) {
    this.configs.push(snapshot);
  }
  questions: TrustQuestion[] = [];
  projectTrust(q: TrustQuestion) {
    this.questions.push(q);
  }
  driverMaps: unknown[] = [];
  drivers(map: unknown) {
    this.driverMaps.push(map);
  }
}

let clock = 0;
function make(host = new FakeHost()) {
  const ch = new UiChannel(host, {
    openSocket: (url) => new FakeSocket(url) as unknown as WebSocket,
    url: () => 'ws://127.0.0.1:9/api/ui/socket',
    now: () => clock,
    minBackoffMs: 10,
    maxBackoffMs: 40,
  });
  return { ch, host, ws: () => FakeSocket.all[FakeSocket.all.length - 1] };
}

const request = (id: number) => ({ type: 'request', id, verb: 'pane', pane: 'p1', action: 'focus' });

beforeEach(() => {
  FakeSocket.all = [];
  clock = 0;
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('UiChannel', () => {
  it('reports the state on connect, then only when it changed, debounced', () => {
    const { ch, host, ws } = make();
    expect(ws().url).toBe('ws://127.0.0.1:9/api/ui/socket');
    ws().open();
    expect(ws().messages()).toEqual([{ type: 'state', active: true, focused: null, panes: [], v: 1 }]);
    // Changes within the debounce go as one message.
    host.version = 2;
    ch.changed();
    host.version = 3;
    ch.changed();
    vi.advanceTimersByTime(49);
    expect(ws().sent).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(ws().messages().map((m) => m.v)).toEqual([1, 3]);
    // Nothing reported changed: nothing sent.
    ch.changed();
    vi.advanceTimersByTime(100);
    expect(ws().sent).toHaveLength(2);
  });

  it('reconnects with backoff after a drop and reports the full state again', () => {
    const { ch, ws } = make();
    ws().open();
    const first = ws();
    first.drop();
    ch.changed(); // while down: nothing to send, no error
    vi.advanceTimersByTime(20);
    expect(FakeSocket.all).toHaveLength(2);
    ws().drop(); // a failed attempt
    vi.advanceTimersByTime(40);
    expect(FakeSocket.all).toHaveLength(3);
    ws().open();
    // Same state as before the drop, but a new socket always gets it.
    expect(ws().types()).toEqual(['state']);
  });

  it('sends active at most once a second, the last activity within a second trailing', () => {
    const { ch, ws } = make();
    ws().open();
    clock = 5000;
    ch.activity();
    expect(ws().types()).toEqual(['state', 'active']);
    clock = 5300;
    ch.activity();
    clock = 5600;
    ch.activity();
    expect(ws().types()).toEqual(['state', 'active']);
    clock = 6000;
    vi.advanceTimersByTime(700);
    expect(ws().types()).toEqual(['state', 'active', 'active']);
    clock = 8000;
    ch.activity();
    expect(ws().types()).toEqual(['state', 'active', 'active', 'active']);
  });

  it('follows window focus, blur and use', () => {
    const { ch, host, ws } = make();
    ws().open();
    const win = new EventTarget();
    const stop = ch.listen(win);
    clock = 10_000;
    host.version = 2;
    win.dispatchEvent(new Event('focus'));
    expect(ws().types()).toEqual(['state', 'active']);
    vi.advanceTimersByTime(50);
    expect(ws().types()).toEqual(['state', 'active', 'state']);
    clock = 20_000;
    win.dispatchEvent(new Event('keydown'));
    expect(ws().types()).toEqual(['state', 'active', 'state', 'active']);
    stop();
    clock = 30_000;
    win.dispatchEvent(new Event('pointerdown'));
    expect(ws().types()).toHaveLength(4);
  });

  it('hands handles to the host and ignores what it does not know', () => {
    const { host, ws } = make();
    ws().open();
    ws().text({ type: 'handles', assign: { p2: 'b1' } });
    ws().text({ type: 'welcome' });
    ws().text('not json');
    ws().text({ type: 'handles', assign: { p2: 'nope' } });
    expect(host.assigned).toEqual([{ p2: 'b1' }]);
  });

  it('hands the drivers map to the host as it came', () => {
    const { host, ws } = make();
    ws().open();
    ws().text({ type: 'drivers', drivers: { b1: 't2' } });
    expect(host.driverMaps).toEqual([{ b1: 't2' }]);
  });

  it('answers each request after the state that shows its change, one request at a time', async () => {
    const { host, ws } = make();
    ws().open();
    ws().text(request(1));
    ws().text(request(2));
    await vi.advanceTimersByTimeAsync(0);
    expect(host.requests.map((q) => q.r.id)).toEqual([1]);
    host.version = 2;
    host.requests[0].resolve('p1');
    await vi.advanceTimersByTimeAsync(0);
    expect(ws().messages().slice(1)).toEqual([
      { type: 'state', active: true, focused: null, panes: [], v: 2 },
      { type: 'reply', id: 1, ok: true, pane: 'p1' },
    ]);
    // The second starts only once the first is answered.
    expect(host.requests.map((q) => q.r.id)).toEqual([1, 2]);
    host.requests[1].reject(new Refused('there is no pane p1 in this window'));
    await vi.advanceTimersByTimeAsync(0);
    expect(ws().messages().at(-1)).toEqual({ type: 'reply', id: 2, ok: false, code: 'refused', message: 'there is no pane p1 in this window' });
  });

  it('refuses an unusable request at once', () => {
    const { host, ws } = make();
    ws().open();
    ws().text({ type: 'request', id: 7, verb: 'teleport' });
    expect(host.requests).toHaveLength(0);
    expect(ws().messages().at(-1)).toEqual({ type: 'reply', id: 7, ok: false, code: 'refused', message: 'this window does not know the verb "teleport"' });
  });

  it('does not answer a request on a newer socket than the one it came on', async () => {
    const { host, ws } = make();
    ws().open();
    const first = ws();
    first.text(request(3));
    await vi.advanceTimersByTimeAsync(0);
    first.drop();
    await vi.advanceTimersByTimeAsync(20);
    ws().open();
    host.requests[0].resolve('p1');
    await vi.advanceTimersByTimeAsync(0);
    expect(ws().types()).toEqual(['state']);
    expect(first.types()).toEqual(['state']);
  });

  it('while the page leaves, a refusal is held (the reload caused it) and sent only if the page stays', async () => {
    const { ch, host, ws } = make();
    ws().open();
    const win = new EventTarget();
    ch.listen(win);
    ws().text(request(1));
    ws().text(request(2));
    await vi.advanceTimersByTimeAsync(0);
    win.dispatchEvent(new Event('beforeunload'));
    host.requests[0].reject(new Refused('Failed to fetch'));
    await vi.advanceTimersByTimeAsync(0);
    expect(ws().types()).toEqual(['state']);
    // A success is the truth whatever happens next: it goes at once.
    host.requests[1].resolve('p1');
    await vi.advanceTimersByTimeAsync(0);
    expect(ws().messages().at(-1)).toEqual({ type: 'reply', id: 2, ok: true, pane: 'p1' });
    // Still here after the hold (the navigation was cancelled): the refusal goes.
    await vi.advanceTimersByTimeAsync(LEAVING_HOLD_MS);
    expect(ws().messages().filter((m) => m.type === 'reply').map((m) => m.id)).toEqual([2, 1]);
  });

  it('a held refusal is dropped when its socket closed meanwhile (the sidecar asks the next window)', async () => {
    const { ch, host, ws } = make();
    ws().open();
    const first = ws();
    first.text(request(1));
    await vi.advanceTimersByTimeAsync(0);
    ch.leaving();
    host.requests[0].reject(new Refused('Failed to fetch'));
    await vi.advanceTimersByTimeAsync(0);
    first.drop();
    await vi.advanceTimersByTimeAsync(20);
    ws().open();
    await vi.advanceTimersByTimeAsync(LEAVING_HOLD_MS);
    expect(first.types()).toEqual(['state']);
    expect(ws().types()).toEqual(['state']);
  });

  it('dispose closes the socket and stops reconnecting', () => {
    const { ch, ws } = make();
    ws().open();
    ch.dispose();
    ch.dispose();
    expect(ws().readyState).toBe(3);
    vi.advanceTimersByTime(1000);
    expect(FakeSocket.all).toHaveLength(1);
    expect(ch.connected).toBe(false);
  });
});
