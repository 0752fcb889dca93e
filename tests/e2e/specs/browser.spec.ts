// Browser panes in the iframe render mode, against real dev servers started in a terminal
// pane: a Vite dev server (installed from the npm registry into target/e2e-cache on first
// use) and python3 -m http.server. Nothing here reaches the internet: the https:// case is
// refused before any request is made.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type Frame, type Page, test as plain } from '@playwright/test';
import { type Sidecar, startSidecar } from '../sidecar';
import { Wall, api, expect, test } from './fixtures';

const repo = path.resolve(import.meta.dirname, '../../..');
const VITE_VERSION = '8.3.8';
const viteCache = path.join(repo, 'target/e2e-cache', `vite-${VITE_VERSION}`);

/** Installs vite@VITE_VERSION once into target/e2e-cache (kept between runs). */
function ensureVite(): string {
  const bin = path.join(viteCache, 'node_modules/vite/bin/vite.js');
  if (fs.existsSync(bin)) return viteCache;
  fs.mkdirSync(path.dirname(viteCache), { recursive: true });
  const tmp = fs.mkdtempSync(`${viteCache}.tmp-`);
  fs.writeFileSync(path.join(tmp, 'package.json'), JSON.stringify({ name: 'porthole-e2e-vite', private: true }));
  execFileSync('npm', ['i', `vite@${VITE_VERSION}`, '--no-audit', '--no-fund', '--loglevel=error'], { cwd: tmp, stdio: 'inherit', timeout: 240_000 });
  fs.rmSync(viteCache, { recursive: true, force: true });
  fs.renameSync(tmp, viteCache);
  return viteCache;
}

/**
 * Writes `files` (name → content) to a temp folder and serves it with `python3 -m
 * http.server` in the wall's first terminal, as a user would; its terminal pane and port.
 */
async function pythonServer(wall: Wall, files: Record<string, string>): Promise<{ term: string; port: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'porthole-http-'));
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), content);
  const port = await freePort();
  const [term] = await wall.paneIds();
  await wall.click(term);
  await wall.type(`cd ${dir} && python3 -m http.server ${port} --bind 127.0.0.1\n`);
  await wall.waitText(term, /Serving HTTP/);
  return { term, port };
}

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

