import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ACK_CHUNK_BYTES, LOW_WATERMARK_BYTES, HIGH_WATERMARK_BYTES } from '../api/protocol';
import { type TerminalSink, TerminalSession, splitReplay } from './TerminalSession';

/** A fake WebSocket driven by the test. */
class FakeSocket {
  static all: FakeSocket[] = [];
  readyState = 0;
  binaryType = 'blob';
  sent: Array<string | Uint8Array> = [];
  closed = false;
  onopen: (() => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number }) => void) | null = null;
  onerror: (() => void) | null = null;
  constructor(readonly url: string) {
    FakeSocket.all.push(this);
  }
  send(d: string | Uint8Array) {
    this.sent.push(typeof d === 'string' ? d : new Uint8Array(d));
  }
  close() {
    this.closed = true;
    this.readyState = 3;
  }
  // test side
  open() {
    this.readyState = 1;
    this.onopen?.();
  }
  binary(n: number) {
    this.onmessage?.({ data: new Uint8Array(n).buffer });
  }
  text(s: string) {
    this.onmessage?.({ data: s });
  }
  drop(code = 1006) {
    this.readyState = 3;
    this.onclose?.({ code });
  }
  controls() {
    return this.sent.filter((s): s is string => typeof s === 'string').map((s) => JSON.parse(s));
  }
}

/** A sink that records writes and lets the test run their callbacks. */
class FakeSink implements TerminalSink {
  log: string[] = [];
  callbacks: Array<() => void> = [];
  write(data: Uint8Array | string, done: () => void) {
    this.log.push(typeof data === 'string' ? `text:${data}` : `bytes:${data.byteLength}`);
    this.callbacks.push(done);
  }
  reset() {
    this.log.push('reset');
  }
  setReplaying(on: boolean) {
    this.log.push(`replaying:${on}`);
  }
  setAnswering(on: boolean) {
    this.log.push(`answering:${on}`);
  }
  flush() {
    for (const cb of this.callbacks.splice(0)) cb();
  }
}

function makeSession(sink = new FakeSink()) {
  const s = new TerminalSession('t1', sink, { openSocket: (url) => new FakeSocket(url) as unknown as WebSocket, minBackoffMs: 10, maxBackoffMs: 40 });
  return { s, sink, ws: () => FakeSocket.all[FakeSocket.all.length - 1] };
}

