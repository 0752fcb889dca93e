// Pure: the viewer socket's binary frame header (protocol §8.4) and the view's latest-only
// decode queue. No DOM here; the runtime passes the decoder and the painter in.

/** Bytes before the JPEG in every binary frame message. */
export const FRAME_HEADER_BYTES = 16;

export interface Frame {
  /** per socket, from 1, +1 per frame sent */
  id: number;
  /** viewport width in CSS px the frame shows */
  width: number;
  /** viewport height in CSS px */
  height: number;
  /** device pixel ratio of the capture */
  dpr: number;
  /** true for a crisp capture, false for a provisional screencast frame */
  crisp: boolean;
  /** the JPEG bytes (a view into the message, no copy) */
  jpeg: Uint8Array;
}

/**
 * Parses one binary frame message. Returns null (soft failure) when it is too short, names
 * frame 0 or a zero size, carries a non-finite or non-positive DPR, or its body is not a JPEG.
 */
export function parseFrame(buf: ArrayBuffer): Frame | null {
  if (buf.byteLength < FRAME_HEADER_BYTES + 2) return null;
  const v = new DataView(buf);
  const id = v.getUint32(0, true);
  const width = v.getUint16(4, true);
  const height = v.getUint16(6, true);
  const dpr = v.getFloat32(8, true);
  const flags = v.getUint8(12);
  const jpeg = new Uint8Array(buf, FRAME_HEADER_BYTES);
  if (id === 0 || width === 0 || height === 0 || !Number.isFinite(dpr) || dpr <= 0) return null;
  if (jpeg[0] !== 0xff || jpeg[1] !== 0xd8) return null;
  return { id, width, height, dpr, crisp: (flags & 1) === 1, jpeg };
}

/**
 * Latest-only decoding, pipelined: up to `depth` decodes run at once (each one's latency is
 * mostly waiting on the decoder thread, so one at a time paints at most 1 ÷ latency frames a
 * second however fast they arrive); while all run, one frame waits and a newer arrival
 * replaces it. A frame whose id is not above the last one started (or waiting) is dropped,
 * and a decode that ends after a newer frame was painted is discarded, so an older frame
 * never replaces a newer one on screen. `reset()` starts a new socket's id sequence and drops
 * what waits; a decode from before the reset is discarded when it ends.
 */
export class LatestOnlyQueue<F extends { id: number }, D> {
  private running = 0;
  private waiting: F | null = null;
  /** highest id handed to the decoder in this generation */
  private lastId = 0;
  /** highest id painted in this generation */
  private paintedId = 0;
  private generation = 0;
  private closed = false;

  constructor(
    private readonly decode: (f: F) => Promise<D>,
    private readonly paint: (d: D, f: F) => void,
    /** called for a decoded result that will not be painted (close an ImageBitmap here) */
    private readonly discard: (d: D) => void = () => {},
    /** most decodes running at once (≥ 1) */
    private readonly depth = 1,
  ) {}

  /** Offers frame `f`. Returns true iff it was accepted (decoding now or waiting). */
  push(f: F): boolean {
    if (this.closed) return false;
    const floor = Math.max(this.lastId, this.waiting?.id ?? 0);
    if (f.id <= floor) return false;
    if (this.running >= Math.max(1, this.depth)) {
      this.waiting = f;
      return true;
    }
    this.run(f);
    return true;
  }

  /** A new id sequence begins (a new socket): forget ids and drop the waiting frame. */
  reset(): void {
    this.generation++;
    this.lastId = 0;
    this.paintedId = 0;
    this.waiting = null;
    this.running = 0;
  }

  /** Stops for good: nothing more is decoded or painted. Idempotent. */
  close(): void {
    this.closed = true;
    this.reset();
  }

  /** true iff a decode is running */
  get decoding(): boolean {
    return this.running > 0;
  }

  private run(f: F) {
    this.running++;
    this.lastId = f.id;
    const gen = this.generation;
    this.decode(f).then(
      (d) => {
        if (gen !== this.generation || this.closed || f.id <= this.paintedId) this.discard(d);
        else {
          this.paintedId = f.id;
          this.paint(d, f);
        }
        this.next(gen);
      },
      () => this.next(gen),
    );
  }

  private next(gen: number) {
    if (gen !== this.generation) return;
    this.running--;
    const w = this.waiting;
    this.waiting = null;
    if (w && !this.closed) this.run(w);
  }
}
