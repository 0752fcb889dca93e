import { describe, expect, it } from 'vitest';
import { FRAME_HEADER_BYTES, LatestOnlyQueue, parseFrame } from './frame';

function frameBytes(id: number, w: number, h: number, dpr: number, flags: number, body = [0xff, 0xd8, 0xff, 0xd9]): ArrayBuffer {
  const buf = new ArrayBuffer(FRAME_HEADER_BYTES + body.length);
  const v = new DataView(buf);
  v.setUint32(0, id, true);
  v.setUint16(4, w, true);
  v.setUint16(6, h, true);
  v.setFloat32(8, dpr, true);
  v.setUint8(12, flags);
  new Uint8Array(buf, FRAME_HEADER_BYTES).set(body);
  return buf;
}

describe('parseFrame', () => {
  const check = (buf: ArrayBuffer, expected: object | null) => {
    const f = parseFrame(buf);
    if (expected === null) expect(f).toBeNull();
    else expect(f).toMatchObject(expected);
  };
  it('reads the little-endian header and the JPEG view', () => {
    check(frameBytes(1, 1280, 800, 1, 0), { id: 1, width: 1280, height: 800, dpr: 1, crisp: false });
    check(frameBytes(70000, 390, 844, 3, 1), { id: 70000, width: 390, height: 844, dpr: 3, crisp: true });
    check(frameBytes(2, 7680, 100, 1.5, 0b11), { crisp: true, dpr: 1.5 });
    const f = parseFrame(frameBytes(5, 10, 10, 2, 0, [0xff, 0xd8, 1, 2, 3]))!;
    expect([...f.jpeg]).toEqual([0xff, 0xd8, 1, 2, 3]);
  });
  it('refuses short, zero, bad-DPR and non-JPEG messages', () => {
    check(new ArrayBuffer(10), null);
    check(frameBytes(0, 10, 10, 1, 0), null);
    check(frameBytes(1, 0, 10, 1, 0), null);
    check(frameBytes(1, 10, 0, 1, 0), null);
    check(frameBytes(1, 10, 10, 0, 0), null);
    check(frameBytes(1, 10, 10, NaN, 0), null);
    check(frameBytes(1, 10, 10, 1, 0, [0x89, 0x50, 0x4e, 0x47]), null);
  });
});

/** A decoder whose results the test releases by hand. */
function harness(depth = 1) {
  const pending: { id: number; resolve: () => void }[] = [];
  const painted: number[] = [];
  const discarded: number[] = [];
  const q = new LatestOnlyQueue<{ id: number }, number>(
    (f) => new Promise<number>((resolve) => pending.push({ id: f.id, resolve: () => resolve(f.id) })),
    (d) => painted.push(d),
    (d) => discarded.push(d),
    depth,
  );
  /** Ends the decode of frame `id` (default: the oldest running). */
  const finish = async (id?: number) => {
    const i = id === undefined ? 0 : pending.findIndex((p) => p.id === id);
    const [p] = pending.splice(i, 1);
    p.resolve();
    await new Promise((r) => setTimeout(r, 0));
  };
  return { q, pending, painted, discarded, finish };
}

describe('LatestOnlyQueue', () => {
  it('decodes one at a time and replaces the one waiting', async () => {
    const h = harness();
    expect(h.q.push({ id: 1 })).toBe(true);
    expect(h.q.push({ id: 2 })).toBe(true);
    expect(h.q.push({ id: 3 })).toBe(true); // replaces 2
    expect(h.pending.map((p) => p.id)).toEqual([1]);
    await h.finish();
    expect(h.painted).toEqual([1]);
    expect(h.pending.map((p) => p.id)).toEqual([3]);
    await h.finish();
    expect(h.painted).toEqual([1, 3]);
    expect(h.q.decoding).toBe(false);
  });
  it('never lets an older frame replace a newer one', async () => {
    const h = harness();
    h.q.push({ id: 5 });
    expect(h.q.push({ id: 4 })).toBe(false);
    expect(h.q.push({ id: 5 })).toBe(false);
    h.q.push({ id: 7 });
    expect(h.q.push({ id: 6 })).toBe(false); // older than the waiting one
    await h.finish();
    await h.finish();
    expect(h.painted).toEqual([5, 7]);
    expect(h.q.push({ id: 7 })).toBe(false);
  });
  it('reset starts a new id sequence and discards a decode from before it', async () => {
    const h = harness();
    h.q.push({ id: 9 });
    h.q.push({ id: 10 });
    h.q.reset();
    expect(h.q.push({ id: 1 })).toBe(true);
    await h.finish(); // frame 9 (old generation)
    expect(h.discarded).toEqual([9]);
    await h.finish(); // frame 1
    expect(h.painted).toEqual([1]);
  });
  it('pipelined: decodes up to its depth at once and paints in id order only', async () => {
    const h = harness(2);
    h.q.push({ id: 1 });
    h.q.push({ id: 2 });
    h.q.push({ id: 3 });
    h.q.push({ id: 4 }); // replaces 3 while 1 and 2 run
    expect(h.pending.map((p) => p.id)).toEqual([1, 2]);
    await h.finish(2); // 2 ends first: painted, and 4 starts
    expect(h.painted).toEqual([2]);
    expect(h.pending.map((p) => p.id)).toEqual([1, 4]);
    await h.finish(1); // older than what is on screen: never painted
    expect(h.painted).toEqual([2]);
    expect(h.discarded).toEqual([1]);
    await h.finish(4);
    expect(h.painted).toEqual([2, 4]);
    expect(h.q.decoding).toBe(false);
  });
  it('close stops everything and is idempotent', async () => {
    const h = harness();
    h.q.push({ id: 1 });
    h.q.close();
    h.q.close();
    expect(h.q.push({ id: 2 })).toBe(false);
    await h.finish();
    expect(h.painted).toEqual([]);
    expect(h.discarded).toEqual([1]);
  });
});
