// Session restore (DESIGN §14, protocol §4 `GET /api/workspace`): a wall of a terminal that
// went to /tmp and printed a marker, beside a browser pane on a real upstream; the sidecar is
// shut down and a new one started on the same state directory → the same layout comes back,
// the marker above the "restored" divider, a shell in /tmp, the browser pane at its URL. A
// truncated session file → a fresh wall and a banner naming where the file was moved. Two
// named workspaces come back with their terminals in their own cwds, the same one on screen.
// A screencast pane comes back with its tabs and its kept profile (its logins).
// Sidecars of their own: the test restarts them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Page, expect, test } from '@playwright/test';
import { type Sidecar, startSidecar } from '../sidecar';
import { Wall, openScreencast, servePages } from './fixtures';

let sidecars: Sidecar[] = [];
test.afterEach(async () => {
  // The last first: an earlier one that shares its temp folder removes it.
  for (const s of sidecars.reverse()) await s.stop();
  sidecars = [];
});

async function start(tmp?: string): Promise<Sidecar> {
  const s = await startSidecar({ name: 'restore', tmp });
  sidecars.push(s);
  return s;
}

async function open(page: Page, s: Sidecar): Promise<Wall> {
  const { url } = await s.call('POST', '/api/login-codes');
  await page.goto(new URL(url, s.url).toString());
  await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
  return new Wall(page);
}

test('after a restart the layout, the terminal (cwd and output above the divider) and the browser pane come back', async ({ page }) => {
  test.setTimeout(120_000);
  const site = await servePages({ '/page': '<!doctype html><title>restored page</title><h1 id=h>upstream-page-42</h1>' });
  try {
    const s1 = await start();
    let wall = await open(page, s1);
    await wall.waitOpen(1);
    const [term] = await wall.paneIds();
    await wall.click(term);
    await wall.type('cd /tmp\n');
    await wall.type('echo RESTORE-MARK-$((6*7))\n');
    await wall.waitText(term, /^RESTORE-MARK-42$/m);
    const url = `${site.origin}/page`;
    const browser = await wall.openBrowserWithPrefix();
    const input = wall.pane(browser).getByTestId('browser-url-input');
    await input.fill(url);
    await input.press('Enter');
    await expect(page.frameLocator(`[data-pane-id="${browser}"] iframe[data-testid=browser-frame]`).locator('#h')).toHaveText('upstream-page-42');
    const before = { term: await wall.rect(term), browser: await wall.rect(browser) };
    expect(before.browser.x).toBeGreaterThan(before.term.x + before.term.width - 1); // split right
    // The UI has put the wall (debounced): the sidecar holds both panes.
    await expect
      .poll(async () => JSON.stringify((await s1.call('GET', '/api/workspace')).workspace ?? null), { timeout: 15_000 })
      .toContain(url);

    // Quit (the graceful path: POST /api/shutdown saves the session), start again on the same state.
    await s1.stop({ keep: true });
    expect(fs.readdirSync(s1.state)).toEqual(['session.json']); // written through a temp file, renamed
    const oldTerminal = JSON.parse(fs.readFileSync(path.join(s1.state, 'session.json'), 'utf8')).workspace.panes[term].terminalId;
    const s2 = await start(s1.tmp);
    wall = await open(page, s2);
    await wall.waitOpen(2);
    expect((await wall.paneIds()).sort()).toEqual([term, browser].sort());
    await expect(wall.pane(term)).toHaveAttribute('data-kind', 'terminal');
    await expect(wall.pane(browser)).toHaveAttribute('data-kind', 'browser');
    const after = { term: await wall.rect(term), browser: await wall.rect(browser) };
    expect(after).toEqual(before);

    // The saved output sits above the divider; the new shell starts in /tmp below it.
    await wall.waitText(term, /restored \d{4}-\d\d-\d\d \d\d:\d\d/);
    const text = await wall.text(term);
    const mark = text.search(/^RESTORE-MARK-42$/m);
    expect(mark).toBeGreaterThanOrEqual(0);
    expect(mark).toBeLessThan(text.indexOf('restored '));
    await wall.click(term);
    await wall.type('pwd\n');
    await expect.poll(async () => (await wall.text(term)).slice(text.indexOf('restored ')), { timeout: 10_000 }).toMatch(/^\/tmp$/m);
    // A new terminal, not the old one: its id is past the restored session's.
    const info = await s2.call('GET', '/api/terminals');
    expect(info.terminals.map((t: { id: string }) => t.id)).not.toContain(oldTerminal);

    // A reload of the page: the same terminal, its saved output still above the divider.
    await expect.poll(async () => JSON.stringify((await s2.call('GET', '/api/workspace')).workspace ?? null), { timeout: 15_000 }).toContain('restoredFrom');
    await page.reload();
    await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
    await wall.waitOpen(2);
    await wall.waitText(term, /restored \d{4}-/);
    const reloaded = await wall.text(term);
    expect(reloaded.search(/^RESTORE-MARK-42$/m)).toBeLessThan(reloaded.indexOf('restored '));
    expect(reloaded.slice(reloaded.indexOf('restored '))).toMatch(/^\/tmp$/m);

    // The browser pane is back at its URL, rendering the page.
    await expect(wall.pane(browser).getByTestId('browser-url')).toContainText(url.replace(/^http:\/\//, ''));
    await expect(page.frameLocator(`[data-pane-id="${browser}"] iframe[data-testid=browser-frame]`).locator('#h')).toHaveText('upstream-page-42');
  } finally {
    await site.close();
  }
});

test('a truncated session file: a fresh wall and a banner naming where it was moved', async ({ page }) => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'porthole-e2e-restore-'));
  const state = path.join(tmp, 'state/porthole');
  fs.mkdirSync(state, { recursive: true });
  const whole = JSON.stringify({ format: 1, saved_at: 1, workspace: { version: 1, panes: {} }, terminals: {} });
  fs.writeFileSync(path.join(state, 'session.json'), whole.slice(0, 30));
  const s = await start(tmp);
  const wall = await open(page, s);
  await wall.waitOpen(1);
  const banner = page.getByTestId('restore-banner');
  await expect(banner).toBeVisible();
  await expect(banner).toContainText(path.join(state, 'session.json.corrupt-'));
  await expect(banner).toContainText('fresh wall');
  const moved = fs.readdirSync(state).filter((n) => n.startsWith('session.json.corrupt-'));
  expect(moved).toHaveLength(1);
  expect(fs.readFileSync(path.join(state, moved[0]), 'utf8')).toBe(whole.slice(0, 30));
  // The wall works: a command runs in its terminal.
  const [term] = await wall.paneIds();
  await wall.click(term);
  await wall.type('echo fresh-$((1+1))\n');
  await wall.waitText(term, /^fresh-2$/m);
  await page.getByTestId('restore-banner-dismiss').click();
  await expect(banner).toHaveCount(0);
});

