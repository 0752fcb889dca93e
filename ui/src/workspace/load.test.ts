import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../api/client';
import * as L from '../layout/engine';
import type { TerminalInfo } from '../api/protocol';
import { DocSaver } from './persist';
import { READ_RETRY_FIRST_MS, READ_RETRY_MAX_MS, type SavedState, readSavedState } from './load';
import type { WorkspaceDoc } from './doc';

const saved: SavedState = {
  ws: { workspace: { version: 2, workspaces: [], active: 'w1', panes: {} }, revision: 3 },
  terms: [{ id: 't1' } as TerminalInfo],
};

/** A read failing `failures` times (as a reload interrupting it does: a network error), then answering `saved`. */
function flaky(failures: number) {
  let calls = 0;
  const read = async () => {
    calls++;
    if (calls <= failures) throw new ApiError(0, 'network', "Porthole isn't answering: TypeError: Failed to fetch");
    return saved;
  };
  return { read, calls: () => calls };
}

describe('reading the saved state at start', () => {
  it('asks a failed read again until it answers, and yields what it answered, never an empty wall', async () => {
    const r = flaky(3);
    const waits: number[] = [];
    const failures: number[] = [];
    const got = await readSavedState(r.read, { wait: async (ms) => void waits.push(ms), onFailure: (_e, n) => failures.push(n) });
    expect(got).toBe(saved);
    expect(r.calls()).toBe(4);
    expect(failures).toEqual([1, 2, 3]);
    expect(waits).toEqual([READ_RETRY_FIRST_MS, READ_RETRY_FIRST_MS * 2, READ_RETRY_FIRST_MS * 4]);
  });

  it('reports each failure with its error before waiting, and backs off to the longest wait', async () => {
    const r = flaky(20);
    const seen: string[] = [];
    const waits: number[] = [];
    await readSavedState(r.read, {
      wait: async (ms) => void waits.push(ms),
      onFailure: (e) => seen.push((e as Error).message),
    });
    expect(seen).toHaveLength(20);
    expect(seen[0]).toContain("isn't answering");
    expect(Math.max(...waits)).toBe(READ_RETRY_MAX_MS);
    expect(waits.at(-1)).toBe(READ_RETRY_MAX_MS);
  });

  it('a read that answers at once is not retried and reports nothing', async () => {
    const r = flaky(0);
    const onFailure = vi.fn();
    expect(await readSavedState(r.read, { wait: async () => {}, onFailure })).toBe(saved);
    expect(onFailure).not.toHaveBeenCalled();
  });
});

describe('saving before the saved wall was read', () => {
  afterEach(() => vi.unstubAllGlobals());

  /** What the store's wall is before the saved one was read. */
  const empty: WorkspaceDoc = { version: 2, workspaces: [{ id: 'w1', name: '1', layout: L.EMPTY_LAYOUT, order: [], focus: null }], active: 'w1', panes: {} };

  it('saves nothing, not even when the page goes away (keepalive), until armed', async () => {
    const put = vi.fn(async () => new Response('{"revision":1}', { status: 200, headers: { 'content-type': 'application/json' } }));
    vi.stubGlobal('fetch', put);
    const saver = new DocSaver(() => empty);
    await saver.saveNow(true);
    await saver.saveNow(false);
    expect(put).not.toHaveBeenCalled();
    saver.arm();
    await saver.saveNow(true);
    expect(put).toHaveBeenCalledTimes(1);
  });
});
