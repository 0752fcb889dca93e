// Pop-out end to end: a sidecar of its own on an Xvfb this spec starts (the shared one has
// no display), a python3 http.server in a terminal, Pop out from the context menu → the
// pane's stub; Pop back in (keyboard) → live screencast; the user closing the window →
// back to live screencast by itself. Xvfb missing fails with what to install.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { expect, test } from '@playwright/test';
import WebSocket from 'ws';
import { type Sidecar, startSidecar } from '../sidecar';
import { Wall, openScreencast, servePages } from './fixtures';

let s: Sidecar & { xvfb: ChildProcess; display: string };

/** `Xvfb -displayfd 3`: the server picks a free display and writes its number on fd 3. */
async function startXvfb(): Promise<{ xvfb: ChildProcess; display: string }> {
  const xvfb = spawn('Xvfb', ['-displayfd', '3', '-screen', '0', '1600x1000x24', '-nolisten', 'tcp'], { stdio: ['ignore', 'ignore', 'ignore', 'pipe'] });
  const display = await new Promise<string>((resolve, reject) => {
    xvfb.once('error', (e) => reject(new Error(`cannot run Xvfb (${e.message}): install it (Debian/Ubuntu: apt install xvfb, or cargo xtask deps)`)));
    readline.createInterface({ input: xvfb.stdio[3] as NodeJS.ReadableStream }).once('line', (l) => resolve(`:${l.trim()}`));
  });
  return { xvfb, display };
}

test.beforeAll(async () => {
  const { xvfb, display } = await startXvfb();
  s = { ...(await startSidecar({ name: 'popout', display })), xvfb, display };
});

test.afterAll(async () => {
  if (!s) return;
  // Shutdown closes every Chromium, the popped-out window included.
  await s.stop();
  s.xvfb.kill();
});

const call = (method: string, p: string, body?: unknown) => s.call(method, p, body);

/** The profile directory of a browser's Chromium (its own, or a pane's kept one), read from the process's `--user-data-dir`. */
async function profileDir(browserId: string, sc: { call: typeof s.call } = s): Promise<string> {
  const pid = (await sc.call('GET', `/api/browsers/${browserId}`)).pid;
  const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  return args.find((a) => a.startsWith('--user-data-dir='))!.slice('--user-data-dir='.length);
}

/** Runs `expression` in the popped-out window's page through its own DevTools endpoint (as a script of the page would). `sc`: the sidecar (default the shared one). */
async function evalInWindow(browserId: string, expression: string, sc: { call: typeof s.call } = s) {
  const dir = await profileDir(browserId, sc);
  const [port, wsPath] = fs.readFileSync(path.join(dir, 'DevToolsActivePort'), 'utf8').trim().split('\n');
  const ws = new WebSocket(`ws://127.0.0.1:${port}${wsPath}`);
  await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
  const ask = (id: number, method: string, params: object, sessionId?: string) =>
    new Promise<any>((resolve) => {
      ws.on('message', (data) => {
        const m = JSON.parse(String(data));
        if (m.id === id) resolve(m);
      });
      ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    });
  const targets = await ask(1, 'Target.getTargets', {});
  const page = targets.result.targetInfos.find((t: any) => t.type === 'page');
  const attached = await ask(2, 'Target.attachToTarget', { targetId: page.targetId, flatten: true });
  await ask(3, 'Runtime.evaluate', { expression }, attached.result.sessionId);
  ws.close();
}

/** Closes the popped-out window's page as the user would, through its own DevTools endpoint. */
async function closeWindow(browserId: string) {
  const dir = await profileDir(browserId);
  const [port, wsPath] = fs.readFileSync(path.join(dir, 'DevToolsActivePort'), 'utf8').trim().split('\n');
  const ws = new WebSocket(`ws://127.0.0.1:${port}${wsPath}`);
  await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
  const ask = (id: number, method: string, params: object) =>
    new Promise<any>((resolve) => {
      ws.on('message', (data) => {
        const m = JSON.parse(String(data));
        if (m.id === id) resolve(m);
      });
      ws.send(JSON.stringify({ id, method, params }));
    });
  const targets = await ask(1, 'Target.getTargets', {});
  const page = targets.result.targetInfos.find((t: any) => t.type === 'page');
  await ask(2, 'Target.closeTarget', { targetId: page.targetId });
  ws.close();
}