test('a screencast pane comes back as a screencast at its URL and viewport, in a new headless browser', async ({ page }) => {
  test.setTimeout(150_000);
  const site = await servePages({ '/sc': '<!doctype html><title>sc page</title><body style="background:#0a0"><h1>screencast-page</h1>' });
  try {
    const s1 = await start();
    let wall = await open(page, s1);
    await wall.waitOpen(1);
    const url = `${site.origin}/sc`;
    const { id, browser } = await openScreencast(wall, url);
    const doc = async (s: Sidecar) => (await s.call('GET', '/api/workspace')).workspace?.panes?.[id];
    const before = JSON.stringify((await doc(s1))?.viewport ?? null);
    await wall.pane(id).getByTestId('browser-display').click();
    await wall.pane(id).getByTestId('viewport-phone').click();
    const phone = { width: 390, height: 844, dpr: 3 };
    await expect.poll(async () => (await s1.call('GET', `/api/browsers/${browser}`)).viewport, { timeout: 15_000 }).toEqual(phone);
    await expect.poll(async () => JSON.stringify((await doc(s1))?.viewport ?? null), { timeout: 15_000 }).not.toBe(before);
    const saved = await doc(s1);
    expect(saved.mode).toBe('screencast');

    await s1.stop({ keep: true });
    const s2 = await start(s1.tmp);
    wall = await open(page, s2);
    await wall.waitOpen(2);
    const pane = wall.pane(id);
    await expect(pane).toHaveAttribute('data-mode', 'screencast');
    await expect(pane).toHaveAttribute('data-browser-id', /^b\d+$/, { timeout: 20_000 });
    await expect(pane.getByTestId('screencast-canvas')).not.toHaveAttribute('data-frame', '0', { timeout: 20_000 });
    const now = (await pane.getAttribute('data-browser-id'))!;
    const info = await s2.call('GET', `/api/browsers/${now}`);
    expect(info.url).toBe(url);
    expect(info.viewport).toEqual(phone);
    await expect.poll(async () => (await doc(s2))?.viewport, { timeout: 15_000 }).toEqual(saved.viewport);
  } finally {
    await site.close();
  }
});

