// Browser panes in the iframe render mode, against real dev servers started in a terminal
// pane: a Vite dev server (installed from the npm registry into target/e2e-cache on first
// use) and python3 -m http.server. Nothing here reaches the internet: the https:// case is
// refused before any request is made.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Frame, Page } from '@playwright/test';
import { type Wall, api, expect, test } from './fixtures';

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

/** Opens a browser pane with the prefix from the focused pane and returns its id (its URL field is focused). */
async function openBrowserWithPrefix(wall: Wall): Promise<string> {
  const before = new Set(await wall.paneIds());
  await wall.page.keyboard.press('Control+b');
  await wall.page.keyboard.press('b');
  const input = wall.page.locator('[data-testid=pane][data-focused=true] [data-testid=browser-url-input]');
  await expect(input).toBeFocused();
  const id = await wall.focusedId();
  expect(before.has(id)).toBe(false);
  await expect(wall.pane(id)).toHaveAttribute('data-kind', 'browser');
  return id;
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
    const id = await openBrowserWithPrefix(wall);
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
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'porthole-http-'));
    fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><html><head><title>Python fixture</title></head><body><h1 id="py">served by python</h1></body></html>\n');
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'plain text, no shim here\n');
    const port = await freePort();
    const [term] = await wall.paneIds();
    await wall.click(term);
    await wall.type(`cd ${dir} && python3 -m http.server ${port} --bind 127.0.0.1\n`);
    await wall.waitText(term, /Serving HTTP/);
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
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'porthole-http-'));
    fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><html><head><title>Keep me</title></head><body><h1 id="k">keep</h1></body></html>\n');
    const port = await freePort();
    const [term] = await wall.paneIds();
    await wall.click(term);
    await wall.type(`cd ${dir} && python3 -m http.server ${port} --bind 127.0.0.1\n`);
    await wall.waitText(term, /Serving HTTP/);
    const id = await openBrowserWithPrefix(wall);
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
    const id = await openBrowserWithPrefix(wall);
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
    const second = await openBrowserWithPrefix(wall);
    await expect(wall.panes()).toHaveCount(2);
    await expect(wall.pane(id)).toHaveAttribute('data-kind', 'browser');
    expect(second).not.toBe(id);
  });

  test('file:// and other schemes are refused under the field; Escape discards', async ({ wall, page }) => {
    const [term] = await wall.paneIds();
    await wall.click(term);
    await wall.type('echo touched\n');
    const id = await openBrowserWithPrefix(wall);
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
});