test('Pop out from the context menu shows the stub; Pop back in and closing the window return to live screencast', async ({ page }) => {
  test.setTimeout(120_000);
  const { url } = await call('POST', '/api/login-codes');
  await page.goto(new URL(url, s.url).toString());
  await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
  const wall = new Wall(page);
  await wall.waitOpen(1);
  const [term] = await wall.paneIds();
  const dir = fs.mkdtempSync(path.join(s.tmp, 'site-'));
  fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>popped page</title><h1>hello pop-out</h1>');
  await wall.click(term);
  await wall.type(`cd ${dir} && python3 -m http.server 0 --bind 127.0.0.1\n`);
  await wall.waitText(term, /Serving HTTP on \S+ port \d+/, 20_000);
  const port = Number(/Serving HTTP on \S+ port (\d+)/.exec(await wall.text(term))![1]);

  // This sidecar has a display: Pop out is offered.
  const menu = page.getByTestId('context-menu');
  await wall.pane(term).getByTestId('terminal-body').click({ button: 'right' });
  await menu.locator(`[data-testid=port-row][data-port="${port}"]`).click();
  await expect(menu.getByTestId('port-open-popout')).toBeEnabled();
  await expect(menu.getByTestId('port-open-popout-reason')).toHaveCount(0);
  await menu.getByTestId('port-open-popout').click();
  await expect(menu).toHaveCount(0);
  await expect(wall.visiblePanes()).toHaveCount(2);
  const cast = await wall.focusedId();
  const pane = wall.pane(cast);
  await expect(pane).toHaveAttribute('data-mode', 'screencast');
  const stub = pane.getByTestId('popout-stub');
  await expect(stub).toHaveAttribute('data-state', 'out', { timeout: 30_000 });
  await expect(stub).toContainText('Popped out to a window');
  const browserId = (await pane.getAttribute('data-browser-id'))!;
  const info = await call('GET', `/api/browsers/${browserId}`);
  expect(info.popped_out).toBe(true);
  // The header keeps following the window's page (a navigation in the window shows up).
  await expect(pane.getByTestId('browser-url')).toHaveText(`localhost:${port}`);
  await expect(pane.getByTestId('browser-url')).toHaveAttribute('title', 'popped page');
  await call('POST', `/api/browsers/${browserId}/navigate`, { url: `http://localhost:${port}/index.html?in=window` });
  await expect(pane.getByTestId('browser-url')).toHaveText(`localhost:${port}/index.html?in=window`);

  // Pop out again from the port menu: the pane is already out, so it is just focused (no
  // stale "Couldn't pop out" banner, the same window).
  const pid = info.pid;
  await wall.click(term);
  await wall.pane(term).getByTestId('terminal-body').click({ button: 'right' });
  await menu.locator(`[data-testid=port-row][data-port="${port}"]`).click();
  await menu.getByTestId('port-open-popout').click();
  await expect(menu).toHaveCount(0);
  await expect.poll(() => wall.focusedId()).toBe(cast);
  await expect(stub).toHaveAttribute('data-state', 'out');
  await expect(pane.getByTestId('popout-error')).toHaveCount(0);
  expect((await call('GET', `/api/browsers/${browserId}`)).pid).toBe(pid);

  // While out the viewport choices are disabled, saying why; nothing is recorded.
  await pane.getByTestId('browser-display').click();
  await expect(pane.getByTestId('viewport-desktop')).toBeDisabled();
  await expect(pane.getByTestId('viewport-pane')).toBeDisabled();
  await expect(pane.getByTestId('viewport-apply')).toBeDisabled();
  await expect(pane.getByTestId('viewport-disabled-reason')).toContainText('Popped out');
  await page.keyboard.press('Escape');

  // A dialog in the window is answered there: the pane shows no overlay, only a note, and
  // nothing blocks Pop back in (which is tried further down).
  await evalInWindow(browserId, "setTimeout(() => confirm('leave this page?'), 0); 1");
  await expect(stub.getByTestId('popout-dialog-note')).toBeVisible({ timeout: 20_000 });
  await expect(pane.getByTestId('page-dialog')).toHaveCount(0);

  // Pop back in from the keyboard: live screencast again, frames painted. The count is read
  // while out (no frames stream then): read after the pop-in, a static page's only frames
  // may already be painted.
  const canvas = pane.getByTestId('screencast-canvas');
  const before = Number(await canvas.getAttribute('data-painted'));
  const popin = pane.getByTestId('popout-popin');
  await popin.focus();
  await page.keyboard.press('Enter');
  await expect(stub).toHaveCount(0, { timeout: 30_000 });
  expect((await call('GET', `/api/browsers/${browserId}`)).popped_out).toBe(false);
  await expect.poll(async () => Number(await canvas.getAttribute('data-painted')), { timeout: 20_000 }).toBeGreaterThan(before);

  // Pop out from the Display menu, then the user closes the window: back by itself.
  await pane.getByTestId('browser-display').click();
  await pane.getByTestId('display-popout').click();
  await expect(stub).toHaveAttribute('data-state', 'out', { timeout: 30_000 });
  const after = Number(await canvas.getAttribute('data-painted'));
  await closeWindow(browserId);
  await expect(stub).toHaveCount(0, { timeout: 30_000 });
  await expect.poll(async () => Number(await canvas.getAttribute('data-painted')), { timeout: 20_000 }).toBeGreaterThan(after);
  expect((await call('GET', `/api/browsers/${browserId}`)).popped_out).toBe(false);

  // An embedded pane's Display menu offers Pop out too: it becomes a screencast, popped out.
  await wall.click(term);
  await wall.pane(term).getByTestId('terminal-body').click({ button: 'right' });
  await menu.locator(`[data-testid=port-row][data-port="${port}"]`).click();
  await menu.getByTestId('port-open-iframe').click();
  await expect(menu).toHaveCount(0);
  const embedded = wall.pane(await wall.focusedId());
  await expect(embedded).toHaveAttribute('data-mode', 'iframe');
  await embedded.getByTestId('browser-display').click();
  await expect(embedded.getByTestId('display-popout')).toBeEnabled();
  await embedded.getByTestId('display-popout').click();
  await expect(embedded).toHaveAttribute('data-mode', 'screencast');
  await expect(embedded.getByTestId('popout-stub')).toHaveAttribute('data-state', 'out', { timeout: 30_000 });
  await embedded.getByTestId('popout-popin').click();
  await expect(embedded.getByTestId('popout-stub')).toHaveCount(0, { timeout: 30_000 });
});