test('a screencast pane comes back with its tabs and its logins (its kept profile; issue 22 item 5)', async ({ page }) => {
  test.setTimeout(150_000);
  // The first visit "logs in" (a persistent cookie) and opens a second tab; a visit that
  // finds the cookie opens nothing, so a restored browser with its profile stays at two tabs.
  const site = await servePages({
    '/sc': `<!doctype html><title>sc</title><body><h1>screencast-page</h1><script>
if (!document.cookie.includes('login=yes')) { document.cookie = 'login=yes; path=/; max-age=3600'; window.open('/second'); }
document.title = 'cookie:' + document.cookie;</script>`,
    '/second': '<!doctype html><title>second tab</title><body><h1>second</h1>',
  });
  try {
    const s1 = await start();
    let wall = await open(page, s1);
    await wall.waitOpen(1);
    const { id, browser } = await openScreencast(wall, `${site.origin}/sc`);
    const urls = (info: { tabs: { url: string }[] }) => info.tabs.map((t) => new URL(t.url).pathname).sort();
    await expect.poll(async () => urls(await s1.call('GET', `/api/browsers/${browser}`)), { timeout: 20_000 }).toEqual(['/sc', '/second']);
    const doc = async (s: Sidecar) => (await s.call('GET', '/api/workspace')).workspace?.panes?.[id];
    await expect.poll(async () => (await doc(s1))?.tabs?.length ?? 0, { timeout: 15_000 }).toBe(2);

    await s1.stop({ keep: true });
    const s2 = await start(s1.tmp);
    wall = await open(page, s2);
    await wall.waitOpen(2);
    const pane = wall.pane(id);
    await expect(pane).toHaveAttribute('data-browser-id', /^b\d+$/, { timeout: 20_000 });
    const now = (await pane.getAttribute('data-browser-id'))!;
    await expect.poll(async () => urls(await s2.call('GET', `/api/browsers/${now}`)), { timeout: 20_000 }).toEqual(['/sc', '/second']);
    const titles = async () => (await s2.call('GET', `/api/browsers/${now}`)).tabs.map((t: { title: string }) => t.title).sort();
    await expect.poll(titles, { timeout: 20_000 }).toEqual(['cookie:login=yes', 'second tab']);
  } finally {
    await site.close();
  }
});

test('two named workspaces come back after a restart, each with its terminal in its own cwd, the same one on screen', async ({ page }) => {
  test.setTimeout(120_000);
  const tabs = page.getByTestId('ws-tab');
  const rename = async (name: string) => {
    await page.keyboard.press('Control+b');
    await page.keyboard.press(',');
    const field = page.getByTestId('ws-rename');
    await expect(field).toBeFocused();
    await field.fill(name);
    await field.press('Enter');
  };
  const s1 = await start();
  let wall = await open(page, s1);
  await wall.waitOpen(1);
  const [first] = await wall.paneIds();
  await wall.click(first);
  await wall.type('cd /tmp\n');
  await rename('server');
  await wall.waitKeyboardFocus();
  await wall.prefix('c');
  await expect(tabs).toHaveCount(2);
  await wall.waitOpen(1);
  const second = (await wall.visiblePanes().evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.paneId!)))[0];
  await wall.type('cd /usr\n');
  await wall.type('echo SECOND-$((2*3))\n');
  await wall.waitText(second, /^SECOND-6$/m);
  await rename('tests');
  await expect
    .poll(async () => (await s1.call('GET', '/api/workspace')).workspace?.workspaces?.map((w: { name: string }) => w.name), { timeout: 15_000 })
    .toEqual(['server', 'tests']);

  await s1.stop({ keep: true });
  const s2 = await start(s1.tmp);
  wall = await open(page, s2);
  await expect(tabs).toHaveCount(2);
  await expect(tabs.nth(0).getByTestId('ws-name')).toHaveText('server');
  await expect(tabs.nth(1).getByTestId('ws-name')).toHaveText('tests');
  // The one on screen at the quit is on screen again, with its saved output.
  await expect(tabs.nth(1)).toHaveAttribute('data-active', 'true');
  await wall.waitOpen(1);
  await wall.waitText(second, /restored \d{4}-/);
  expect(await wall.text(second)).toMatch(/^SECOND-6$/m);
  // A hidden workspace costs no xterm view until shown (issue 27), yet its pane's new terminal
  // runs and its saved output is already in the pane's terminal buffer.
  await expect(wall.pane(first)).toHaveAttribute('data-visible', 'false');
  await expect(wall.pane(first)).toHaveAttribute('data-terminal-id', /^t\d+$/);
  await wall.waitText(first, /restored \d{4}-/);
  await expect(wall.pane(first).locator('.xterm')).toHaveCount(0);
  await expect(wall.pane(second).locator('.xterm')).toHaveCount(1);
  await wall.click(second);
  await wall.type('pwd\n');
  await expect.poll(async () => (await wall.text(second)).split('restored ').pop()).toMatch(/^\/usr$/m);
  // The other workspace's terminal came back in its own cwd.
  await tabs.nth(0).click();
  await expect(tabs.nth(0)).toHaveAttribute('data-active', 'true');
  await wall.waitOpen(1);
  await expect(wall.pane(first)).toHaveAttribute('data-visible', 'true');
  await expect(wall.pane(first).locator('.xterm')).toHaveCount(1);
  await wall.click(first);
  await wall.type('pwd\n');
  await expect.poll(async () => (await wall.text(first)).split('restored ').pop()).toMatch(/^\/tmp$/m);
});
