import { describe, expect, it } from 'vitest';
import type { Download } from '../api/protocol';
import { DOWNLOAD_FADE_AFTER_MS as T, fadePlan, newFadeClock } from './downloadFade';

const dl = (id: string, state: Download['state']): Download => ({ id, name: `${id}.txt`, url: 'http://x/', received: 1, total: 1, state, path: null, error: null });

describe('download fade', () => {
  it('a finished row fades after the delay counted from when it finished; running and failed rows stay', () => {
    const c = newFadeClock();
    expect(fadePlan(c, [dl('a', 'in_progress')], false, 0)).toEqual({ fade: [], nextAt: null });
    expect(fadePlan(c, [dl('a', 'completed'), dl('b', 'failed')], false, 1000)).toEqual({ fade: [], nextAt: 1000 + T });
    expect(fadePlan(c, [dl('a', 'completed'), dl('b', 'failed')], false, 1000 + T - 1).fade).toEqual([]);
    expect(fadePlan(c, [dl('a', 'completed'), dl('b', 'failed')], false, 1000 + T)).toEqual({ fade: ['a'], nextAt: null });
  });

  it('a hovered shelf holds every row and the countdown starts again when the pointer leaves', () => {
    const c = newFadeClock();
    fadePlan(c, [dl('a', 'canceled')], false, 0);
    expect(fadePlan(c, [dl('a', 'canceled')], true, T + 5)).toEqual({ fade: [], nextAt: null });
    expect(fadePlan(c, [dl('a', 'canceled')], false, T + 10)).toEqual({ fade: [], nextAt: 2 * T + 5 });
    expect(fadePlan(c, [dl('a', 'canceled')], false, 2 * T + 5).fade).toEqual(['a']);
  });

  it('a pinned row stays, and a row gone from the list is forgotten', () => {
    const c = newFadeClock();
    fadePlan(c, [dl('a', 'completed'), dl('b', 'completed')], false, 0);
    c.pinned.add('a');
    expect(fadePlan(c, [dl('a', 'completed'), dl('b', 'completed')], false, T)).toEqual({ fade: ['b'], nextAt: null });
    fadePlan(c, [dl('a', 'completed')], false, T + 1);
    expect([...c.since.keys()]).toEqual([]);
  });
});
