// The config file (DESIGN §14, docs/config.md) applied live: a font size saved in
// config.toml re-renders every terminal without a reload; a broken file shows a banner with
// its file, line and column while the last good config stays; fixing it clears the banner.
// A sidecar of its own, so the shared one's config stays untouched.
import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { type Sidecar, startSidecar } from '../sidecar';
import { Wall, openScreencast, withServedPage } from './fixtures';

let s: Sidecar;
test.beforeEach(async () => {
  s = await startSidecar({ name: 'config' });
});
test.afterEach(async () => {
  await s?.stop();
});

/** Saves the config the way editors do: a temp file renamed over the old one. */
function save(text: string) {
  fs.mkdirSync(s.config, { recursive: true });
  const tmp = path.join(s.config, '.config.toml.tmp');
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, path.join(s.config, 'config.toml'));
}

test('a font size saved in config.toml re-renders the terminal live; a broken file shows where, fixing it clears it', async ({ page }) => {
  test.setTimeout(90_000);
  const { url } = await s.call('POST', '/api/login-codes');
  await page.goto(new URL(url, s.url).toString());
  await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
  const wall = new Wall(page);
  await wall.waitOpen(1);
  const [id] = await wall.paneIds();
  const font = () => page.evaluate((id) => (window as any).__porthole.paneFontSize(id), id);
  const size = () => page.evaluate((id) => (window as any).__porthole.paneSize(id), id);
  expect(await font()).toBe(13);
  const before = await size();
  // Marks this document: a reload would lose it.
  await page.evaluate(() => ((window as any).__sameDocument = true));

  save('[font]\nsize = 26\n');
  await expect.poll(font, { timeout: 15_000 }).toBe(26);
  // Bigger cells: the terminal refitted to fewer columns and rows.
  await expect.poll(async () => (await size()).cols, { timeout: 15_000 }).toBeLessThan(before.cols);
  expect((await size()).rows).toBeLessThan(before.rows);
  await wall.click(id);
  await wall.type('echo still-typing\n');
  await wall.waitText(id, /^still-typing$/m);

  save('[font]\nsize = 20\nfamily = "unterminated\n');
  const banner = page.getByTestId('config-banner');
  await expect(banner).toBeVisible({ timeout: 15_000 });
  await expect(banner).toContainText(`${path.join(s.config, 'config.toml')}:3:23:`);
  expect(await font()).toBe(26); // the last good config stays in force

  save('[font]\nsize = 200\n');
  await expect(banner).toContainText('config.toml:2:8:', { timeout: 15_000 });
  await expect(banner).toContainText('font.size must be 6..=72');

  save('[font]\nsize = 16\n');
  await expect(banner).toHaveCount(0, { timeout: 15_000 });
  await expect.poll(font, { timeout: 15_000 }).toBe(16);
  expect(await page.evaluate(() => (window as any).__sameDocument)).toBe(true);
});

test('a rebound prefix and key apply live', async ({ page }) => {
  test.setTimeout(90_000);
  const { url } = await s.call('POST', '/api/login-codes');
  await page.goto(new URL(url, s.url).toString());
  await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
  const wall = new Wall(page);
  await wall.waitOpen(1);
  const [id] = await wall.paneIds();
  save('[keys]\nprefix = "C-a"\n[keys.bindings]\nsplit-right = "|"\n');
  await expect.poll(() => page.evaluate(() => (window as any).__porthole.store.settings.config.prefixLetter), { timeout: 15_000 }).toBe('a');
  // Where the keys are printed, the rebound ones show.
  await expect(page.getByTestId('prefix-indicator')).toContainText('Ctrl-a');
  await expect(page.locator('.baseboard-hint')).toContainText('Ctrl-a | split right');
  await expect(wall.pane(id).getByTestId('pane-split-right')).toHaveAttribute('title', 'Split right (Ctrl-a |)');
  await wall.click(id);
  await page.keyboard.press('Control+a');
  await page.keyboard.press('Shift+Backslash'); // "|"
  await wall.waitOpen(2);
  // The old prefix is an ordinary key again: Ctrl-b reaches the shell, no split follows.
  await page.keyboard.press('Control+b');
  await page.keyboard.press('Shift+Digit5');
  await expect(wall.panes()).toHaveCount(2);
});

