import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../api/client';
import type { BrowserInfo } from '../api/protocol';
import { BrowserLifecycle, type LifecycleApi, PROFILE_RETRIES, PROFILE_RETRY_MS } from './lifecycle';
import { PANE_VIEWPORT } from './viewport';

/** A fake sidecar: records calls; each create answers from `createAnswers` (then `b<n>`). */
class FakeApi implements LifecycleApi {
  creates: { url: string; more: unknown }[] = [];
  deletes: string[] = [];
  gets: string[] = [];
  known = new Set<string>();
  createAnswers: (() => Promise<string>)[] = [];
  private n = 0;
  createBrowser = (url: string, _vp: unknown, more: unknown = {}) => {
    this.creates.push({ url, more });
    const next = this.createAnswers.shift();
    if (next) return next();
    const id = `b${++this.n}`;
    this.known.add(id);
    return Promise.resolve(id);
  };
  getBrowser = (id: string) => {
    this.gets.push(id);
    return this.known.has(id) ? Promise.resolve({ id } as unknown as BrowserInfo) : Promise.reject(new ApiError(404, 'not_found', 'no such browser'));
  };
  deleteBrowser = (id: string) => {
    this.deletes.push(id);
    this.known.delete(id);
    return Promise.resolve();
  };
}

function setup(opts: { browserId?: string | null; restoreTabs?: { tabs: string[]; active: number }; remoteLink?: () => Promise<string> } = {}) {
  const calls = new FakeApi();
  const ids: (string | null)[] = [];
  const createFailed: unknown[] = [];
  const callFailed: unknown[] = [];
  const lc = new BrowserLifecycle(
    'p7',
    { browserId: opts.browserId ?? null, restoreTabs: opts.restoreTabs ?? null, remoteLink: opts.remoteLink ?? null },
    () => ({ url: 'https://example.com/', viewport: PANE_VIEWPORT }),
    { onBrowserId: (id) => ids.push(id), onCreateFailed: (e) => createFailed.push(e), onCallFailed: (e) => callFailed.push(e) },
    calls,
  );
  return { calls, lc, ids, createFailed, callFailed };
}

describe('BrowserLifecycle', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('creates the browser once on the pane profile, however many ask at once', async () => {
    const { calls, lc, ids } = setup();
    const [a, b] = await Promise.all([lc.ensure(), lc.ensure()]);
    expect(a).toBe('b1');
    expect(b).toBe('b1');
    expect(calls.creates).toEqual([{ url: 'https://example.com/', more: { profile: 'p7' } }]);
    expect(ids).toEqual(['b1']);
    expect(lc.busy).toBe(false);
  });

  it("a remote pane's browser is created on its link, with no kept profile", async () => {
    const { calls, lc } = setup({ remoteLink: () => Promise.resolve('r3') });
    expect(await lc.ensure()).toBe('b1');
    expect(calls.creates).toEqual([{ url: 'https://example.com/', more: { remote: 'r3' } }]);
  });

  it('keeps a persisted browser the sidecar still knows, and replaces one it does not', async () => {
    const kept = setup({ browserId: 'b9' });
    kept.calls.known.add('b9');
    expect(await kept.lc.ensure()).toBe('b9');
    expect(kept.calls.creates).toEqual([]);

    const gone = setup({ browserId: 'b9' });
    expect(await gone.lc.ensure()).toBe('b1');
    expect(gone.calls.gets).toEqual(['b9']);
    expect(gone.ids).toEqual(['b1']);
  });

  it('opens restored tabs with the creation, then never again', async () => {
    const { calls, lc } = setup({ restoreTabs: { tabs: ['https://a.test/', 'https://b.test/'], active: 1 } });
    await lc.ensure();
    lc.forget();
    await lc.ensure();
    expect(calls.creates).toEqual([
      { url: 'https://a.test/', more: { profile: 'p7', tabs: ['https://b.test/'], active: 1 } },
      { url: 'https://example.com/', more: { profile: 'p7' } },
    ]);
  });

  it('asks again while the profile is in use, then gives up and reports', async () => {
    const { calls, lc, createFailed } = setup();
    const busy = () => Promise.reject(new ApiError(409, 'profile_in_use', 'in use'));
    calls.createAnswers = Array.from({ length: PROFILE_RETRIES + 1 }, () => busy);
    const got = lc.ensure();
    for (let i = 0; i < PROFILE_RETRIES; i++) await vi.advanceTimersByTimeAsync(PROFILE_RETRY_MS);
    expect(await got).toBeNull();
    expect(calls.creates.length).toBe(PROFILE_RETRIES + 1);
    expect((createFailed[0] as ApiError).code).toBe('profile_in_use');
  });

  it('a profile in use that frees up in time yields the browser', async () => {
    const { calls, lc, createFailed } = setup();
    calls.createAnswers = [() => Promise.reject(new ApiError(409, 'profile_in_use', 'in use'))];
    const got = lc.ensure();
    await vi.advanceTimersByTimeAsync(PROFILE_RETRY_MS);
    expect(await got).toBe('b1');
    expect(createFailed).toEqual([]);
  });

  it('another failure is reported at once, without a retry', async () => {
    const { calls, lc, createFailed } = setup();
    calls.createAnswers = [() => Promise.reject(new ApiError(502, 'launch_failed', 'no chromium'))];
    expect(await lc.ensure()).toBeNull();
    expect(calls.creates.length).toBe(1);
    expect(createFailed.length).toBe(1);
  });

  it('run reports a failed call and never throws', async () => {
    const { lc, callFailed } = setup();
    await lc.run(() => Promise.reject(new ApiError(500, 'internal', 'boom')));
    expect((callFailed[0] as ApiError).code).toBe('internal');
  });

  it('dispose deletes the browser once; a create in flight deletes its own browser', async () => {
    const made = setup();
    await made.lc.ensure();
    made.lc.dispose();
    made.lc.dispose();
    expect(made.calls.deletes).toEqual(['b1']);

    const inFlight = setup();
    let answer!: (id: string) => void;
    inFlight.calls.createAnswers = [() => new Promise<string>((res) => (answer = res))];
    const got = inFlight.lc.ensure();
    inFlight.lc.dispose();
    answer('b5');
    expect(await got).toBeNull();
    expect(inFlight.calls.deletes).toEqual(['b5']);
    expect(inFlight.ids).toEqual([]);
  });

  it('runs nothing once disposed', async () => {
    const { lc, calls } = setup();
    lc.dispose();
    let ran = false;
    await lc.run(async () => {
      ran = true;
    });
    expect(ran).toBe(false);
    expect(calls.creates).toEqual([]);
  });
});
