// `ph` from inside a terminal pane (protocol §9, §10): the layout verbs reach the window over
// the UI channel and change the wall as a click would, while the keyboard stays in the
// calling pane. A page reload in the middle of a relayed request is survived (the sidecar
// asks the new window) or refused cleanly. Writes docs/screenshot-ph.png.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { type Wall, api, expect, test } from './fixtures';

const repo = path.resolve(import.meta.dirname, '../../..');

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** `python3 -m http.server` on a free loopback port, serving one page, started by the test (not in a pane). */
async function pythonServer(): Promise<{ port: number; stop: () => void }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'porthole-ph-'));
  fs.writeFileSync(
    path.join(dir, 'index.html'),
    '<!doctype html><html><head><title>ph fixture</title><style>body{font:16px system-ui;margin:24px;background:#f6f7fb;color:#1f2430}</style></head>' +
      '<body><h1 id="ph">opened by ph</h1><p>A dev server a program in the terminal pane opened beside itself.</p></body></html>\n',
  );
  const port = await freePort();
  const child: ChildProcess = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1'], { cwd: dir, stdio: 'ignore' });
  await expect
    .poll(async () => (await fetch(`http://127.0.0.1:${port}/`).then((r) => r.status).catch(() => 0)), { timeout: 10_000 })
    .toBe(200);
  return {
    port,
    stop: () => {
      child.kill('SIGTERM');
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function frameOf(page: Page, paneId: string) {
  return page.frameLocator(`[data-testid=pane][data-pane-id="${paneId}"] iframe[data-testid=browser-frame]`);
}

/** Runs `cmd` in the focused terminal and waits for its `<tag>=<exit status>` line; returns the status. */
async function run(wall: Wall, term: string, cmd: string, tag: string, timeout = 25_000): Promise<number> {
  await wall.type(`${cmd}; echo "${tag}=$?"\n`);
  const re = new RegExp(`^${tag}=(\\d+)`, 'm');
  await wall.waitText(term, re, timeout);
  return Number(re.exec(await wall.text(term))![1]);
}

/** The ids of the panes of kind `kind` now on the page. */
async function panesOf(wall: Wall, kind: 'terminal' | 'browser'): Promise<string[]> {
  return wall.page.locator(`[data-testid=pane][data-kind=${kind}]`).evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.paneId!));
}

/** The keyboard is in pane `id` (the element with focus is inside it). */
async function keyboardIn(page: Page, id: string): Promise<boolean> {
  return page.evaluate((id) => !!document.querySelector(`[data-testid=pane][data-pane-id="${id}"]`)?.contains(document.activeElement), id);
}

