import { describe, expect, it } from 'vitest';
import { type Schedule, StartGate } from './startGate';

/** A fake clock: `advance(ms)` runs what is due, in time order. */
function clock() {
  let now = 0;
  let seq = 0;
  const due: { at: number; seq: number; fn: () => void }[] = [];
  const schedule: Schedule = (fn, ms) => {
    const t = { at: now + ms, seq: seq++, fn };
    due.push(t);
    return () => {
      const i = due.indexOf(t);
      if (i >= 0) due.splice(i, 1);
    };
  };
  const advance = (ms: number) => {
    const end = now + ms;
    for (;;) {
      due.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = due[0];
      if (!next || next.at > end) break;
      due.shift();
      now = next.at;
      next.fn();
    }
    now = end;
  };
  return { schedule, advance, pending: () => due.length };
}

describe('StartGate', () => {
  it('holds hidden starts until every pane on screen has started, even those begun after them in the same task', () => {
    const c = clock();
    const gate = new StartGate(2000, c.schedule);
    const ran: string[] = [];
    gate.defer(() => ran.push('hidden1'));
    const a = gate.begin();
    gate.defer(() => ran.push('hidden2'));
    const b = gate.begin();
    c.advance(0);
    expect(ran).toEqual([]);
    a();
    c.advance(10);
    expect(ran).toEqual([]);
    b();
    b(); // a second call changes nothing
    expect(ran).toEqual([]); // released in a later task
    c.advance(0);
    expect(ran).toEqual(['hidden1', 'hidden2']);
    expect(gate.waitingCount).toBe(0);
  });

  it('runs a hidden start in the next task when nothing on screen is starting', () => {
    const c = clock();
    const gate = new StartGate(2000, c.schedule);
    let ran = 0;
    gate.defer(() => ran++);
    expect(ran).toBe(0);
    c.advance(0);
    expect(ran).toBe(1);
  });

  it('releases hidden starts after the bound when a pane on screen never reports', () => {
    const c = clock();
    const gate = new StartGate(2000, c.schedule);
    let ran = 0;
    gate.begin();
    gate.defer(() => ran++);
    c.advance(1999);
    expect(ran).toBe(0);
    c.advance(1);
    expect(ran).toBe(1);
    // The silent pane counts as started after its bound: a later hidden start is not held.
    gate.defer(() => ran++);
    c.advance(0);
    expect(ran).toBe(2);
    expect(c.pending()).toBe(0);
  });

  it('a shown pane starts at once (now), once; a cancelled start never runs', () => {
    const c = clock();
    const gate = new StartGate(2000, c.schedule);
    const ran: string[] = [];
    gate.begin();
    const shown = gate.defer(() => ran.push('shown'));
    const closed = gate.defer(() => ran.push('closed'));
    shown.now();
    expect(ran).toEqual(['shown']);
    closed.cancel();
    c.advance(5000);
    shown.now();
    expect(ran).toEqual(['shown']);
    expect(gate.waitingCount).toBe(0);
  });
});
