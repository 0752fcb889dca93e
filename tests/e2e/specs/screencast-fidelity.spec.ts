// Screencast fidelity through the UI (issue #11), with the app itself at devicePixelRatio 2
// (a HiDPI laptop): every click lands where it was aimed while crisp captures run, typing
// and a 100 KB paste arrive complete and in order, a crashed page says so and reloads.
// The screencast page reports its state in document.title, read through GET /api/browsers/{id}.
import * as fs from 'node:fs';
import { expect, pageTitle, pointOf, servePages, test, openScreencast, api } from './fixtures';

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>ready</title><style>
html, body { margin: 0; height: 100%; background: #fff; }
#t { position: absolute; left: 20px; top: 200px; width: 400px; height: 100px; }
</style></head><body><textarea id="t"></textarea><script>
  // clicks: where each landed (page CSS px); text: the textarea's length and FNV-1a.
  const clicks = [];
  const t = document.getElementById('t');
  const sum = (s) => { let h = 0x811c9dc5; for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 0x01000193) >>> 0; } return h.toString(16); };
  const report = () => { document.title = JSON.stringify({ clicks, text: t.value.length + ':' + sum(t.value) }); };
  addEventListener('click', (e) => { if (e.target === t) return; clicks.push([Math.round(e.clientX), Math.round(e.clientY)]); report(); });
  t.addEventListener('input', report);
  report();
</script></body></html>`;

/** FNV-1a over UTF-16 code units, as the page computes it: `<length>:<hex>`. */
function fnv(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return `${s.length}:${h.toString(16)}`;
}

interface State {
  clicks: [number, number][];
  text: string;
}
async function state(browser: string): Promise<State | null> {
  try {
    return JSON.parse(await pageTitle(browser)) as State;
  } catch {
    return null;
  }
}

/** Pids of `root`'s descendants running as Chromium renderers. */
function renderers(root: number): number[] {
  const parent = new Map<number, number>();
  for (const name of fs.readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      parent.set(pid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone */
    }
  }
  const under = (p: number) => {
    for (let i = 0; i < 64; i++) {
      const pp = parent.get(p);
      if (pp === root) return true;
      if (!pp || pp <= 1) return false;
      p = pp;
    }
    return false;
  };
  return [...parent.keys()].filter((p) => {
    if (!under(p)) return false;
    try {
      return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('--type=renderer');
    } catch {
      return false;
    }
  });
}

let site: Awaited<ReturnType<typeof servePages>>;
test.beforeAll(async () => {
  site = await servePages({ '/': PAGE });
});
test.afterAll(async () => site.close());

test.use({ deviceScaleFactor: 2 });

test.describe('screencast fidelity at devicePixelRatio 2', () => {
  test('every click lands where it was aimed, also while crisp captures run', async ({ wall, page }) => {
    test.setTimeout(120_000);
    const { id, browser } = await openScreencast(wall, `${site.origin}/`);
    expect((await api('GET', `/api/browsers/${browser}`)).viewport.dpr).toBe(2);
    const n = 16;
    for (let i = 0; i < n; i++) {
      const p = await pointOf(page, id, 300, 100);
      await page.mouse.click(p.x, p.y);
      // A crisp capture starts 250 ms after the last input: land the next click inside it.
      await page.waitForTimeout(250 + ((i * 37) % 160));
    }
    await expect.poll(async () => (await state(browser))?.clicks.length, { timeout: 30_000 }).toBe(n);
    const missed = (await state(browser))!.clicks.filter(([x, y]) => Math.abs(x - 300) > 1 || Math.abs(y - 100) > 1);
    expect(missed).toEqual([]);
  });

  test('typing at 500 characters a second and a 100 KB paste arrive complete and in order', async ({ wall, page }) => {
    test.setTimeout(180_000);
    const { id, browser } = await openScreencast(wall, `${site.origin}/`);
    const p = await pointOf(page, id, 100, 250);
    await page.mouse.click(p.x, p.y);
    const typed = 'The quick brown fox jumps over the lazy dog 0123456789. '.repeat(8);
    await page.keyboard.type(typed, { delay: 2 });
    const line = 'ünïcödé ✓ 𝄞 "quoted" \\ the lazy dog 0123456789\n';
    const paste = line.repeat(Math.ceil(100_000 / line.length));
    const input = page.locator(`[data-testid=pane][data-pane-id="${id}"] [data-testid=screencast-input]`);
    await input.evaluate((el, text) => {
      const dt = new DataTransfer();
      dt.setData('text/plain', text);
      el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
    }, paste);
    await page.keyboard.type('end', { delay: 2 });
    const want = fnv(typed + paste + 'end');
    await expect.poll(async () => (await state(browser))?.text, { timeout: 120_000 }).toBe(want);
  });

  test('a crashed page says so and Reload brings it back', async ({ wall, page }) => {
    test.setTimeout(90_000);
    const { id, browser } = await openScreencast(wall, `${site.origin}/`);
    const pane = wall.pane(id);
    await expect.poll(async () => (await state(browser)) !== null).toBe(true);
    const pid = (await api('GET', `/api/browsers/${browser}`)).pid as number;
    const victims = renderers(pid);
    expect(victims.length).toBeGreaterThan(0);
    for (const v of victims) process.kill(v, 'SIGKILL');
    await expect(pane.getByTestId('screencast-crashed')).toBeVisible({ timeout: 15_000 });
    await expect(pane.getByTestId('screencast-crashed')).toContainText('The page crashed');
    expect((await api('GET', `/api/browsers/${browser}`)).crashed).toBe(true);
    await pane.getByTestId('screencast-crashed-reload').click();
    await expect(pane.getByTestId('screencast-crashed')).toBeHidden({ timeout: 15_000 });
    await expect.poll(async () => (await state(browser)) !== null, { timeout: 15_000 }).toBe(true);
    const p = await pointOf(page, id, 300, 100);
    await page.mouse.click(p.x, p.y);
    await expect.poll(async () => (await state(browser))?.clicks).toEqual([[300, 100]]);
  });
});