test.describe('ph: the control plane from a terminal pane', () => {
  test('split, open and close from a pane: the wall changes as the human sees it and the keyboard stays in the calling pane', async ({ wall, page }) => {
    test.setTimeout(120_000);
    const site = await pythonServer();
    try {
      const [caller] = await wall.paneIds();
      await wall.click(caller);
      // Its handle is its terminal's id, shown in the header for the human to name it.
      const pane = wall.pane(caller);
      const handle = (await pane.getAttribute('data-terminal-id'))!;
      expect(handle).toMatch(/^t\d+$/);
      await expect(pane).toHaveAttribute('data-handle', handle);
      await expect(pane.getByTestId('pane-handle')).toHaveText(handle);
      await expect(pane.getByTestId('pane-handle')).toHaveAttribute('title', `Pane handle for ph: ${handle}`);
      await wall.type('echo "PANE=$PORTHOLE_PANE"\n');
      await wall.waitText(caller, new RegExp(`^PANE=${handle}$`, 'm'));

      // ph split: a second terminal pane beside the caller, which keeps the focus and the keys.
      expect(await run(wall, caller, 'ph split -- bash', 'split')).toBe(0);
      await wall.waitOpen(2);
      const [split] = (await wall.paneIds()).filter((id) => id !== caller);
      const splitPane = wall.pane(split);
      await expect(splitPane).toHaveAttribute('data-kind', 'terminal');
      const splitHandle = (await splitPane.getAttribute('data-handle'))!;
      expect(splitHandle).toMatch(/^t\d+$/);
      await expect(splitPane).toHaveAttribute('data-terminal-id', splitHandle);
      await expect(pane).toHaveAttribute('data-focused', 'true');
      expect(await keyboardIn(page, caller)).toBe(true);
      // Beside it: the caller was wider than tall, so the new pane is to its right.
      const [a, b] = [await wall.rect(caller), await wall.rect(split)];
      expect(b.x).toBeGreaterThan(a.x + a.width - 20);
      await wall.type('echo typed-after-split\n');
      await wall.waitText(caller, /^typed-after-split$/m);
      expect(await wall.text(split)).not.toContain('typed-after-split');
      // The new pane runs its own shell, named by its handle.
      await page.evaluate((id) => (window as any).__porthole.store.runtime(id).input('echo "IN=$PORTHOLE_PANE"\r'), split);
      await wall.waitText(split, new RegExp(`^IN=${splitHandle}$`, 'm'));

      // ph open :PORT: an iframe pane showing the page (beside the wall's largest pane); the focus stays.
      expect(await run(wall, caller, `ph open :${site.port}`, 'open')).toBe(0);
      await expect(wall.panes()).toHaveCount(3);
      const [browser] = await panesOf(wall, 'browser');
      const browserPane = wall.pane(browser);
      await expect(browserPane).toHaveAttribute('data-mode', 'iframe');
      await expect(browserPane).toHaveAttribute('data-handle', /^b\d+$/);
      const browserHandle = (await browserPane.getAttribute('data-handle'))!;
      await expect(browserPane.getByTestId('pane-handle')).toHaveText(browserHandle);
      await expect(frameOf(page, browser).locator('#ph')).toHaveText('opened by ph', { timeout: 20_000 });
      await expect(browserPane.getByTestId('browser-url')).toHaveText(`localhost:${site.port}`);
      await expect(pane).toHaveAttribute('data-focused', 'true');
      expect(await keyboardIn(page, caller)).toBe(true);
      await wall.type('echo typed-after-open\n');
      await wall.waitText(caller, /^typed-after-open$/m);

      // `ph list` names every pane the human sees, by the handles in their headers.
      await wall.type('clear; ph list\n');
      await wall.waitText(caller, new RegExp(browserHandle));
      await wall.waitText(caller, new RegExp(splitHandle));
      await page.screenshot({ path: path.join(repo, 'docs/screenshot-ph.png') });

      // ph close <handle>: the browser pane goes, then the split terminal (its shell hung up).
      expect(await run(wall, caller, `ph close ${browserHandle}`, 'closeb')).toBe(0);
      await expect(wall.panes()).toHaveCount(2);
      expect(await panesOf(wall, 'browser')).toEqual([]);
      expect(await run(wall, caller, `ph close ${splitHandle}`, 'closet')).toBe(0);
      await expect(wall.panes()).toHaveCount(1);
      await expect.poll(async () => (await api('GET', '/api/terminals')).terminals.some((t: { id: string }) => t.id === splitHandle)).toBe(false);
      await expect(pane).toHaveAttribute('data-focused', 'true');
      expect(await keyboardIn(page, caller)).toBe(true);

      // An unknown handle is refused, and nothing changes.
      expect(await run(wall, caller, 'ph close b999999', 'closeu')).not.toBe(0);
      await expect(wall.panes()).toHaveCount(1);
    } finally {
      site.stop();
    }
  });

  test('focus, zoom, unzoom, minimize and restore act as the header buttons do; zoom and unzoom set, never toggle', async ({ wall, page }) => {
    test.setTimeout(90_000);
    const [caller] = await wall.paneIds();
    await wall.click(caller);
    expect(await run(wall, caller, 'ph split -- bash', 'split')).toBe(0);
    await wall.waitOpen(2);
    const [other] = (await wall.paneIds()).filter((id) => id !== caller);
    const handle = (await wall.pane(other).getAttribute('data-handle'))!;
    const callerPane = wall.pane(caller);
    const otherPane = wall.pane(other);

    // zoom twice: still zoomed (set, not toggled); the zoomed pane fills the wall.
    expect(await run(wall, caller, `ph zoom ${handle}`, 'zoom1')).toBe(0);
    await expect(otherPane).toHaveAttribute('data-visible', 'true');
    await expect(callerPane).toHaveAttribute('data-visible', 'false');
    // The keyboard went with the zoom (as a double-click on the header does): type there.
    await expect(otherPane).toHaveAttribute('data-focused', 'true');
    await wall.waitKeyboardFocus();
    await wall.type(`ph zoom ${handle}; echo "zoom2=$?"\n`);
    await wall.waitText(other, /^zoom2=0$/m);
    await expect(callerPane).toHaveAttribute('data-visible', 'false');
    await wall.type(`ph unzoom ${handle}; ph unzoom ${handle}; echo "unzoom=$?"\n`);
    await wall.waitText(other, /^unzoom=0$/m);
    await expect(callerPane).toHaveAttribute('data-visible', 'true');

    // minimize goes to the baseboard; the last pane on the wall cannot go; restore brings it back.
    await wall.click(caller);
    expect(await run(wall, caller, `ph minimize ${handle}`, 'min')).toBe(0);
    await expect(otherPane).toHaveAttribute('data-visible', 'false');
    await expect(page.getByTestId('baseboard')).toContainText('bash');
    expect(await run(wall, caller, 'ph minimize self', 'minself')).toBe(2);
    await expect(callerPane).toHaveAttribute('data-visible', 'true');
    expect(await run(wall, caller, `ph restore ${handle}`, 'restore')).toBe(0);
    await expect(otherPane).toHaveAttribute('data-visible', 'true');

    // focus moves the focus and the keyboard (a minimized pane comes back first).
    await wall.click(caller);
    expect(await run(wall, caller, `ph minimize ${handle}`, 'min2')).toBe(0);
    await wall.type(`ph focus ${handle}\n`);
    await expect(otherPane).toHaveAttribute('data-visible', 'true');
    await expect(otherPane).toHaveAttribute('data-focused', 'true');
    await wall.waitKeyboardFocus();
    await wall.type('echo typed-in-other\n');
    await wall.waitText(other, /^typed-in-other$/m);
  });

  test('a page reload in the middle of a relayed open is survived (the new window opens it) or refused cleanly', async ({ wall, page }) => {
    test.setTimeout(120_000);
    const site = await pythonServer();
    try {
      const [caller] = await wall.paneIds();
      await wall.click(caller);
      // Hold the window's proxy grant request: the open is under way in this window and
      // nothing has changed on the wall yet when the page reloads.
      let held!: () => void;
      const reached = new Promise<void>((resolve) => (held = resolve));
      let first = true;
      await page.route('**/api/proxy/grants', async (route) => {
        if (!first) return route.continue();
        first = false;
        held();
        // Never answered: the page goes away under it.
      });
      await wall.type(`ph open :${site.port}; echo "reload=$?"\n`);
      await reached;
      await page.reload();
      await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');

      const re = /^reload=(\d+)/m;
      await wall.waitText(caller, re, 30_000);
      const status = Number(re.exec(await wall.text(caller))![1]);
      const said = (await wall.text(caller)).trim().split('\n').slice(-3, -1).join(' | ');
      // 0: the new window carried it out; 2: refused, nothing done. Anything else is not clean.
      expect([0, 2], `ph open exited ${status}: ${said}`).toContain(status);
      const browsers = await panesOf(wall, 'browser');
      if (status === 0) {
        expect(browsers).toHaveLength(1);
        await expect(frameOf(page, browsers[0]).locator('#ph')).toHaveText('opened by ph', { timeout: 20_000 });
        await expect(wall.pane(browsers[0])).toHaveAttribute('data-handle', /^b\d+$/);
      } else {
        expect(browsers).toEqual([]);
        // A refusal must be the new window's or the sidecar's, never the dying page's own
        // failed request (the reload cancels it while the page's socket is still open).
        expect(said).not.toMatch(/Failed to fetch|isn't answering/);
      }
      // Either way exactly one of each: no half-done or doubled pane.
      expect(await panesOf(wall, 'terminal')).toEqual([caller]);
    } finally {
      site.stop();
    }
  });
});
