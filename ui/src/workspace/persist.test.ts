import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { WorkspaceDoc } from './doc';
import { DocSaver, SAVE_DEBOUNCE_MS } from './persist';

/** A saver over a document the test changes, recording what was put. */
function setup(fail = false) {
  let doc = { n: 0 } as unknown as WorkspaceDoc;
  const puts: { doc: unknown; keepalive: boolean }[] = [];
  let failing = fail;
  const saver = new DocSaver(
    () => doc,
    (d, keepalive) => {
      puts.push({ doc: d, keepalive });
      return failing ? Promise.reject(new Error('down')) : Promise.resolve();
    },
  );
  return {
    saver,
    puts,
    change: (n: number) => (doc = { n } as unknown as WorkspaceDoc),
    recover: () => (failing = false),
  };
}

describe('DocSaver', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('saves nothing before arm (the wall in memory is not the saved one yet)', async () => {
    const { saver, puts } = setup();
    saver.schedule();
    await saver.saveNow();
    await vi.advanceTimersByTimeAsync(SAVE_DEBOUNCE_MS * 2);
    expect(puts).toEqual([]);
  });

  it('a burst of changes is saved once, after the wall stayed unchanged', async () => {
    const { saver, puts, change } = setup();
    saver.arm();
    for (let i = 1; i <= 5; i++) {
      change(i);
      saver.schedule();
      await vi.advanceTimersByTimeAsync(SAVE_DEBOUNCE_MS - 1);
    }
    expect(puts).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(puts).toEqual([{ doc: { n: 5 }, keepalive: false }]);
  });

  it('the same text is never saved twice in a row', async () => {
    const { saver, puts, change } = setup();
    saver.arm();
    change(1);
    await saver.saveNow();
    await saver.saveNow();
    saver.schedule();
    await vi.advanceTimersByTimeAsync(SAVE_DEBOUNCE_MS);
    expect(puts.length).toBe(1);
  });

  it('a failed save is tried again on the next change, even with the same text', async () => {
    const { saver, puts, change, recover } = setup(true);
    saver.arm();
    change(1);
    await saver.saveNow();
    recover();
    await saver.saveNow();
    expect(puts.map((p) => p.doc)).toEqual([{ n: 1 }, { n: 1 }]);
  });

  it('saveNow passes keepalive for a page going away', async () => {
    const { saver, puts, change } = setup();
    saver.arm();
    change(2);
    await saver.saveNow(true);
    expect(puts).toEqual([{ doc: { n: 2 }, keepalive: true }]);
  });
});