test('a framed page guards the rebound prefix live, and the old one becomes the page’s own key', async ({ page }) => {
  test.setTimeout(90_000);
  const html = `<!doctype html><html><head><title>Keys</title></head><body><input id=i autocomplete=off>
<script>window.seen = []; addEventListener('keydown', function (e) { seen.push((e.ctrlKey ? 'C-' : '') + e.key) });</script></body></html>`;
  await withServedPage(page, s, html, async (wall, port) => {
    // A touched terminal stays beside the browser pane (an untouched one is replaced).
    await wall.click((await wall.paneIds())[0]);
    await wall.type('echo touched\n');
    const id = await wall.openBrowserWithPrefix();
    const input = page.locator('[data-testid=pane][data-focused=true] [data-testid=browser-url-input]');
    await input.fill(`127.0.0.1:${port}/`);
    await input.press('Enter');
    const frame = page.frameLocator(`[data-testid=pane][data-pane-id="${id}"] iframe[data-testid=browser-frame]`);
    await expect(frame.locator('#i')).toBeVisible();
    // Rebound while the page stays loaded: the page is told, no reload.
    save('[keys]\nprefix = "C-a"\n');
    await expect.poll(() => page.evaluate(() => (window as any).__porthole.store.settings.config.prefixLetter), { timeout: 15_000 }).toBe('a');
    await frame.locator('#i').click();
    await page.keyboard.type('x');
    await page.keyboard.press('Control+a');
    await page.keyboard.press('Shift+Digit5');
    await wall.waitOpen(3);
    const seen = () => frame.locator('body').evaluate(() => (window as any).seen as string[]);
    expect((await seen()).filter((k) => k === 'C-a' || k === '%')).toEqual([]);
    // Ctrl-b is the page's own key now: it reaches the page, and no split follows.
    await frame.locator('#i').click();
    await page.keyboard.press('Control+b');
    await page.keyboard.press('Shift+Digit5');
    await expect.poll(async () => (await seen()).filter((k) => k === 'C-b' || k === '%')).toEqual(['C-b', '%']);
    await expect(wall.panes()).toHaveCount(3);
    await expect(frame.locator('#i')).toHaveValue('x%');
  });
});

test('the Display menu offers the sidecar’s presets: built-in, then the config’s, a same-named one replacing it live', async ({ page }) => {
  test.setTimeout(90_000);
  await withServedPage(page, s, '<!doctype html><title>Presets</title><h1>Presets</h1>', async (wall, port) => {
    const { id } = await openScreencast(wall, `127.0.0.1:${port}/`);
    const pane = wall.pane(id);
    const names = async () => {
      await pane.getByTestId('browser-display').click();
      const items = pane.locator('[data-testid^="viewport-"][role=menuitemradio]:not([data-testid="viewport-pane"])');
      const out = (await items.allTextContents()).map((t) => t.replace(/^✓/, '').trim());
      await page.keyboard.press('Escape');
      return out;
    };
    expect(await names()).toEqual(['Desktop 1440×900 @1x', 'Laptop 1280×800 @1x', 'Tablet 820×1180 @2x', 'Phone 390×844 @3x']);
    save('[[browser.viewports]]\nname = "Phone"\nwidth = 400\nheight = 700\ndpr = 2\n\n[[browser.viewports]]\nname = "Kiosk"\nwidth = 1080\nheight = 1920\n');
    await expect
      .poll(names, { timeout: 15_000 })
      .toEqual(['Desktop 1440×900 @1x', 'Laptop 1280×800 @1x', 'Tablet 820×1180 @2x', 'Phone 400×700 @2x', 'Kiosk 1080×1920 @1x']);
  });
});
