// Browser panes at the narrow widths a tiling wall produces (issue 3): the header keeps the
// URL field usable, the "can't follow" banner stays one line with its actions inside the
// pane, and a blocked address typed in an iframe pane is refused under the field with the
// pane left as it was. The page comes from an HTTP server this test starts. At the layout's
// minimum (80 px), terminal and browser panes keep every header action reachable through
// the "⋯" menu (issue 12 item 17).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Locator } from '@playwright/test';
import { type Wall, api, expect, test } from './fixtures';

/** Serves `/` as HTML (with a target=_blank link to a blocked address) and `/notes.txt` as plain text (which the proxy cannot instrument). */
async function startSite(): Promise<{ origin: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.url === '/notes.txt') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('first line of plain text\n');
    } else {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><html><head><title>Narrow</title></head><body><h1 id="home">home page</h1><a id="meta" href="https://[::ffff:169.254.169.254]/" target="_blank">metadata</a></body></html>');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { origin: `127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Opens a browser pane with the prefix; it replaces the untouched terminal, so it fills the wall. */
async function openBrowser(wall: Wall): Promise<string> {
  await wall.page.keyboard.press('Control+b');
  await wall.page.keyboard.press('b');
  const input = wall.page.locator('[data-testid=pane][data-focused=true] [data-testid=browser-url-input]');
  await expect(input).toBeFocused();
  await expect(wall.panes()).toHaveCount(1);
  return wall.focusedId();
}

async function typeUrl(pane: Locator, url: string) {
  const input = pane.getByTestId('browser-url-input');
  await expect(input).toBeFocused();
  await input.fill(url);
  await input.press('Enter');
}

type Box = { x: number; y: number; width: number; height: number };
const box = async (l: Locator): Promise<Box> => (await l.boundingBox())!;
const inside = (b: Box, outer: Box) =>
  b.width > 0 && b.x >= outer.x - 0.5 && b.y >= outer.y - 0.5 && b.x + b.width <= outer.x + outer.width + 0.5 && b.y + b.height <= outer.y + outer.height + 0.5;

test.describe('narrow browser panes', () => {
  test('at ~170 and ~260 px the URL field stays usable and the banner is one line with its dismiss button in the pane', async ({ wall, page }) => {
    await page.setViewportSize({ width: 700, height: 500 });
    const site = await startSite();
    try {
      await wall.click((await wall.paneIds())[0]);
      const id = await openBrowser(wall);
      const pane = wall.pane(id);
      await typeUrl(pane, `${site.origin}/notes.txt`);
      const banner = pane.getByTestId('browser-banner');
      await expect(banner).toBeVisible({ timeout: 20_000 });
      await expect(page.frameLocator(`[data-pane-id="${id}"] iframe[data-testid=browser-frame]`).locator('body')).toContainText('first line of plain text');
      const text = pane.getByTestId('browser-banner-text');
      // The whole text stays reachable: as the tooltip, and by a click that expands it.
      await expect(text).toHaveAttribute('title', /can't follow this page.*Back\/Forward reload the frame/);

      for (const [viewport, minPane, maxPane, minUrl] of [
        [180, 150, 180, 72],
        [270, 240, 270, 120],
      ] as const) {
        await page.setViewportSize({ width: viewport, height: 500 });
        // Wait for the new layout: the width must land inside the range, not just under its top.
        await expect
          .poll(async () => {
            const w = (await box(pane)).width;
            return w >= minPane && w <= maxPane;
          })
          .toBe(true);
        const paneBox = await box(pane);
        const url = pane.getByTestId('browser-url');
        await expect(url).toHaveText(`${site.origin}/notes.txt`);
        expect((await box(url)).width).toBeGreaterThanOrEqual(minUrl);
        // Every header button still shown lies inside the pane (none clipped off its right edge).
        for (const b of await pane.locator('header button:visible').all()) expect(inside(await box(b), paneBox)).toBe(true);
        await expect(pane.getByTestId('pane-close')).toBeVisible();
        await expect(pane.getByTestId('browser-display')).toBeVisible();

        // The banner: one compact line, its text cut, its buttons inside the pane.
        const bannerBox = await box(banner);
        expect(bannerBox.height).toBeLessThanOrEqual(32);
        expect(await text.evaluate((e) => e.scrollWidth > e.clientWidth)).toBe(true);
        const dismiss = pane.getByTestId('browser-banner-dismiss');
        expect(inside(await box(dismiss), paneBox)).toBe(true);
        expect(inside(await box(pane.getByTestId('browser-banner-reload')), paneBox)).toBe(true);
        // The frame gets the rest of the body.
        const bodyBox = await box(pane.getByTestId('browser-body'));
        const frameBox = await box(pane.locator('iframe[data-testid=browser-frame]'));
        expect(frameBox.height).toBeGreaterThan(bodyBox.height - bannerBox.height - 2);
        await page.screenshot({ path: `/tmp/narrow-shots/pane-${Math.round(paneBox.width)}.png` });

        // The Display menu stays inside the pane (which clips what overflows it).
        await pane.getByTestId('browser-display').click();
        const menu = pane.getByTestId('browser-display-menu');
        await expect(menu).toBeVisible();
        expect((await box(menu)).width).toBeGreaterThan(paneBox.width - 16);
        expect(inside(await box(menu.getByTestId('display-screencast')), paneBox)).toBe(true);
        expect(inside(await box(menu.getByTestId('display-iframe')), paneBox)).toBe(true);
        await page.screenshot({ path: `/tmp/narrow-shots/pane-${Math.round(paneBox.width)}-display.png` });
        await page.keyboard.press('Escape');
        await expect(menu).toHaveCount(0);

        // Editing takes the whole header row.
        await url.click();
        const input = pane.getByTestId('browser-url-input');
        await expect(input).toBeFocused();
        expect((await box(input)).width).toBeGreaterThan(paneBox.width - 24);
        await page.screenshot({ path: `/tmp/narrow-shots/pane-${Math.round(paneBox.width)}-editing.png` });
        await input.press('Escape');
        await expect(input).toHaveCount(0);
        await expect(pane.getByTestId('pane-close')).toBeVisible();
      }

      // A click on the text expands it (wrapped, taller); another folds it back.
      const oneLine = (await box(banner)).height;
      await text.click();
      await expect(text).toHaveAttribute('aria-expanded', 'true');
      await expect.poll(async () => (await box(banner)).height).toBeGreaterThan(oneLine * 2);
      await text.click();
      await expect.poll(async () => (await box(banner)).height).toBe(oneLine);

      // The dismiss button is clickable at this width (not covered): the banner goes, the frame moves up.
      await pane.getByTestId('browser-banner-dismiss').click();
      await expect(banner).toHaveCount(0);
    } finally {
      await site.close();
    }
  });

  test('a blocked address typed in an iframe pane is refused under the field, the pane unchanged; one the sidecar refuses reads as refused, also at ~170 px', async ({ wall, page }) => {
    await page.setViewportSize({ width: 900, height: 600 });
    const site = await startSite();
    try {
      await wall.click((await wall.paneIds())[0]);
      const id = await openBrowser(wall);
      const pane = wall.pane(id);
      await typeUrl(pane, site.origin);
      await expect(page.frameLocator(`[data-pane-id="${id}"] iframe[data-testid=browser-frame]`).locator('#home')).toHaveText('home page', { timeout: 20_000 });
      await expect(pane).toHaveAttribute('data-mode', 'iframe');

      for (const [typed, shown] of [
        ['[::ffff:169.254.169.254]', '[::ffff:a9fe:a9fe]'],
        ['http://0xa9fea9fe/latest/meta-data', '169.254.169.254'],
      ]) {
        await pane.getByTestId('browser-url').click();
        await typeUrl(pane, typed);
        const error = pane.getByTestId('browser-url-error');
        await expect(error).toHaveText(`${shown} is a link-local or cloud-metadata address: Porthole doesn't open those`);
        await expect(pane.getByTestId('browser-url-input')).toBeFocused();
        // Nothing changed: still embedded, no Chromium, no error panel, the page still there.
        await expect(pane).toHaveAttribute('data-mode', 'iframe');
        await expect(pane).not.toHaveAttribute('data-browser-id', /.+/);
        await expect(pane.getByTestId('browser-error-panel')).toHaveCount(0);
        await pane.getByTestId('browser-url-input').press('Escape');
        await expect(pane.getByTestId('browser-url')).toHaveText(site.origin);
        await expect(page.frameLocator(`[data-pane-id="${id}"] iframe[data-testid=browser-frame]`).locator('#home')).toHaveText('home page');
      }
      // The sidecar refuses the same address (the field only asks first): 403 blocked_address.
      await expect(api('POST', '/api/browsers', { url: 'https://[::ffff:169.254.169.254]/' })).rejects.toThrow(/403 .*blocked_address/);

      // The page asks for a window at that address: the new (screencast) pane gets the sidecar's
      // refusal and says the address is refused, not that Chromium failed to start.
      await page.frameLocator(`[data-pane-id="${id}"] iframe[data-testid=browser-frame]`).locator('#meta').click();
      await pane.getByTestId('browser-prompt-accept').click();
      await expect(wall.panes()).toHaveCount(2);
      const other = wall.pane(await wall.focusedId());
      await expect(other).toHaveAttribute('data-mode', 'screencast');
      const panel = other.getByTestId('browser-error-panel');
      await expect(panel).toContainText('Porthole refuses this address: ::ffff:169.254.169.254 is a link-local or cloud-metadata address');
      await expect(panel).not.toContainText('Chromium');
      await expect(other).not.toHaveAttribute('data-browser-id', /.+/);
      // Side by side at ~170 px each, the panel's text and button stay inside the pane.
      await page.setViewportSize({ width: 360, height: 600 });
      await expect.poll(async () => (await box(other)).width).toBeLessThan(180);
      const otherBox = await box(other);
      expect(inside(await box(panel.getByTestId('browser-error-retry')), otherBox)).toBe(true);
      expect(await panel.evaluate((e) => e.scrollWidth <= e.clientWidth)).toBe(true);
      await page.screenshot({ path: '/tmp/narrow-shots/refused-side-by-side.png' });
    } finally {
      await site.close();
    }
  });
});

test.describe('panes at the 80 px minimum', () => {
  test('the header buttons that do not fit are in the "⋯" menu, for terminal and browser panes', async ({ wall, page }) => {
    await page.setViewportSize({ width: 900, height: 500 });
    const site = await startSite();
    try {
      const [term] = await wall.paneIds();
      await wall.click(term);
      await wall.type('echo touched\n');
      await wall.waitText(term, /^touched$/m);
      // A browser pane beside the (touched) terminal, on a page, so Back/Forward/Reload are live.
      await wall.page.keyboard.press('Control+b');
      await wall.page.keyboard.press('b');
      const id = await wall.focusedId();
      const browser = wall.pane(id);
      await typeUrl(browser, site.origin);
      await expect(page.frameLocator(`[data-pane-id="${id}"] iframe[data-testid=browser-frame]`).locator('#home')).toHaveText('home page', { timeout: 20_000 });
      // Wide: every button in the header, no "⋯".
      await expect(wall.pane(term).getByTestId('pane-more')).toBeHidden();
      await expect(browser.getByTestId('pane-more')).toBeHidden();

      // Two panes side by side at the minimum: (178 − 2 × 6 margin − 6 gap) / 2 = 80 px each.
      await page.setViewportSize({ width: 178, height: 500 });
      for (const p of [wall.pane(term), browser]) {
        await expect.poll(async () => Math.round((await box(p)).width)).toBe(80);
        const paneBox = await box(p);
        const more = p.getByTestId('pane-more');
        await expect(more).toBeVisible();
        // Whatever the header still shows lies inside the pane.
        for (const b of await p.locator('header button:visible').all()) expect(inside(await box(b), paneBox)).toBe(true);
      }
      await page.screenshot({ path: '/tmp/narrow-shots/panes-80.png' });

      const menu = page.getByTestId('pane-more-menu');
      const labels = async () => menu.getByRole('menuitem').allTextContents();
      const viewport = { x: 0, y: 0, width: 178, height: 500 };

      await wall.pane(term).getByTestId('pane-more').click();
      await expect(menu).toBeVisible();
      expect(await labels()).toEqual(['Split right (Ctrl-b %)', 'Split down (Ctrl-b ")', 'Open a browser pane (Ctrl-b b)', 'Zoom (Ctrl-b z)', 'Minimize (Ctrl-b m)', 'Close (Ctrl-b x)']);
      for (const item of await menu.getByRole('menuitem').all()) {
        await expect(item).toBeEnabled();
        expect(inside(await box(item), viewport)).toBe(true);
      }
      await page.screenshot({ path: '/tmp/narrow-shots/panes-80-terminal-menu.png' });
      // Escape closes it; a choice runs the action as its button does.
      await page.keyboard.press('Escape');
      await expect(menu).toHaveCount(0);
      await wall.pane(term).getByTestId('pane-more').click();
      await menu.getByTestId('more-pane-minimize').click();
      await expect(menu).toHaveCount(0);
      await expect(wall.pane(term)).toHaveAttribute('data-visible', 'false');
      await page.getByTestId('baseboard-chip').click();
      await expect(wall.pane(term)).toHaveAttribute('data-visible', 'true');

      await expect.poll(async () => Math.round((await box(browser)).width)).toBe(80);
      await browser.getByTestId('pane-more').click();
      await expect(menu).toBeVisible();
      expect(await labels()).toEqual([
        'Back',
        'Forward',
        'Reload',
        'Open another browser pane (Ctrl-b b)',
        'Zoom (Ctrl-b z)',
        'Minimize (Ctrl-b m)',
        'Close (Ctrl-b x)',
      ]);
      for (const item of await menu.getByRole('menuitem').all()) expect(inside(await box(item), viewport)).toBe(true);
      await page.screenshot({ path: '/tmp/narrow-shots/panes-80-browser-menu.png' });
      // Zoom from the menu; the zoomed pane (wider) still offers Unzoom.
      await menu.getByTestId('more-pane-zoom').click();
      await expect(wall.visiblePanes()).toHaveCount(1);
      await browser.getByTestId('pane-more').click();
      await menu.getByRole('menuitem', { name: 'Unzoom (Ctrl-b z)' }).click();
      await expect(wall.visiblePanes()).toHaveCount(2);
      // Close from the menu.
      await expect.poll(async () => Math.round((await box(browser)).width)).toBe(80);
      await browser.getByTestId('pane-more').click();
      await menu.getByTestId('more-pane-close').click();
      await expect(browser).toHaveCount(0);
      await expect(wall.panes()).toHaveCount(1);
    } finally {
      await site.close();
    }
  });
});