beforeEach(() => {
  FakeSocket.all = [];
  vi.useFakeTimers();
  vi.stubGlobal('location', { protocol: 'http:', host: '127.0.0.1:9999' });
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe('TerminalSession', () => {
  it('protocol constants keep the ack invariant', () => {
    expect(ACK_CHUNK_BYTES).toBeLessThanOrEqual(LOW_WATERMARK_BYTES);
    expect(LOW_WATERMARK_BYTES).toBeLessThan(HIGH_WATERMARK_BYTES);
  });

  it('connects to the terminal socket on the page origin', () => {
    const { ws } = makeSession();
    expect(ws().url).toBe('ws://127.0.0.1:9999/api/terminals/t1/socket');
    expect(ws().binaryType).toBe('arraybuffer');
  });

  it('acks processed bytes once nothing is pending', () => {
    const { sink, ws } = makeSession();
    ws().open();
    ws().binary(100);
    ws().binary(50);
    expect(ws().controls()).toEqual([]);
    sink.flush();
    expect(ws().controls()).toEqual([{ type: 'ack', bytes: 150 }]);
  });

  it('acks in chunks of at least ACK_CHUNK_BYTES while output keeps coming', () => {
    const { sink, ws } = makeSession();
    ws().open();
    const quarter = ACK_CHUNK_BYTES / 4;
    for (let i = 0; i < 10; i++) ws().binary(quarter);
    // process the first 5 of 10 writes: 5/4 of a chunk → one ack, though more is pending
    for (const cb of sink.callbacks.splice(0, 5)) cb();
    expect(ws().controls()).toEqual([{ type: 'ack', bytes: 4 * quarter }]);
    sink.flush();
    const acks = ws().controls().filter((c) => c.type === 'ack');
    expect(acks.reduce((a, c) => a + c.bytes, 0)).toBe(10 * quarter);
  });

  it('resets the terminal before the replay and on every reconnect', async () => {
    const { s: s0, sink, ws } = makeSession();
    s0.resize(80, 24);
    const first = ws();
    first.open();
    first.binary(10);
    expect(sink.log).toEqual(['reset', 'bytes:10']);
    first.drop();
    expect(FakeSocket.all).toHaveLength(1);
    // The reconnect checks the terminal still exists first.
    vi.stubGlobal('fetch', vi.fn(async () => new Response(JSON.stringify({ id: 't1' }), { status: 200 })));
    await vi.advanceTimersByTimeAsync(100);
    expect(FakeSocket.all).toHaveLength(2);
    const second = ws();
    s0.resize(90, 20);
    second.open();
    expect(second.controls()).toEqual([{ type: 'resize', cols: 90, rows: 20 }]);
    second.binary(10);
    expect(sink.log).toEqual(['reset', 'bytes:10', 'reset', 'bytes:10']);
    // A write callback of the old socket never acks on the new one.
    const before = second.controls().length;
    sink.callbacks[0]();
    expect(second.controls()).toHaveLength(before);
  });

  it('draws a catch-up state as replay (no queries answered, no reset), acks it, and tells once it is drawn', () => {
    const { s, sink, ws } = makeSession();
    const caughtUp: Array<{ lines: number; skippedBytes: number }> = [];
    s.onCatchUp((c) => caughtUp.push(c));
    ws().open();
    ws().text('{"type":"replay","bytes":0}');
    ws().binary(HIGH_WATERMARK_BYTES + 1);
    ws().text('{"type":"catchup","bytes":10,"lines":3000000,"skipped":20888896}');
    ws().binary(4);
    ws().binary(9); // the state's last 6 bytes, then live output
    expect(sink.log).toEqual([
      'reset',
      `bytes:${HIGH_WATERMARK_BYTES + 1}`,
      'replaying:true',
      'bytes:4',
      'bytes:6',
      'replaying:false',
      'text:',
      'bytes:3',
    ]);
    expect(caughtUp).toEqual([]);
    sink.flush();
    expect(caughtUp).toEqual([{ lines: 3000000, skippedBytes: 20888896 }]);
    const acked = ws()
      .controls()
      .filter((c) => c.type === 'ack')
      .reduce((n, c) => n + c.bytes, 0);
    expect(acked).toBe(HIGH_WATERMARK_BYTES + 1 + 10 + 3);
    expect(FakeSocket.all).toHaveLength(1);
  });

  it('ignores a malformed catch-up header', () => {
    const { sink, ws } = makeSession();
    ws().open();
    ws().text('{"type":"catchup","bytes":-1,"lines":1,"skipped":1}');
    ws().text('{"type":"catchup","bytes":5}');
    ws().binary(5);
    expect(sink.log).toEqual(['reset', 'bytes:5']);
  });

  it('gives up when the terminal is gone', async () => {
    const { s, ws } = makeSession();
    ws().open();
    ws().drop();
    vi.stubGlobal('fetch', vi.fn(async () => new Response('{"error":{"code":"not_found","message":"x"}}', { status: 404 })));
    await vi.advanceTimersByTimeAsync(100);
    expect(s.status).toBe('gone');
    await vi.advanceTimersByTimeAsync(1000);
    expect(FakeSocket.all).toHaveLength(1);
  });

  it('keeps retrying while a remote link is down (503 remote_disconnected), and reconnects once it is back', async () => {
    const { s, ws } = makeSession();
    ws().open();
    ws().drop();
    let down = true;
    vi.stubGlobal(
      'fetch',
      vi.fn(async () =>
        down
          ? new Response('{"error":{"code":"remote_disconnected","message":"the link is down"}}', { status: 503 })
          : new Response('{"id":"t1","alive":true}', { status: 200 }),
      ),
    );
    await vi.advanceTimersByTimeAsync(300);
    expect(s.status).toBe('reconnecting');
    expect(FakeSocket.all).toHaveLength(1);
    down = false;
    await vi.advanceTimersByTimeAsync(300);
    expect(FakeSocket.all).toHaveLength(2);
    ws().open();
    expect(s.status).toBe('open');
  });

  it('reports exit after the output before it, and does not reconnect after it', async () => {
    const { s, sink, ws } = makeSession();
    const codes: number[] = [];
    s.onExit((c) => codes.push(c));
    ws().open();
    ws().binary(5);
    ws().text('{"type":"exit","code":3}');
    expect(codes).toEqual([]);
    sink.flush();
    expect(codes).toEqual([3]);
    ws().drop();
    await vi.advanceTimersByTimeAsync(1000);
    expect(FakeSocket.all).toHaveLength(1);
  });

  it('sends each valid resize once and ignores invalid ones', () => {
    const { s, ws } = makeSession();
    s.resize(80, 24);
    ws().open();
    s.resize(80, 24);
    s.resize(0, 24);
    s.resize(NaN, 10);
    s.resize(1001, 10);
    s.resize(100, 30);
    expect(ws().controls()).toEqual([
      { type: 'resize', cols: 80, rows: 24 },
      { type: 'resize', cols: 100, rows: 30 },
    ]);
  });

  it('queues input typed before the first open, encodes UTF-8', () => {
    const { s, ws } = makeSession();
    s.send('é');
    expect(ws().sent).toEqual([]);
    ws().open();
    expect(ws().sent).toEqual([new Uint8Array([0xc3, 0xa9])]);
  });

  it('dispose is idempotent and closes the socket', () => {
    const { s, ws } = makeSession();
    ws().open();
    s.dispose();
    s.dispose();
    expect(ws().closed).toBe(true);
    expect(s.status).toBe('closed');
  });

  it('marks exactly the announced bytes as replay, splitting a message that straddles the end', () => {
    const { sink, ws } = makeSession();
    ws().open();
    ws().text('{"type":"replay","bytes":150}');
    ws().text('{"type":"answerer","answers":true}');
    ws().binary(100);
    ws().binary(80); // 50 replay + 30 live (the server never mixes them; count anyway)
    ws().binary(5);
    expect(sink.log).toEqual([
      'reset',
      'replaying:true',
      'answering:true',
      'bytes:100',
      'bytes:50',
      'replaying:false',
      'bytes:30',
      'bytes:5',
    ]);
    sink.flush();
    const acks = ws().controls().filter((c) => c.type === 'ack');
    expect(acks.reduce((a, c) => a + c.bytes, 0)).toBe(185);
  });

  it('an empty replay marks nothing; answerer changes are ordered with the output', () => {
    const { sink, ws } = makeSession();
    ws().open();
    ws().text('{"type":"replay","bytes":0}');
    ws().text('{"type":"answerer","answers":true}');
    ws().binary(3);
    ws().text('{"type":"answerer","answers":false}');
    ws().binary(4);
    expect(sink.log).toEqual(['reset', 'answering:true', 'bytes:3', 'answering:false', 'bytes:4']);
  });

  it('a socket that drops mid-replay ends the replay, and the next one starts its own', async () => {
    const { sink, ws } = makeSession();
    ws().open();
    ws().text('{"type":"replay","bytes":100}');
    ws().binary(60);
    ws().drop();
    expect(sink.log).toEqual(['reset', 'replaying:true', 'bytes:60', 'replaying:false']);
    vi.stubGlobal('fetch', vi.fn(async () => new Response(JSON.stringify({ id: 't1' }), { status: 200 })));
    await vi.advanceTimersByTimeAsync(100);
    ws().open();
    ws().text('{"type":"replay","bytes":10}');
    ws().binary(10);
    ws().binary(1);
    expect(sink.log.slice(4)).toEqual(['reset', 'replaying:true', 'bytes:10', 'replaying:false', 'bytes:1']);
  });

  it('ignores malformed and unknown control messages', () => {
    const { sink, ws } = makeSession();
    ws().open();
    for (const t of ['{"type":"replay","bytes":-1}', '{"type":"replay","bytes":1.5}', '{"type":"answerer","answers":1}', '{"type":"new"}', 'nope'])
      ws().text(t);
    ws().binary(2);
    expect(sink.log).toEqual(['reset', 'bytes:2']);
  });
});

describe('splitReplay', () => {
  const check = (left: number, n: number, want: [number, number]) => {
    const { replay, live } = splitReplay(left, new Uint8Array(n));
    expect([replay.byteLength, live.byteLength]).toEqual(want);
  };
  it('splits at the replay boundary', () => {
    check(0, 10, [0, 10]);
    check(4, 10, [4, 6]);
    check(10, 10, [10, 0]);
    check(20, 10, [10, 0]);
    check(5, 0, [0, 0]);
  });
});
