// The desktop shell's bundled start page (`src-tauri/static/starting.js`, not part of the UI
// build) run against a fake shell: its `startup_status` answers are scripted and its timers
// are run one by one, so no test here waits on a clock.
import { describe, expect, it } from 'vitest';
import source from '../../src-tauri/static/starting.js?raw';

interface FakeElement {
  hidden: boolean;
  textContent: string;
}

/** What the shell's ACL answered a call made while the window was navigating to the sidecar (issue 22, item 1). */
const ACL_REFUSAL = 'startup_status not allowed. Plugin not found';

type Answer = { state: 'starting' } | { state: 'ready' } | { state: 'failed'; reason: string; hint: string; stderr_tail: string } | { reject: string };

/** The start page over a shell answering `answers` in turn (the last one again once they run out). */
function startPage(answers: Answer[]) {
  const ids = ['starting', 'failed', 'reason', 'hint', 'stderr', 'waiting'];
  const els: Record<string, FakeElement> = {};
  for (const id of ids) els[id] = { hidden: id !== 'starting', textContent: '' };
  const timers: Array<() => void> = [];
  let calls = 0;
  const invoke = (cmd: string): Promise<unknown> => {
    if (cmd !== 'startup_status') return Promise.reject(`unexpected command ${cmd}`);
    const a = answers[Math.min(calls, answers.length - 1)];
    calls++;
    return 'reject' in a ? Promise.reject(a.reject) : Promise.resolve(a);
  };
  const window = { __TAURI__: { core: { invoke } } };
  const document = { getElementById: (id: string) => els[id] };
  new Function('window', 'document', 'setTimeout', source)(window, document, (f: () => void) => timers.push(f));
  const settle = () => new Promise((r) => setTimeout(r, 0));
  return {
    els,
    get calls() {
      return calls;
    },
    /** Lets the pending answer land, then runs the page's next timer (false when it set none: it stopped polling). */
    async next(): Promise<boolean> {
      await settle();
      const t = timers.shift();
      if (!t) return false;
      t();
      await settle();
      return true;
    },
  };
}

describe('the desktop start page', () => {
  it('asks again after a call the shell refuses while it navigates, and never shows a failure for it', async () => {
    const page = startPage([{ state: 'starting' }, { reject: ACL_REFUSAL }, { reject: ACL_REFUSAL }, { reject: ACL_REFUSAL }, { state: 'ready' }]);
    for (let i = 0; i < 6; i++) {
      expect(await page.next()).toBe(true);
      expect(page.els.failed.hidden).toBe(true);
      expect(page.els.starting.hidden).toBe(false);
    }
    expect(page.calls).toBeGreaterThanOrEqual(5);
  });

  it('shows a failure the shell reports, with its reason, hint and stderr', async () => {
    const failed = { state: 'failed' as const, reason: 'porthole-sidecar exited', hint: 'see its output', stderr_tail: 'boom' };
    const page = startPage([{ reject: ACL_REFUSAL }, { state: 'starting' }, failed]);
    while (await page.next());
    expect(page.els.failed.hidden).toBe(false);
    expect(page.els.starting.hidden).toBe(true);
    expect(page.els.reason.textContent).toBe('porthole-sidecar exited');
    expect(page.els.hint.textContent).toBe('see its output');
    expect(page.els.stderr.textContent).toBe('boom');
    expect(page.els.stderr.hidden).toBe(false);
  });

  it('says it is still waiting after many refusals in a row, keeps asking, and clears the note on an answer', async () => {
    const refusals: Answer[] = Array.from({ length: 131 }, () => ({ reject: ACL_REFUSAL }));
    const page = startPage([...refusals, { state: 'starting' }]);
    // Each step lets an answer land and makes the next call, whose answer lands in the step after.
    for (let i = 0; i < 130; i++) expect(await page.next()).toBe(true);
    expect(page.els.waiting.hidden).toBe(false);
    expect(page.els.waiting.textContent).toContain(ACL_REFUSAL);
    expect(page.els.failed.hidden).toBe(true);
    expect(await page.next()).toBe(true);
    expect(page.els.waiting.hidden).toBe(true);
  });
});
