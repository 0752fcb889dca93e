import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { INPUT_HIGH_WATER_BYTES, RECONNECT_FIRST_MS, ViewerSession } from './ViewerSession';

/** A fake WebSocket (the global one is stubbed with it), driven by the test. */
class FakeWS {
  static readonly OPEN = 1;
  static readonly CLOSED = 3;
  static all: FakeWS[] = [];
  readyState = 0;
  binaryType = 'blob';
  bufferedAmount = 0;
  sent: Record<string, unknown>[] = [];
  closedWith: number | null = null;
  onopen: (() => void) | null = null;
  onmessage: ((e: { data: unknown }) => void) | null = null;
  onclose: ((e: { code: number }) => void) | null = null;
  constructor(readonly url: string) {
    FakeWS.all.push(this);
  }
  send(d: string) {
    this.sent.push(JSON.parse(d));
  }
  close(code: number) {
    this.closedWith = code;
    this.readyState = FakeWS.CLOSED;
  }
  open() {
    this.readyState = FakeWS.OPEN;
    this.onopen?.();
  }
  text(m: object) {
    this.onmessage?.({ data: JSON.stringify(m) });
  }
  drop(code = 1006) {
    this.readyState = FakeWS.CLOSED;
    this.onclose?.({ code });
  }
}

function setup(grant: () => Promise<string> = () => Promise.resolve(`ws://viewer/${FakeWS.all.length + 1}`)) {
  const log: string[] = [];
  const s = new ViewerSession(grant, {
    onOpen: () => log.push('open'),
    onFrame: (b) => log.push(`frame ${b.byteLength}`),
    onMessage: (m) => log.push(`msg ${m.type}`),
    onClose: (code) => log.push(`close ${code}`),
    onGrantError: () => log.push('grant error'),
  });
  return { s, log, ws: () => FakeWS.all[FakeWS.all.length - 1] };
}

describe('ViewerSession', () => {
  beforeEach(() => {
    FakeWS.all = [];
    vi.useFakeTimers();
    vi.stubGlobal('WebSocket', FakeWS);
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it('input given before the socket opens is held and sent in order once it does', async () => {
    const { s, ws } = setup();
    s.sendInput({ type: 'input_text', text: 'a' });
    s.start();
    await vi.advanceTimersByTimeAsync(0);
    s.sendInput({ type: 'input_text', text: 'b' });
    expect(s.heldInputs).toBe(2);
    ws().open();
    expect(ws().sent).toEqual([
      { type: 'input_text', text: 'a' },
      { type: 'input_text', text: 'b' },
    ]);
    expect(s.heldInputs).toBe(0);
  });

  it('input waits while the socket is over the high water mark, then goes', async () => {
    const { s, ws } = setup();
    s.start();
    await vi.advanceTimersByTimeAsync(0);
    ws().open();
    ws().bufferedAmount = INPUT_HIGH_WATER_BYTES + 1;
    s.sendInput({ type: 'input_text', text: 'x' });
    expect(ws().sent).toEqual([]);
    ws().bufferedAmount = 0;
    await vi.advanceTimersByTimeAsync(50);
    expect(ws().sent).toEqual([{ type: 'input_text', text: 'x' }]);
  });

  it('a dropped socket reconnects with a fresh grant after the backoff; stop ends it', async () => {
    const { s, log, ws } = setup();
    s.start();
    await vi.advanceTimersByTimeAsync(0);
    ws().open();
    ws().drop();
    expect(log).toEqual(['open', 'close 1006']);
    await vi.advanceTimersByTimeAsync(RECONNECT_FIRST_MS);
    expect(FakeWS.all.map((w) => w.url)).toEqual(['ws://viewer/1', 'ws://viewer/2']);
    s.stop();
    expect(ws().closedWith).toBe(1000);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(FakeWS.all.length).toBe(2);
  });

  it('a failed grant is reported and asked again', async () => {
    let n = 0;
    const { s, log } = setup(() => (n++ === 0 ? Promise.reject(new Error('gone')) : Promise.resolve('ws://viewer/ok')));
    s.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(log).toEqual(['grant error']);
    await vi.advanceTimersByTimeAsync(RECONNECT_FIRST_MS);
    expect(FakeWS.all.map((w) => w.url)).toEqual(['ws://viewer/ok']);
  });

  it('settleInput resolves on the flush barrier, or false at its bound', async () => {
    const { s, ws } = setup();
    s.start();
    await vi.advanceTimersByTimeAsync(0);
    ws().open();
    const settled = s.settleInput(1000);
    const barrier = ws().sent.at(-1) as { type: string; id: number };
    expect(barrier.type).toBe('flush');
    ws().text({ type: 'flushed', id: barrier.id });
    expect(await settled).toBe(true);
    const late = s.settleInput(1000);
    await vi.advanceTimersByTimeAsync(1000);
    expect(await late).toBe(false);
  });

  it('state messages go to the owner; after dispose nothing is held, sent or reconnected', async () => {
    const { s, log, ws } = setup();
    s.start();
    await vi.advanceTimersByTimeAsync(0);
    ws().open();
    ws().text({ type: 'tabs', tabs: [], active: null });
    expect(log).toContain('msg tabs');
    s.dispose();
    s.sendInput({ type: 'input_text', text: 'z' });
    expect(s.heldInputs).toBe(0);
    s.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(FakeWS.all.length).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });
});