/** A small Vite app: a module that sets text (and accepts hot updates), a link, a target=_blank link. */
function viteProject(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'porthole-vite-app-'));
  fs.symlinkSync(path.join(ensureVite(), 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  fs.writeFileSync(
    path.join(dir, 'index.html'),
    `<!doctype html>
<html><head><meta charset="utf-8"><title>Vite fixture</title>
<style>body{font:16px system-ui;margin:24px;background:#f6f7fb;color:#1f2430} h1{font-size:22px} #msg{padding:12px 16px;background:#fff;border:1px solid #d3d7de;border-radius:6px;display:inline-block} a{margin-right:16px}</style>
</head><body>
<h1>Vite dev server</h1>
<p id="msg">loading…</p>
<p><a id="about" href="/about.html">About page</a><a id="pop" href="/popup.html" target="_blank">Open popup</a></p>
<script type="module" src="/main.js"></script>
</body></html>
`,
  );
  fs.writeFileSync(
    path.join(dir, 'main.js'),
    `import { msg } from './msg.js';
const show = (m) => { document.querySelector('#msg').textContent = m; };
show(msg);
if (import.meta.hot) import.meta.hot.accept('./msg.js', (mod) => mod && show(mod.msg));
`,
  );
  fs.writeFileSync(path.join(dir, 'msg.js'), `export const msg = 'hello from vite';\n`);
  // Its own dependency cache (node_modules is shared with the install cache); keep the banner on HMR.
  fs.writeFileSync(path.join(dir, 'vite.config.mjs'), `export default { cacheDir: '.vite-cache', clearScreen: false };\n`);
  fs.writeFileSync(path.join(dir, 'about.html'), `<!doctype html><html><head><meta charset="utf-8"><title>About fixture</title></head><body><h1 id="about-title">About</h1><a id="home" href="/">Home</a></body></html>\n`);
  fs.writeFileSync(path.join(dir, 'popup.html'), `<!doctype html><html><head><meta charset="utf-8"><title>Popup fixture</title></head><body><h1 id="popup-title">Popup</h1></body></html>\n`);
  return dir;
}

function browserPane(wall: Wall, id: string) {
  return wall.pane(id);
}

function frameOf(page: Page, paneId: string) {
  return page.frameLocator(`[data-testid=pane][data-pane-id="${paneId}"] iframe[data-testid=browser-frame]`);
}

/** The Playwright Frame object of a pane's iframe (to evaluate in it). */
async function frameObject(page: Page, paneId: string): Promise<Frame> {
  const handle = await page.locator(`[data-testid=pane][data-pane-id="${paneId}"] iframe[data-testid=browser-frame]`).elementHandle();
  const f = await handle!.contentFrame();
  return f!;
}


/**
 * A loopback page server started by the test. `pages` maps a path to its HTML (text/html) or,
 * for a path ending in `.txt`, its plain text. A request for `/slow…` is held (no response
 * head) until `release()`; `held` counts the ones waiting.
 */
async function servePages(pages: Record<string, string>) {
  let waiting: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    const p = new URL(req.url ?? '/', 'http://x').pathname;
    const send = () => {
      const body = pages[p];
      const type = p.endsWith('.txt') ? 'text/plain' : 'text/html; charset=utf-8';
      res.writeHead(body === undefined ? 404 : 200, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body ?? 'not found');
    };
    if (p.startsWith('/slow')) waiting.push(send);
    else send();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    held: () => waiting.length,
    release: () => {
      for (const send of waiting) send();
      waiting = [];
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** The proxy origin a pane's frame is pointed at. */
async function frameSrcOrigin(page: Page, paneId: string): Promise<string> {
  const src = await page.locator(`[data-pane-id="${paneId}"] iframe[data-testid=browser-frame]`).getAttribute('src');
  return new URL(src!).origin;
}

async function typeUrl(wall: Wall, url: string) {
  const input = wall.page.locator('[data-testid=pane][data-focused=true] [data-testid=browser-url-input]');
  await expect(input).toBeFocused();
  await input.fill(url);
  await input.press('Enter');
}

test.describe('browser panes', () => {
  test('a Vite dev server: page in the frame, HMR without reload, links, and a new-window request', async ({ wall, page }) => {
    // The first run installs Vite from the registry (only this test needs it).
    test.setTimeout(360_000);
    await page.setViewportSize({ width: 1280, height: 720 });
    const dir = viteProject();
    const port = await freePort();
    const [term] = await wall.paneIds();
    await wall.click(term);
    await wall.type(`cd ${dir} && clear\n`);
    await wall.type(`npx vite --port ${port} --strictPort --host 127.0.0.1\n`);
    await wall.waitText(term, /ready in|Local:/, 60_000);

    // A touched terminal is split beside (right: the pane is wider than tall).
    const id = await wall.openBrowserWithPrefix();
    await expect(wall.visiblePanes()).toHaveCount(2);
    const t = await wall.rect(term);
    const b = await wall.rect(id);
    expect(b.x).toBeGreaterThan(t.x + t.width - 1);
    await typeUrl(wall, `localhost:${port}`);

    const pane = browserPane(wall, id);
    const frame = frameOf(page, id);
    await expect(frame.locator('#msg')).toHaveText('hello from vite', { timeout: 20_000 });
    await expect(pane.getByTestId('browser-url')).toHaveText(`localhost:${port}`);
    await expect(pane.getByTestId('browser-url')).toHaveAttribute('title', 'Vite fixture');
    const iframe = pane.locator('iframe[data-testid=browser-frame]');
    await expect(iframe).toHaveAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms allow-popups allow-modals allow-downloads allow-pointer-lock');
    await expect(iframe).toHaveAttribute('allow', 'autoplay; clipboard-write; fullscreen');
    await expect(pane.getByTestId('browser-banner')).toHaveCount(0);

    // HMR over the proxied WebSocket: the text changes and the window survives (no reload).
    const f = await frameObject(page, id);
    await f.evaluate(() => {
      (window as any).__portholeMarker = 'kept';
    });
    // Give Vite's client a moment to have its socket open before the edit.
    await expect.poll(() => f.evaluate(() => document.readyState)).toBe('complete');
    await page.waitForTimeout(500);
    fs.writeFileSync(path.join(dir, 'msg.js'), `export const msg = 'hot updated';\n`);
    await expect(frame.locator('#msg')).toHaveText('hot updated', { timeout: 15_000 });
    expect(await f.evaluate(() => (window as any).__portholeMarker)).toBe('kept');

    await page.waitForTimeout(300);
    await page.screenshot({ path: path.join(repo, 'docs/screenshot-browser.png') });

    // A clicked link: the header follows the frame.
    await frame.locator('#about').click();
    await expect(frame.locator('#about-title')).toHaveText('About');
    await expect(pane.getByTestId('browser-url')).toHaveText(`localhost:${port}/about.html`);
    await expect(pane.getByTestId('browser-url')).toHaveAttribute('title', 'About fixture');
    // pointerdown in the frame focuses the pane.
    await wall.click(term);
    await frame.locator('#about-title').click();
    await expect(pane).toHaveAttribute('data-focused', 'true');

    // Back through the shim, then forward.
    // (A history navigation may take modules from the HTTP cache without revalidating, so
    // check the page, not the hot-updated text.)
    await pane.getByTestId('browser-back').click();
    await expect(pane.getByTestId('browser-url')).toHaveText(`localhost:${port}`);
    await expect(frame.locator('#about')).toBeVisible();
    await pane.getByTestId('browser-forward').click();
    await expect(pane.getByTestId('browser-url')).toHaveText(`localhost:${port}/about.html`);
    await expect(frame.locator('#about-title')).toHaveText('About');
    await frame.locator('#home').click();
    await expect(pane.getByTestId('browser-url')).toHaveText(`localhost:${port}`);
    await expect(frame.locator('#pop')).toBeVisible();

    // target=_blank asks first; Cancel drops it, Open opens an adjacent browser pane.
    await frame.locator('#pop').click();
    const prompt = pane.getByTestId('browser-prompt');
    await expect(prompt).toContainText(`Open http://localhost:${port}/popup.html in a new pane?`);
    await prompt.getByTestId('browser-prompt-cancel').click();
    await expect(prompt).toHaveCount(0);
    await expect(wall.visiblePanes()).toHaveCount(2);
    await frame.locator('#pop').click();
    await pane.getByTestId('browser-prompt-accept').click();
    await expect(wall.visiblePanes()).toHaveCount(3);
    const popup = await wall.focusedId();
    expect([term, id]).not.toContain(popup);
    await expect(wall.pane(popup)).toHaveAttribute('data-kind', 'browser');
    await expect(frameOf(page, popup).locator('#popup-title')).toHaveText('Popup', { timeout: 20_000 });
    await expect(wall.pane(popup).getByTestId('browser-url')).toHaveText(`localhost:${port}/popup.html`);
    // The terminal (the Vite server) is still there.
    await expect(wall.pane(term)).toHaveAttribute('data-kind', 'terminal');
    await wall.click(term);
    await page.keyboard.press('Control+c');
  });

  test('a python3 -m http.server page opens, and the pane survives a reload of the app', async ({ wall, page }) => {
    const { term, port } = await pythonServer(wall, {
      'index.html': '<!doctype html><html><head><title>Python fixture</title></head><body><h1 id="py">served by python</h1></body></html>\n',
      'notes.txt': 'plain text, no shim here\n',
    });
    // The header button on the terminal opens one too.
    await wall.pane(term).getByTestId('pane-open-browser').click();
    await expect(wall.visiblePanes()).toHaveCount(2);
    const id = await wall.focusedId();
    await typeUrl(wall, `127.0.0.1:${port}`);
    await expect(frameOf(page, id).locator('#py')).toHaveText('served by python', { timeout: 20_000 });
    await expect(wall.pane(id).getByTestId('browser-url')).toHaveText(`127.0.0.1:${port}`);

    // A non-HTML document carries no shim: the banner says so and offers Reload.
    await wall.pane(id).getByTestId('browser-url').click();
    await typeUrl(wall, `127.0.0.1:${port}/notes.txt`);
    await expect(wall.pane(id).getByTestId('browser-banner')).toBeVisible({ timeout: 10_000 });
    await expect(frameOf(page, id).locator('body')).toContainText('plain text, no shim here');
    // Back without a shim: the app's own list, by reloading the frame.
    await wall.pane(id).getByTestId('browser-back').click();
    await expect(frameOf(page, id).locator('#py')).toHaveText('served by python');
    await expect(wall.pane(id).getByTestId('browser-url')).toHaveText(`127.0.0.1:${port}`);
    await expect(wall.pane(id).getByTestId('browser-banner')).toHaveCount(0);

    // The workspace document keeps the browser pane.
    await expect.poll(async () => JSON.stringify((await api('GET', '/api/workspace')).workspace)).toContain(`"url":"http://127.0.0.1:${port}/"`);
    await page.reload();
    await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
    await expect(wall.pane(id)).toHaveAttribute('data-kind', 'browser');
    await expect(frameOf(page, id).locator('#py')).toHaveText('served by python', { timeout: 20_000 });
    await wall.click(term);
    await page.keyboard.press('Control+c');
  });

  test('zoom, minimize and restore never reload the frame (its element is never re-parented)', async ({ wall, page }) => {
    const { term, port } = await pythonServer(wall, {
      'index.html': '<!doctype html><html><head><title>Keep me</title></head><body><h1 id="k">keep</h1></body></html>\n',
    });
    const id = await wall.openBrowserWithPrefix();
    await typeUrl(wall, `:${port}`);
    await expect(wall.pane(id).getByTestId('browser-url')).toHaveText(`localhost:${port}`);
    await expect(frameOf(page, id).locator('#k')).toHaveText('keep', { timeout: 20_000 });
    const f = await frameObject(page, id);
    await f.evaluate(() => {
      (window as any).__kept = 42;
    });
    const frameEl = await page.locator(`[data-pane-id="${id}"] iframe`).elementHandle();

    await wall.pane(id).getByTestId('pane-zoom').click();
    await expect(wall.visiblePanes()).toHaveCount(1);
    await wall.pane(id).getByTestId('pane-zoom').click();
    await expect(wall.visiblePanes()).toHaveCount(2);
    await wall.pane(id).getByTestId('pane-minimize').click();
    await expect(wall.visiblePanes()).toHaveCount(1);
    await page.getByTestId('baseboard-chip').click();
    await expect(wall.visiblePanes()).toHaveCount(2);
    await wall.click(term);
    await wall.prefix('Shift+BracketRight'); // } swap
    await expect(frameOf(page, id).locator('#k')).toHaveText('keep');

    expect(await frameEl!.evaluate((el) => el.isConnected)).toBe(true);
    expect(await (await frameObject(page, id)).evaluate(() => (window as any).__kept)).toBe(42);
    await wall.click(term);
    await page.keyboard.press('Control+c');
  });

  test('https:// is refused by the iframe renderer; an untouched terminal is replaced; a browser never is', async ({ wall, page }) => {
    const [term] = await wall.paneIds();
    await wall.click(term);
    const terminalId = await wall.pane(term).getAttribute('data-terminal-id');
    const id = await wall.openBrowserWithPrefix();
    // Replaced in place: still one pane, the terminal pane's element is gone and its terminal deleted.
    await expect(wall.panes()).toHaveCount(1);
    await expect(wall.pane(term)).toHaveCount(0);
    await expect.poll(async () => (await api('GET', '/api/terminals')).terminals.map((t: any) => t.id)).not.toContain(terminalId);

    // https:// typed into the pane opens it as a screencast (same pane).
    await typeUrl(wall, 'https://example.com');
    const pane = wall.pane(id);
    await expect(pane).toHaveAttribute('data-mode', 'screencast');
    await expect(pane).toHaveAttribute('data-browser-id', /^b\d+$/);
    await expect(pane.getByTestId('browser-url')).toHaveText('example.com');

    // Display lists the modes that exist; the iframe renderer refuses https and offers screencast.
    await pane.getByTestId('browser-display').click();
    const menu = pane.getByTestId('browser-display-menu');
    // Pop out (with its reason) is an action, not a render mode.
    await expect(menu.locator('[data-testid^=display-]:not([data-testid^=display-popout])')).toHaveCount(2);
    await expect(menu).toContainText('Embedded (iframe)');
    await expect(menu).toContainText('Screencast');
    await menu.getByTestId('display-iframe').click();
    await expect(menu).toHaveCount(0);
    await expect(pane).toHaveAttribute('data-mode', 'iframe');
    const panel = pane.getByTestId('browser-https-panel');
    await expect(panel).toBeVisible();
    await expect(panel).toContainText('http:// pages only');
    await expect(pane.getByTestId('browser-url')).toHaveText('example.com');
    await panel.getByTestId('browser-open-screencast').click();
    await expect(pane).toHaveAttribute('data-mode', 'screencast');
    await expect(panel).toHaveCount(0);
    await expect(pane.getByTestId('browser-url')).toHaveText('example.com');

    // The prefix still works with a browser pane focused; a browser is never replaced.
    await wall.waitKeyboardFocus();
    const second = await wall.openBrowserWithPrefix();
    await expect(wall.panes()).toHaveCount(2);
    await expect(wall.pane(id)).toHaveAttribute('data-kind', 'browser');
    expect(second).not.toBe(id);
  });

  test('file:// and other schemes are refused under the field; Escape discards', async ({ wall, page }) => {
    const [term] = await wall.paneIds();
    await wall.click(term);
    await wall.type('echo touched\n');
    const id = await wall.openBrowserWithPrefix();
    const pane = wall.pane(id);
    const input = pane.getByTestId('browser-url-input');
    await input.fill('file:///etc/passwd');
    await input.press('Enter');
    await expect(pane.getByTestId('browser-url-error')).toContainText("file: URLs can't be opened");
    await expect(input).toBeFocused();
    await input.fill('javascript:alert(1)');
    await input.press('Enter');
    await expect(pane.getByTestId('browser-url-error')).toContainText('javascript: URLs');
    await input.press('Escape');
    await expect(pane.getByTestId('browser-url-input')).toHaveCount(0);
    await expect(pane.getByTestId('browser-url-error')).toHaveCount(0);
    await expect(pane.getByTestId('browser-empty')).toBeVisible();
    // Click to edit again: the field opens pre-selected.
    await pane.getByTestId('browser-url').click();
    await expect(pane.getByTestId('browser-url-input')).toBeFocused();
    // Leaving the field discards the edit too.
    await page.keyboard.type('localhost:1');
    await wall.click(term);
    await expect(pane.getByTestId('browser-url-input')).toHaveCount(0);
    await expect(pane.getByTestId('browser-empty')).toBeVisible();
  });
  test('a slow page: revealed at 1 s while its response is held, a loading bar, no stale title; a fast one is revealed at its load', async ({ wall, page }) => {
    const site = await servePages({
      '/': '<!doctype html><html><head><title>Fast home</title></head><body><h1 id="h">home</h1></body></html>',
      '/slow.html': '<!doctype html><html><head><title>Slow page</title></head><body><h1 id="h">slow</h1></body></html>',
      '/slow2.html': '<!doctype html><html><head><title>Slow again</title></head><body><h1 id="h">slow2</h1></body></html>',
    });
    try {
      const [term] = await wall.paneIds();
      await wall.click(term);
      await wall.type('echo touched\n');
      const id = await wall.openBrowserWithPrefix();
      const pane = wall.pane(id);
      const iframe = pane.locator('iframe[data-testid=browser-frame]');
      await typeUrl(wall, `127.0.0.1:${site.port}/slow.html`);
      await expect.poll(site.held).toBe(1);
      await expect(pane.getByTestId('browser-progress')).toBeVisible();
      // DESIGN §4: transparent until the first load or 1 s; the response is still held, so the timer did it.
      await expect(iframe).toHaveCSS('visibility', 'visible');
      expect(site.held()).toBe(1);
      site.release();
      await expect(frameOf(page, id).locator('#h')).toHaveText('slow');
      await expect(pane.getByTestId('browser-progress')).toHaveCount(0);
      await expect(pane.getByTestId('browser-url')).toHaveAttribute('title', 'Slow page');

      // The URL field opens with its whole text selected.
      await pane.getByTestId('browser-url').click();
      const input = pane.getByTestId('browser-url-input');
      await expect(input).toBeFocused();
      const sel = await input.evaluate((el: HTMLInputElement) => [el.selectionStart, el.selectionEnd, el.value.length]);
      expect(sel[2]).toBeGreaterThan(0);
      expect(sel).toEqual([0, sel[2], sel[2]]);
      // Navigating on: while the new page is held, the old page's title is gone and the bar shows.
      await input.fill(`127.0.0.1:${site.port}/slow2.html`);
      await input.press('Enter');
      await expect.poll(site.held).toBe(1);
      await expect(pane.getByTestId('browser-progress')).toBeVisible();
      await expect(pane.getByTestId('browser-url')).toHaveText(`127.0.0.1:${site.port}/slow2.html`);
      await expect(pane.getByTestId('browser-url')).toHaveAttribute('title', `http://127.0.0.1:${site.port}/slow2.html`);
      site.release();
      await expect(frameOf(page, id).locator('#h')).toHaveText('slow2');
      await expect(pane.getByTestId('browser-url')).toHaveAttribute('title', 'Slow again');
      await expect(pane.getByTestId('browser-progress')).toHaveCount(0);

      // A fast page in a new pane: already visible when its load event reaches the app.
      await wall.waitKeyboardFocus();
      const fast = await wall.openBrowserWithPrefix();
      await page.locator(`[data-pane-id="${fast}"] iframe[data-testid=browser-frame]`).evaluate((f) => {
        f.addEventListener('load', () => {
          (window as any).__visAtLoad = getComputedStyle(f).visibility;
        });
      });
      await typeUrl(wall, `127.0.0.1:${site.port}/`);
      await expect(frameOf(page, fast).locator('#h')).toHaveText('home');
      await expect.poll(() => page.evaluate(() => (window as any).__visAtLoad)).toBe('visible');
    } finally {
      site.release();
      await site.close();
    }
  });

  test('a link clicked inside the frame to a slow page: the loading bar runs and the old title goes until it arrives', async ({ wall, page }) => {
    const site = await servePages({
      '/': '<!doctype html><html><head><title>Start page</title></head><body><h1 id="h">start</h1><a id="go" href="/slow-next.html">next</a></body></html>',
      '/slow-next.html': '<!doctype html><html><head><title>Next page</title></head><body><h1 id="h">next</h1></body></html>',
    });
    try {
      const id = await wall.openBrowserWithPrefix();
      const pane = wall.pane(id);
      await typeUrl(wall, `127.0.0.1:${site.port}/`);
      await expect(frameOf(page, id).locator('#h')).toHaveText('start');
      await expect(pane.getByTestId('browser-url')).toHaveAttribute('title', 'Start page');
      await expect(pane.getByTestId('browser-progress')).toHaveCount(0);
      // The parent cannot see this navigation start: only the shim's `navigating` tells it.
      await frameOf(page, id).locator('#go').click();
      await expect.poll(site.held).toBe(1);
      await expect(pane.getByTestId('browser-progress')).toBeVisible();
      await expect(pane.getByTestId('browser-url')).toHaveAttribute('title', `http://127.0.0.1:${site.port}/`);
      expect(site.held()).toBe(1);
      site.release();
      await expect(frameOf(page, id).locator('#h')).toHaveText('next');
      await expect(pane.getByTestId('browser-url')).toHaveAttribute('title', 'Next page');
      await expect(pane.getByTestId('browser-url')).toHaveText(`127.0.0.1:${site.port}/slow-next.html`);
      await expect(pane.getByTestId('browser-progress')).toHaveCount(0);
    } finally {
      site.release();
      await site.close();
    }
  });

  test('a narrow pane gives the URL field room, a refusal spans the pane, and the banner takes its own row until dismissed', async ({ wall, page }) => {
    await page.setViewportSize({ width: 700, height: 600 });
    const { term, port } = await pythonServer(wall, {
      'index.html': '<!doctype html><html><head><title>Narrow</title></head><body style="margin:0"><h1 id="py">served by python</h1></body></html>\n',
      'notes.txt': 'first line of plain text\n',
    });
    const id = await wall.openBrowserWithPrefix();
    const pane = wall.pane(id);
    await typeUrl(wall, `127.0.0.1:${port}`);
    await expect(frameOf(page, id).locator('#py')).toHaveText('served by python', { timeout: 20_000 });
    // The terminal serves the port: the chip is there, as a dot.
    await expect(pane.getByTestId('dev-server-chip')).toBeVisible();
    await expect(pane.locator('.dev-chip-label')).toBeHidden();
    const paneBox = (await pane.boundingBox())!;
    expect(paneBox.width).toBeLessThan(400);
    const urlBox = (await pane.getByTestId('browser-url').boundingBox())!;
    expect(urlBox.width).toBeGreaterThan(paneBox.width * 0.4);

    await pane.getByTestId('browser-url').click();
    await pane.getByTestId('browser-url-input').fill('file:///etc/passwd');
    await pane.getByTestId('browser-url-input').press('Enter');
    const error = pane.getByTestId('browser-url-error');
    await expect(error).toContainText("file: URLs can't be opened");
    expect((await error.boundingBox())!.width).toBeGreaterThan(paneBox.width * 0.9);
    await pane.getByTestId('browser-url-input').press('Escape');

    // A page the proxy cannot instrument: the banner sits above the frame, not over it.
    await pane.getByTestId('browser-url').click();
    await typeUrl(wall, `127.0.0.1:${port}/notes.txt`);
    const banner = pane.getByTestId('browser-banner');
    await expect(banner).toBeVisible({ timeout: 10_000 });
    const bodyBox = (await pane.getByTestId('browser-body').boundingBox())!;
    const bannerBox = (await banner.boundingBox())!;
    const frameBox = (await pane.locator('iframe[data-testid=browser-frame]').boundingBox())!;
    expect(bannerBox.y).toBeLessThan(bodyBox.y + 1);
    expect(frameBox.y).toBeGreaterThanOrEqual(bannerBox.y + bannerBox.height - 1);
    expect(frameBox.y + frameBox.height).toBeLessThanOrEqual(bodyBox.y + bodyBox.height + 1);
    await pane.getByTestId('browser-banner-dismiss').click();
    await expect(banner).toHaveCount(0);
    await expect.poll(async () => (await pane.locator('iframe[data-testid=browser-frame]').boundingBox())!.y).toBeLessThan(bodyBox.y + 1);
    await expect(frameOf(page, id).locator('body')).toContainText('first line of plain text');
    await wall.click(term);
    await page.keyboard.press('Control+c');
  });
});

// Proxy grants under open panes, against a sidecar of its own whose grants expire after 2 s
// idle (the test-only PORTHOLE_PROXY_GRANT_TTL_MS, protocol §6.3); the app re-asks every
// 300 ms (its test-only `?grantKeepaliveMs`).
plain.describe('proxy grants under open panes', () => {
  let s: Sidecar;
  plain.beforeAll(async () => {
    s = await startSidecar({ name: 'grants', env: { PORTHOLE_PROXY_GRANT_TTL_MS: '2000' } });
  });
  plain.afterAll(async () => {
    await s?.stop();
  });

  plain('a static page left open keeps its grant, and a lost grant is replaced under the page it was on', async ({ page }) => {
    plain.setTimeout(90_000);
    const site = await servePages({
      '/': '<!doctype html><html><head><title>Static home</title></head><body><h1 id="h">home</h1><a id="next" href="/next.html">next</a></body></html>',
      '/next.html': '<!doctype html><html><head><title>Static next</title></head><body><h1 id="h">next</h1><a id="home" href="/">home</a></body></html>',
    });
    try {
      const { url } = await s.call('POST', '/api/login-codes');
      await page.goto(new URL(url, s.url).toString());
      await page.goto(new URL('/?grantKeepaliveMs=300', s.url).toString());
      await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
      const wall = new Wall(page);
      await wall.waitOpen(1);
      const [term] = await wall.paneIds();
      await wall.click(term);
      await wall.type('echo touched\n');
      const id = await wall.openBrowserWithPrefix();
      const pane = wall.pane(id);
      const upstream = `http://127.0.0.1:${site.port}`;
      await typeUrl(wall, `127.0.0.1:${site.port}`);
      await expect(frameOf(page, id).locator('#h')).toHaveText('home');
      const grantOf = async () => ((await s.call('GET', '/api/proxy/grants')).grants as any[]).find((g) => g.upstream === upstream);
      const first = await grantOf();
      expect(first.origin).toBe(await frameSrcOrigin(page, id));

      // A control grant nobody uses, made after the page's last request: when the sidecar has
      // expired it, a grant kept alive only by the page's own requests would be gone too.
      const control = await s.call('POST', '/api/proxy/grants', { url: 'http://127.0.0.1:9/' });
      await expect
        .poll(async () => ((await s.call('GET', '/api/proxy/grants')).grants as any[]).some((g) => g.grant === control.grant), { timeout: 30_000 })
        .toBe(false);
      expect((await grantOf())?.grant).toBe(first.grant);
      await frameOf(page, id).locator('#next').click();
      await expect(frameOf(page, id).locator('#h')).toHaveText('next');
      await expect(pane.getByTestId('browser-url')).toHaveText(`127.0.0.1:${site.port}/next.html`);

      // The grant goes away under the pane (as after a sleep past the TTL): the pane moves to
      // the new grant and reloads the page it was on; the shim's reports from it are accepted.
      await s.call('DELETE', `/api/proxy/grants/${first.grant}`);
      await expect.poll(() => frameSrcOrigin(page, id), { timeout: 20_000 }).not.toBe(first.origin);
      const second = await grantOf();
      expect(second.grant).not.toBe(first.grant);
      expect(await frameSrcOrigin(page, id)).toBe(second.origin);
      await expect(frameOf(page, id).locator('#h')).toHaveText('next');
      await expect(pane.getByTestId('browser-url')).toHaveText(`127.0.0.1:${site.port}/next.html`);
      await frameOf(page, id).locator('#home').click();
      await expect(frameOf(page, id).locator('#h')).toHaveText('home');
      await expect(pane.getByTestId('browser-url')).toHaveText(`127.0.0.1:${site.port}`);
      await expect(pane.getByTestId('browser-url')).toHaveAttribute('title', 'Static home');
    } finally {
      await site.close();
    }
  });
});
