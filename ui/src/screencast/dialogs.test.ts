import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PageDialogs } from './dialogs';

describe('PageDialogs', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('an answer given before the unload call returned is the one used', async () => {
    const d = new PageDialogs();
    const before = d.answers;
    d.onDialog('beforeunload');
    d.answer(false);
    expect(await d.leaveAnswer(before)).toBe(false);
  });

  it('otherwise the next answer is awaited', async () => {
    const d = new PageDialogs();
    d.onDialog('beforeunload');
    const leave = d.leaveAnswer(d.answers);
    d.answer(true);
    expect(await leave).toBe(true);
  });

  it('answers to other dialogs do not count as beforeunload answers', () => {
    const d = new PageDialogs();
    d.onDialog('confirm');
    d.answer(true);
    expect(d.answers).toBe(0);
  });

  it('gone resolves at once with no dialog, when it goes, or at the bound', async () => {
    const d = new PageDialogs();
    let done = false;
    await d.gone(1000);

    d.onDialog('beforeunload');
    void d.gone(1000).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(10);
    expect(done).toBe(false);
    d.onDialog(null);
    await vi.advanceTimersByTimeAsync(0);
    expect(done).toBe(true);
    expect(vi.getTimerCount()).toBe(0);

    done = false;
    d.onDialog('alert');
    void d.gone(1000).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(done).toBe(true);
  });

  it('dispose releases waiters and clears the timers', async () => {
    const d = new PageDialogs();
    d.onDialog('alert');
    let done = false;
    void d.gone(1000).then(() => (done = true));
    d.dispose();
    await vi.advanceTimersByTimeAsync(0);
    expect(done).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});
