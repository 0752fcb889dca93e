// Loading state of a screencast pane (issue #11 items 5 and 6): a slow page shows a progress
// bar and its pending address marked as loading over the old page, until it commits; after
// "Stay" on a page's beforeunload the address field shows the page's own URL again.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { api, expect, openScreencast, pageTitle, pointOf, test } from './fixtures';

const page = (title: string, extra = '') =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body style="margin:0;height:100vh;background:#fff"><h1>${title}</h1>${extra}</body></html>`;
const ASKS = `<script>addEventListener('beforeunload', (e) => { e.preventDefault(); e.returnValue = ''; });
addEventListener('click', () => { document.title = 'asks, clicked'; });</script>`;

let server: http.Server;
let origin = '';
test.beforeAll(async () => {
  server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const send = (html: string) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(html);
    };
    if (path === '/slow') setTimeout(() => send(page('slow')), 5000);
    else if (path === '/asks') send(page('asks', ASKS));
    else send(page('first'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
test.afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

/** Types `url` into pane `id`'s address field and presses Enter. */
async function go(pane: ReturnType<import('./fixtures').Wall['pane']>, url: string) {
  await pane.getByTestId('browser-url').click();
  const input = pane.getByTestId('browser-url-input');
  await input.fill(url);
  await input.press('Enter');
}

test('a slow page shows a progress bar and its pending address over the old page until it commits', async ({ wall }) => {
  test.setTimeout(90_000);
  const { id, browser } = await openScreencast(wall, `${origin}/first`);
  const pane = wall.pane(id);
  await expect.poll(() => pageTitle(browser)).toBe('first');
  await expect(pane.getByTestId('browser-progress')).toBeHidden({ timeout: 15_000 });
  await go(pane, `${origin}/slow`);
  const url = pane.getByTestId('browser-url');
  // Loading: the bar and the pending address marked as such (the old page's frames stay).
  await expect(pane.getByTestId('browser-progress')).toBeVisible();
  await expect(url).toHaveText(/\/slow$/);
  await expect(url).toHaveAttribute('data-loading', 'true');
  await page2s(wall);
  await expect(pane.getByTestId('browser-progress')).toBeVisible();
  await expect(url).toHaveAttribute('data-loading', 'true');
  // Committed and loaded: the bar goes, the address is the page's.
  await expect.poll(() => pageTitle(browser), { timeout: 20_000 }).toBe('slow');
  await expect(pane.getByTestId('browser-progress')).toBeHidden({ timeout: 15_000 });
  await expect(url).toHaveAttribute('data-loading', 'false');
  await expect(url).toHaveText(/\/slow$/);
});

/** 2 s into a 5 s load: still loading (no timed assertion: only that nothing ended it early). */
async function page2s(wall: import('./fixtures').Wall) {
  await wall.page.waitForTimeout(2000);
}

test('after Stay on a beforeunload the address shows the page, not the refused target', async ({ wall, page }) => {
  test.setTimeout(90_000);
  const { id, browser } = await openScreencast(wall, `${origin}/asks`);
  const pane = wall.pane(id);
  await expect.poll(() => pageTitle(browser)).toBe('asks');
  // The gesture that arms beforeunload.
  const p = await pointOf(page, id, 300, 300);
  await page.mouse.click(p.x, p.y);
  await go(pane, `${origin}/first`);
  const dialog = pane.getByTestId('page-dialog');
  await expect(dialog).toHaveAttribute('data-kind', 'beforeunload', { timeout: 15_000 });
  await pane.getByTestId('page-dialog-cancel').click();
  await expect(dialog).toBeHidden();
  const url = pane.getByTestId('browser-url');
  await expect(url).toHaveText(/\/asks$/);
  await expect(url).toHaveAttribute('data-loading', 'false');
  await expect(pane.getByTestId('browser-progress')).toBeHidden();
  expect(await pageTitle(browser)).toMatch(/^asks/);
});

test('closing the pane runs the page’s beforeunload: Stay keeps it, Leave closes it (✕ and Ctrl-b x)', async ({ wall, page }) => {
  test.setTimeout(90_000);
  const { id, browser } = await openScreencast(wall, `${origin}/asks`);
  const pane = wall.pane(id);
  await expect.poll(() => pageTitle(browser)).toBe('asks');
  const p = await pointOf(page, id, 300, 300);
  // The close follows the gesture at once: the click may still be queued (behind a crisp
  // capture) when ✕ is pressed, and the close waits for it to land (it is what arms the page).
  await page.mouse.click(p.x, p.y);
  const dialog = pane.getByTestId('page-dialog');
  await pane.getByTestId('pane-close').click();
  await expect(dialog).toHaveAttribute('data-kind', 'beforeunload', { timeout: 15_000 });
  await pane.getByTestId('page-dialog-cancel').click();
  await expect(dialog).toBeHidden();
  // Stayed: the pane and its page are as they were.
  await expect(pane).toBeVisible();
  expect(await pageTitle(browser)).toMatch(/^asks/);
  // The prefix close asks again; Leave closes the pane and its browser.
  await page.mouse.click(p.x, p.y);
  await page.keyboard.press('Control+b');
  await page.keyboard.press('x');
  await expect(dialog).toHaveAttribute('data-kind', 'beforeunload', { timeout: 15_000 });
  await pane.getByTestId('page-dialog-ok').click();
  await expect(pane).toHaveCount(0, { timeout: 15_000 });
  await expect.poll(async () => (await fetchStatus(`/api/browsers/${browser}`)), { timeout: 15_000 }).toBe(404);
});

async function fetchStatus(path: string): Promise<number> {
  try {
    await api('GET', path);
    return 200;
  } catch (e) {
    return /404/.test(String(e)) ? 404 : 500;
  }
}