test('a pane popped out when the app quit comes back as a live screencast at the window\'s last page', async ({ page }) => {
  test.setTimeout(150_000);
  const site = await servePages({ '/p': '<!doctype html><title>before quit</title><h1>pop-restore</h1>' });
  const started: Sidecar[] = [];
  try {
    const s1 = await startSidecar({ name: 'popout-restore', display: s.display });
    started.push(s1);
    const login = async (sc: Sidecar) => {
      const { url } = await sc.call('POST', '/api/login-codes');
      await page.goto(new URL(url, sc.url).toString());
      await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
      return new Wall(page);
    };
    let wall = await login(s1);
    await wall.waitOpen(1);
    const { id, browser } = await openScreencast(wall, `${site.origin}/p`);
    const pane = wall.pane(id);
    await pane.getByTestId('browser-display').click();
    await pane.getByTestId('display-popout').click();
    await expect(pane.getByTestId('popout-stub')).toHaveAttribute('data-state', 'out', { timeout: 30_000 });
    // The user goes on in the window: the saved pane follows the window's page.
    const last = `${site.origin}/p?in=window`;
    await evalInWindow(browser, `location.href = ${JSON.stringify(last)}; 1`, s1);
    const saved = async (sc: Sidecar) => (await sc.call('GET', '/api/workspace')).workspace?.panes?.[id];
    await expect.poll(async () => (await saved(s1))?.url, { timeout: 20_000 }).toBe(last);

    // Quit with the window open (shutdown closes it), start again on the same state.
    const windowPid = (await s1.call('GET', `/api/browsers/${browser}`)).pid;
    expect(typeof windowPid).toBe('number');
    await s1.stop({ keep: true });
    let gone = 'alive';
    try {
      process.kill(windowPid, 0);
    } catch (e) {
      gone = (e as NodeJS.ErrnoException).code ?? String(e);
    }
    expect(gone, 'the window\'s Chromium ended with the app').toBe('ESRCH');
    const s2 = await startSidecar({ name: 'popout-restore', display: s.display, tmp: s1.tmp });
    started.push(s2);
    wall = await login(s2);
    await wall.waitOpen(2);
    const back = wall.pane(id);
    await expect(back).toHaveAttribute('data-mode', 'screencast');
    await expect(back).toHaveAttribute('data-browser-id', /^b\d+$/, { timeout: 20_000 });
    // In the pane, not a window: no stub, frames painted, a headless browser at the last page.
    await expect(back.getByTestId('popout-stub')).toHaveCount(0);
    await expect(back.getByTestId('screencast-canvas')).not.toHaveAttribute('data-frame', '0', { timeout: 20_000 });
    const info = await s2.call('GET', `/api/browsers/${(await back.getAttribute('data-browser-id'))!}`);
    expect(info.url).toBe(last);
    expect(info.popped_out).toBe(false);
  } finally {
    for (const sc of started.reverse()) await sc.stop();
    await site.close();
  }
});
