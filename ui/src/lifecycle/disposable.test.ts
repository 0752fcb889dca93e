import { describe, expect, it } from 'vitest';
import { type Clock, DisposableStore, toDisposable } from './disposable';

/** A clock the test advances by hand. */
class FakeClock implements Clock {
  now = 0;
  private next = 1;
  readonly timers = new Map<number, { at: number; f: () => void }>();
  setTimeout(f: () => void, ms: number): unknown {
    const id = this.next++;
    this.timers.set(id, { at: this.now + ms, f });
    return id;
  }
  clearTimeout(h: unknown): void {
    this.timers.delete(h as number);
  }
  advance(ms: number) {
    this.now += ms;
    for (const [id, t] of [...this.timers].sort((a, b) => a[1].at - b[1].at)) {
      if (t.at > this.now || !this.timers.has(id)) continue;
      this.timers.delete(id);
      t.f();
    }
  }
}

describe('DisposableStore', () => {
  it('disposes in reverse order of registration', () => {
    const s = new DisposableStore();
    const order: number[] = [];
    s.defer(() => order.push(1));
    s.defer(() => order.push(2));
    s.add(toDisposable(() => order.push(3)));
    s.dispose();
    expect(order).toEqual([3, 2, 1]);
  });

  it('disposing twice runs nothing the second time', () => {
    const s = new DisposableStore();
    let n = 0;
    s.defer(() => n++);
    s.dispose();
    s.dispose();
    expect(n).toBe(1);
    expect(s.isDisposed).toBe(true);
  });

  it('a disposable added after disposal is disposed at once', () => {
    const s = new DisposableStore();
    s.dispose();
    let n = 0;
    s.defer(() => n++);
    expect(n).toBe(1);
  });

  it('one throwing disposable does not stop the others; the first error is rethrown', () => {
    const s = new DisposableStore();
    let ran = 0;
    s.defer(() => ran++);
    s.defer(() => {
      throw new Error('first');
    });
    s.defer(() => {
      throw new Error('second');
    });
    expect(() => s.dispose()).toThrow('second');
    expect(ran).toBe(1);
  });

  it('toDisposable runs its release once', () => {
    let n = 0;
    const d = toDisposable(() => n++);
    d.dispose();
    d.dispose();
    expect(n).toBe(1);
  });

  it('listen removes the listener on dispose', () => {
    const s = new DisposableStore();
    const t = new EventTarget();
    let n = 0;
    s.listen(t, 'ping', () => n++);
    t.dispatchEvent(new Event('ping'));
    s.dispose();
    t.dispatchEvent(new Event('ping'));
    expect(n).toBe(1);
  });

  it('delete disposes one item now and not again later', () => {
    const s = new DisposableStore();
    let n = 0;
    const d = s.defer(() => n++);
    s.delete(d);
    s.dispose();
    expect(n).toBe(1);
  });
});

describe('timers', () => {
  it('a timeout fires once unless the store is disposed first', () => {
    const clock = new FakeClock();
    const s = new DisposableStore(clock);
    let fired = 0;
    s.timeout(() => fired++, 100);
    s.timeout(() => fired++, 300);
    clock.advance(150);
    expect(fired).toBe(1);
    s.dispose();
    clock.advance(1000);
    expect(fired).toBe(1);
    expect(clock.timers.size).toBe(0);
  });

  it('a slot keeps one timer: set replaces the pending one', () => {
    const clock = new FakeClock();
    const s = new DisposableStore(clock);
    const slot = s.timer();
    const hits: string[] = [];
    slot.set(() => hits.push('a'), 100);
    slot.set(() => hits.push('b'), 100);
    expect(slot.pending).toBe(true);
    clock.advance(100);
    expect(hits).toEqual(['b']);
    expect(slot.pending).toBe(false);
  });

  it('clear cancels; a slot set after disposal sets nothing', () => {
    const clock = new FakeClock();
    const s = new DisposableStore(clock);
    const slot = s.timer();
    let n = 0;
    slot.set(() => n++, 10);
    slot.clear();
    slot.clear();
    clock.advance(20);
    expect(n).toBe(0);
    s.dispose();
    slot.set(() => n++, 10);
    expect(slot.pending).toBe(false);
    clock.advance(20);
    expect(n).toBe(0);
  });
});
