import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Liveness, LivenessWatch } from './liveness';

afterEach(() => vi.useRealTimers());

/** A probe that answers from a script, one answer per call (the last one repeats). */
function scripted(answers: Liveness[]) {
  let i = 0;
  const probe = vi.fn(async () => answers[Math.min(i++, answers.length - 1)]);
  return probe;
}

describe('LivenessWatch', () => {
  it('one probe that answers up reports nothing and stops', async () => {
    vi.useFakeTimers();
    const probe = scripted(['up']);
    const seen: Liveness[] = [];
    const w = new LivenessWatch(probe, (s) => seen.push(s));
    w.suspect();
    await vi.runAllTimersAsync();
    expect(probe).toHaveBeenCalledTimes(1);
    expect(seen).toEqual([]);
  });

  it('reports stopped, keeps probing with back-off, and reports up when it comes back', async () => {
    vi.useFakeTimers();
    const probe = scripted(['stopped', 'stopped', 'stopped', 'up']);
    const seen: Liveness[] = [];
    const w = new LivenessWatch(probe, (s) => seen.push(s), { minDelayMs: 100, maxDelayMs: 250 });
    w.suspect();
    await vi.advanceTimersByTimeAsync(0);
    expect(seen).toEqual(['stopped']);
    expect(w.current).toBe('stopped');
    await vi.advanceTimersByTimeAsync(99);
    expect(probe).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1); // 100 ms
    expect(probe).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(200); // then 200 ms
    expect(probe).toHaveBeenCalledTimes(3);
    await vi.advanceTimersByTimeAsync(249); // capped at 250 ms
    expect(probe).toHaveBeenCalledTimes(3);
    await vi.advanceTimersByTimeAsync(1);
    expect(probe).toHaveBeenCalledTimes(4);
    expect(seen).toEqual(['stopped', 'up']);
    await vi.runAllTimersAsync();
    expect(probe).toHaveBeenCalledTimes(4);
  });

  it('suspicion while a probe is under way or waiting starts no second probe', async () => {
    vi.useFakeTimers();
    const probe = scripted(['stopped']);
    const w = new LivenessWatch(probe, () => {}, { minDelayMs: 1000 });
    w.suspect();
    w.suspect();
    await vi.advanceTimersByTimeAsync(0);
    w.suspect();
    expect(probe).toHaveBeenCalledTimes(1);
    w.dispose();
    await vi.runAllTimersAsync();
    expect(probe).toHaveBeenCalledTimes(1);
  });

  it('watch probes on a heartbeat while visible, and never twice at once', async () => {
    vi.useFakeTimers();
    const probe = scripted(['up']);
    let visible = true;
    const w = new LivenessWatch(probe, () => {});
    w.watch(1000, () => visible);
    w.watch(1000, () => visible); // idempotent
    await vi.advanceTimersByTimeAsync(3000);
    expect(probe).toHaveBeenCalledTimes(3);
    visible = false;
    await vi.advanceTimersByTimeAsync(3000);
    expect(probe).toHaveBeenCalledTimes(3);
    w.dispose();
    visible = true;
    await vi.advanceTimersByTimeAsync(3000);
    expect(probe).toHaveBeenCalledTimes(3);
  });

  it('a restarted Porthole (401) is signed-out, not stopped', async () => {
    vi.useFakeTimers();
    const seen: Liveness[] = [];
    const w = new LivenessWatch(scripted(['stopped', 'signed-out']), (s) => seen.push(s), { minDelayMs: 10 });
    w.suspect();
    await vi.advanceTimersByTimeAsync(10);
    expect(seen).toEqual(['stopped', 'signed-out']);
    w.dispose();
  });
});
