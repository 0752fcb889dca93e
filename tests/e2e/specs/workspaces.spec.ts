// Workspaces (issue 14 item 5, DESIGN §14): several walls in a strip, like tmux windows.
// Switching hides and shows panes without moving their elements: an embedded page in a
// hidden workspace is not loaded again (a real upstream started here counts its requests),
// a terminal keeps its screen. Create, switch (prefix and click), rename, move a pane
// across (the menu, and Ctrl-b ! from inside a framed page), close a workspace whose
// terminal is busy (it asks), the attention badge and prefix a, ph split from a pane of a
// hidden workspace, a hidden screencast parking, and the document (version 2, and a
// version-1 one) surviving a reload.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Frame, Page } from '@playwright/test';
import { type Wall, api, expect, openScreencast, servePages, test } from './fixtures';

/** A loopback page whose every request of `/` is counted; the page shows its own count. */
async function countingServer(): Promise<{ url: string; loads: () => number; close: () => Promise<void> }> {
  let loads = 0;
  const server = http.createServer((req, res) => {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/') {
      res.writeHead(404).end();
      return;
    }
    loads += 1;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(`<!doctype html><title>Counter</title><h1 id="n">load ${loads}</h1>`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    loads: () => loads,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

const tabs = (page: Page) => page.getByTestId('ws-tab');
const tab = (page: Page, n: number) => tabs(page).nth(n - 1);

/** Waits until workspace number `n` (1-based) is the one on screen. */
async function onWorkspace(page: Page, n: number) {
  await expect(tab(page, n)).toHaveAttribute('data-active', 'true');
}

async function frameObject(page: Page, paneId: string): Promise<Frame> {
  const handle = await page.locator(`[data-testid=pane][data-pane-id="${paneId}"] iframe[data-testid=browser-frame]`).elementHandle();
  return (await handle!.contentFrame())!;
}

/** The ids of the panes on screen. */
async function shown(wall: Wall): Promise<string[]> {
  return wall.visiblePanes().evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.paneId!));
}

test.describe('workspaces', () => {
  test('create, switch by prefix and by click, rename; an iframe in a hidden workspace is not reloaded and a terminal keeps its screen', async ({ wall, page }) => {
    test.setTimeout(120_000);
    const site = await countingServer();
    try {
      const [term] = await wall.paneIds();
      await wall.click(term);
      await wall.type('echo KEEP-$((6*7))\n');
      await wall.waitText(term, /^KEEP-42$/m);
      const terminalId = await wall.pane(term).getAttribute('data-terminal-id');
      await expect(tabs(page)).toHaveCount(1);

      // An embedded page beside it, with a mark in its window that only the same document keeps.
      const web = await wall.openBrowserWithPrefix();
      const input = wall.pane(web).getByTestId('browser-url-input');
      await input.fill(site.url);
      await input.press('Enter');
      const frame = page.frameLocator(`[data-testid=pane][data-pane-id="${web}"] iframe[data-testid=browser-frame]`);
      await expect(frame.locator('#n')).toHaveText('load 1', { timeout: 20_000 });
      await (await frameObject(page, web)).evaluate(() => ((window as any).__kept = 'same document'));
      const frameEl = await page.locator(`[data-pane-id="${web}"] iframe`).elementHandle();
      expect(site.loads()).toBe(1);

      // Ctrl-b c: a second workspace with its own terminal, shown at once; the first's panes hide.
      await wall.click(term);
      await wall.prefix('c');
      await expect(tabs(page)).toHaveCount(2);
      await onWorkspace(page, 2);
      await wall.waitOpen(1);
      const [second] = await shown(wall);
      expect([term, web]).not.toContain(second);
      await expect(wall.pane(term)).toHaveAttribute('data-visible', 'false');
      await expect(wall.pane(web)).toHaveAttribute('data-visible', 'false');
      await wall.type('echo SECOND-$((1+1))\n');
      await wall.waitText(second, /^SECOND-2$/m);

      // Ctrl-b p: back to the first, with its focus, its page not loaded again, its screen as it was.
      await wall.prefix('p');
      await onWorkspace(page, 1);
      expect((await shown(wall)).sort()).toEqual([term, web].sort());
      await expect(wall.pane(term)).toHaveAttribute('data-focused', 'true');
      await expect(frame.locator('#n')).toHaveText('load 1');
      expect(await (await frameObject(page, web)).evaluate(() => (window as any).__kept)).toBe('same document');
      expect(await frameEl!.evaluate((el) => el.isConnected)).toBe(true);
      expect(site.loads()).toBe(1);
      expect(await wall.text(term)).toMatch(/^KEEP-42$/m);
      await expect(wall.pane(term)).toHaveAttribute('data-terminal-id', terminalId!);
      // Its terminal still answers.
      await wall.type('echo AFTER-$((2+3))\n');
      await wall.waitText(term, /^AFTER-5$/m);

      // By number, next/previous wrapping, and by clicking a tab.
      await wall.prefix('2');
      await onWorkspace(page, 2);
      await expect(wall.pane(second)).toHaveAttribute('data-focused', 'true');
      await wall.prefix('n');
      await onWorkspace(page, 1);
      await wall.prefix('n');
      await onWorkspace(page, 2);
      await tab(page, 1).click();
      await onWorkspace(page, 1);
      await wall.waitKeyboardFocus();
      expect(site.loads()).toBe(1);

      // Ctrl-b , renames the one on screen; a double-click renames another; Escape keeps the name.
      await page.keyboard.press('Control+b');
      await page.keyboard.press(',');
      const field = page.getByTestId('ws-rename');
      await expect(field).toBeFocused();
      await field.fill('build');
      await field.press('Enter');
      await expect(tab(page, 1).getByTestId('ws-name')).toHaveText('build');
      await wall.waitKeyboardFocus();
      await tab(page, 2).dblclick();
      await expect(field).toBeFocused();
      await field.fill('logs');
      await field.press('Enter');
      await expect(tab(page, 2).getByTestId('ws-name')).toHaveText('logs');
      await tab(page, 2).dblclick();
      await field.fill('not kept');
      await field.press('Escape');
      await expect(tab(page, 2).getByTestId('ws-name')).toHaveText('logs');

      // The document (version 2) keeps both walls, names and the one on screen across a reload.
      await expect.poll(async () => (await api('GET', '/api/workspace')).workspace?.workspaces?.map((w: any) => w.name)).toEqual(['build', 'logs']);
      const doc = (await api('GET', '/api/workspace')).workspace;
      expect(doc.version).toBe(2);
      expect(doc.workspaces.map((w: any) => w.order)).toEqual([[term, web], [second]]);
      await page.reload();
      await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
      await expect(tabs(page).getByTestId('ws-name')).toHaveText(['build', 'logs']);
      await onWorkspace(page, 2);
      expect(await shown(wall)).toEqual([second]);
      await wall.prefix('1');
      expect((await shown(wall)).sort()).toEqual([term, web].sort());
      await wall.waitText(term, /^AFTER-5$/m);

      // Ctrl-b ! from inside the framed page (its shim forwards the keys): the browser pane
      // moves to a new workspace, still the same document; the one on screen keeps the terminal.
      await expect(frame.locator('#n')).toHaveText('load 2', { timeout: 20_000 });
      const loads = site.loads();
      await frame.locator('#n').click();
      await expect(wall.pane(web)).toHaveAttribute('data-focused', 'true');
      await (await frameObject(page, web)).evaluate(() => ((window as any).__kept = 'after reload'));
      await page.keyboard.press('Control+b');
      await page.keyboard.press('Shift+Digit1'); // !
      await expect(tabs(page)).toHaveCount(3);
      await onWorkspace(page, 1);
      expect(await shown(wall)).toEqual([term]);
      await tab(page, 3).click();
      expect(await shown(wall)).toEqual([web]);
      expect(await (await frameObject(page, web)).evaluate(() => (window as any).__kept)).toBe('after reload');
      expect(site.loads()).toBe(loads);
    } finally {
      await site.close();
    }
  });

  test('move a pane to a new workspace; closing a workspace whose terminal is busy asks first', async ({ wall, page }) => {
    const [first] = await wall.paneIds();
    await wall.click(first);
    await wall.prefix('Shift+Digit5'); // % split right
    await wall.waitOpen(2);
    const moved = await wall.focusedId();
    await wall.type('echo MOVED-$((3*3))\n');
    await wall.waitText(moved, /^MOVED-9$/m);
    const movedEl = await wall.pane(moved).elementHandle();

    // The context menu (opened low on the pane): Move to workspace ▸ New workspace, kept inside
    // the window when the list opens. The wall on screen stays.
    const body = (await wall.pane(moved).getByTestId('terminal-body').boundingBox())!;
    await wall.pane(moved).getByTestId('terminal-body').click({ button: 'right', position: { x: 20, y: body.height - 10 } });
    await expect(page.getByTestId('ports-section')).toHaveAttribute('data-state', 'ok');
    await page.getByTestId('menu-move').click();
    const menu = (await page.getByTestId('context-menu').boundingBox())!;
    expect(menu.y + menu.height).toBeLessThanOrEqual(page.viewportSize()!.height);
    await page.getByTestId('menu-move-new').click();
    await expect(tabs(page)).toHaveCount(2);
    await onWorkspace(page, 1);
    expect(await shown(wall)).toEqual([first]);
    await tab(page, 2).click();
    await onWorkspace(page, 2);
    expect(await shown(wall)).toEqual([moved]);
    expect(await movedEl!.evaluate((el) => el.isConnected)).toBe(true);
    expect(await wall.text(moved)).toMatch(/^MOVED-9$/m);

    // Back into workspace 1 from the menu (beside its pane), then out again to close it there.
    await wall.pane(moved).getByTestId('terminal-body').click({ button: 'right' });
    await page.getByTestId('menu-move').click();
    await page.getByTestId('menu-move-w1').click();
    // The workspace it left is empty: it closes, and the pane's new one is shown.
    await expect(tabs(page)).toHaveCount(1);
    expect((await shown(wall)).sort()).toEqual([first, moved].sort());
    await wall.click(moved);
    await wall.pane(moved).getByTestId('terminal-body').click({ button: 'right' });
    await page.getByTestId('menu-move').click();
    await page.getByTestId('menu-move-new').click();
    await tab(page, 2).click();
    await wall.waitOpen(1);

    // A busy terminal in it: Ctrl-b & asks; Cancel keeps everything.
    const terminal = (await wall.pane(moved).getAttribute('data-terminal-id'))!;
    await wall.click(moved);
    await wall.type('sleep 600\n');
    await expect.poll(async () => (await api('GET', `/api/terminals/${terminal}`)).busy).toBe(true);
    await page.keyboard.press('Control+b');
    await page.keyboard.press('Shift+Digit7'); // &
    const ask = page.getByTestId('close-confirm');
    await expect(ask).toBeVisible();
    await expect(ask).toHaveAttribute('aria-label', 'Close this workspace?');
    await expect(ask.getByTestId('close-confirm-reasons').locator('li')).toHaveText([/sleep is running in this pane/]);
    await expect(ask.getByTestId('close-confirm-cancel')).toBeFocused();
    await page.keyboard.press('Escape');
    await expect(ask).toHaveCount(0);
    await expect(tabs(page)).toHaveCount(2);
    await onWorkspace(page, 2);

    // Again, and Close and stop: the workspace and its terminal are gone; the other one shows.
    await page.keyboard.press('Control+b');
    await page.keyboard.press('Shift+Digit7');
    await ask.getByTestId('close-confirm-ok').click();
    await expect(tabs(page)).toHaveCount(1);
    await onWorkspace(page, 1);
    expect(await shown(wall)).toEqual([first]);
    await expect(wall.pane(moved)).toHaveCount(0);
    await expect.poll(() => api('GET', `/api/terminals/${terminal}`).then(() => 200, () => 404)).toBe(404);

    // A workspace whose terminal is idle closes without asking.
    await wall.prefix('c');
    await expect(tabs(page)).toHaveCount(2);
    await wall.waitOpen(1);
    await page.keyboard.press('Control+b');
    await page.keyboard.press('Shift+Digit7');
    await expect(tabs(page)).toHaveCount(1);
    await expect(page.getByTestId('close-confirm')).toHaveCount(0);
    expect(await shown(wall)).toEqual([first]);
  });

  test('a browser pane has a menu too (its header, or the prefix key): moved into another workspace without reloading', async ({ wall, page }) => {
    const counter = await countingServer();
    try {
      await wall.prefix('c'); // a second workspace, then back to the first
      await expect(tabs(page)).toHaveCount(2);
      await tab(page, 1).click();
      await onWorkspace(page, 1);
      const [term] = await wall.paneIds();
      await wall.click(term);
      await wall.type('echo touched\n');
      const id = await wall.openBrowserWithPrefix();
      const input = page.locator('[data-testid=pane][data-focused=true] [data-testid=browser-url-input]');
      await input.fill(counter.url);
      await input.press('Enter');
      const frame = page.frameLocator(`[data-testid=pane][data-pane-id="${id}"] iframe[data-testid=browser-frame]`);
      await expect(frame.locator('#n')).toHaveText('load 1');

      // The prefix key opens the browser pane's menu: no ports, no terminal items. Escape closes it.
      await page.keyboard.press('Control+b');
      await page.keyboard.press('Shift+Period'); // >
      const menu = page.getByTestId('context-menu');
      await expect(menu).toBeVisible();
      await expect(page.getByTestId('ports-section')).toHaveCount(0);
      await expect(page.getByTestId('menu-copy')).toHaveCount(0);
      await expect(page.getByTestId('menu-split-right')).toBeVisible();
      await page.keyboard.press('Escape');
      await expect(menu).toHaveCount(0);

      // The header's right click: Move to workspace ▸ 2.
      await wall.pane(id).getByTestId('pane-header').click({ button: 'right', position: { x: 4, y: 4 } });
      await expect(menu).toBeVisible();
      await page.getByTestId('menu-move').click();
      await page.locator('[data-testid^=menu-move-w]').first().click();
      await onWorkspace(page, 1);
      expect(await shown(wall)).toEqual([term]);
      await tab(page, 2).click();
      await onWorkspace(page, 2);
      expect(await shown(wall)).toContain(id);
      await expect(frame.locator('#n')).toHaveText('load 1');
      expect(counter.loads()).toBe(1);
    } finally {
      await counter.close();
    }
  });

  test('a bell in a hidden workspace badges its tab; prefix a goes there; ph split from it opens there', async ({ wall, page }) => {
    const [first] = await wall.paneIds();
    await wall.click(first);
    const handle = (await wall.pane(first).getAttribute('data-handle'))!;
    // Rings and splits a few seconds later, when another workspace is on screen.
    await wall.type("sleep 2; printf '\\a'; ph split -- bash; echo SPLIT-DONE\n");
    await wall.prefix('c');
    await onWorkspace(page, 2);
    const [second] = await shown(wall);
    await expect(tab(page, 1).getByTestId('ws-attention')).toBeVisible({ timeout: 15_000 });
    await expect(tab(page, 2).getByTestId('ws-attention')).toHaveCount(0);
    await wall.waitText(first, /^SPLIT-DONE$/m, 20_000);
    // The new pane went to the caller's workspace: this one still shows only its own.
    await expect(wall.panes()).toHaveCount(3);
    expect(await shown(wall)).toEqual([second]);
    await expect(wall.pane(second)).toHaveAttribute('data-focused', 'true');

    await wall.prefix('a');
    await onWorkspace(page, 1);
    await expect(wall.pane(first)).toHaveAttribute('data-focused', 'true');
    await expect(tab(page, 1).getByTestId('ws-attention')).toHaveCount(0);
    const here = await shown(wall);
    expect(here).toHaveLength(2);
    expect(here).toContain(first);
    const split = here.find((id) => id !== first)!;
    await expect(wall.pane(split)).toHaveAttribute('data-kind', 'terminal');
    expect(handle).toMatch(/^t\d+$/);
  });
});

test('a screencast pane in a hidden workspace parks (its viewer socket closes) and comes back painting, its browser kept', async ({ wall, page }) => {
  const site = await servePages({ '/': '<!doctype html><title>Parked</title><h1 style="font:40px sans-serif">parked page</h1>' });
  try {
    const { id, browser } = await openScreencast(wall, `${site.origin}/`);
    const pane = wall.pane(id);
    await expect(pane.locator('.screencast-host')).toHaveAttribute('data-socket', 'open');
    await wall.prefix('c');
    await onWorkspace(page, 2);
    await expect(pane).toHaveAttribute('data-visible', 'false');
    await expect(pane.locator('.screencast-host')).toHaveAttribute('data-socket', 'parked', { timeout: 10_000 });
    expect((await api('GET', `/api/browsers/${browser}`)).connected).toBe(true);
    const painted = Number(await pane.getByTestId('screencast-canvas').getAttribute('data-painted'));
    await wall.prefix('p');
    await onWorkspace(page, 1);
    await expect(pane).toHaveAttribute('data-visible', 'true');
    await expect(pane).toHaveAttribute('data-browser-id', browser);
    await expect(pane.locator('.screencast-host')).toHaveAttribute('data-socket', 'open', { timeout: 10_000 });
    await expect.poll(async () => Number(await pane.getByTestId('screencast-canvas').getAttribute('data-painted')), { timeout: 15_000 }).toBeGreaterThan(painted);
  } finally {
    await site.close();
  }
});

test('a version-1 document (one wall, from before workspaces) loads as one workspace', async ({ wall, page }) => {
  const [first] = await wall.paneIds();
  await wall.click(first);
  await wall.type('echo OLD-$((5*5))\n');
  await wall.waitText(first, /^OLD-25$/m);
  const terminal = (await wall.pane(first).getAttribute('data-terminal-id'))!;
  const second = await api('POST', '/api/terminals', { cols: 80, rows: 24 });
  const layout = {
    root: { kind: 'split', dir: 'row', weights: [1, 1], children: [{ kind: 'leaf', id: 'p7' }, { kind: 'leaf', id: 'p9' }] },
    minimized: [],
    homes: {},
    zoomed: null,
    focused: 'p9',
  };
  const panes = { p7: { terminalId: terminal, title: '', command: null }, p9: { terminalId: second.id, title: '', command: null } };
  // The window leaves first: a page going away saves its wall (keepalive), which must not
  // land after the document written below.
  const app = page.url();
  await page.goto('about:blank');
  await api('PUT', '/api/workspace', { workspace: { version: 1, layout, order: ['p7', 'p9'], panes } });
  await page.goto(app);
  await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
  await wall.waitOpen(2);
  await expect(tabs(page)).toHaveCount(1);
  expect(await shown(wall)).toEqual(['p7', 'p9']);
  await expect(wall.pane('p9')).toHaveAttribute('data-focused', 'true');
  await wall.waitText('p7', /^OLD-25$/m);
  // Saved again as version 2.
  await expect.poll(async () => (await api('GET', '/api/workspace')).workspace?.version).toBe(2);
  expect((await api('GET', '/api/workspace')).workspace.workspaces).toMatchObject([{ order: ['p7', 'p9'], focus: 'p9' }]);
});

test.describe('workspaces at device pixel ratio 2', () => {
  test.use({ deviceScaleFactor: 2 });

  test('the strip fits the baseboard and works from the keyboard: create, switch back, a terminal keeps its screen and size', async ({ wall, page }) => {
    const [term] = await wall.paneIds();
    await wall.click(term);
    await wall.type('echo HIDPI-$((4*4))\n');
    await wall.waitText(term, /^HIDPI-16$/m);
    const before = await wall.size(term);
    await page.getByTestId('ws-new').click();
    await expect(tabs(page)).toHaveCount(2);
    await onWorkspace(page, 2);
    await wall.waitOpen(1);
    // Both tabs fit in the baseboard's row, side by side.
    const board = (await page.getByTestId('baseboard').boundingBox())!;
    const [a, b] = [(await tab(page, 1).boundingBox())!, (await tab(page, 2).boundingBox())!];
    for (const r of [a, b]) {
      expect(r.y).toBeGreaterThanOrEqual(board.y);
      expect(r.y + r.height).toBeLessThanOrEqual(board.y + board.height + 0.5);
      expect(r.height).toBeGreaterThan(10);
    }
    expect(b.x).toBeGreaterThanOrEqual(a.x + a.width);
    // From the keyboard: the arrows walk the strip, Enter shows the tab.
    await tab(page, 2).focus();
    await page.keyboard.press('ArrowRight');
    await expect(page.getByTestId('ws-new')).not.toBeFocused();
    await expect(tab(page, 1)).toBeFocused();
    await page.keyboard.press('ArrowLeft');
    await expect(tab(page, 2)).toBeFocused();
    await page.keyboard.press('ArrowLeft');
    await expect(tab(page, 1)).toBeFocused();
    await page.keyboard.press('Enter');
    await onWorkspace(page, 1);
    await wall.waitKeyboardFocus();
    expect(await wall.text(term)).toMatch(/^HIDPI-16$/m);
    expect(await wall.size(term)).toEqual(before);
    expect(await page.evaluate(() => devicePixelRatio)).toBe(2);
  });
});
