// Screencast panes against the real sidecar and a real headless Chromium: a local page served
// by this test, frames on the canvas, clicks/typing/<select> through the pane, mode switches,
// parking on minimize, and the browser deleted with the pane.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { api, expect, near, openScreencast as openIn, pixelAt, pointOf, test, type Wall } from './fixtures';

/** Opens this spec's page in a new screencast pane. */
const openScreencast = (wall: Wall) => openIn(wall, `${origin}/`);

// The page's layout is fixed so the test can compute where things are (page CSS px).
const BUTTON = { x: 20, y: 20, w: 200, h: 100 };
const INPUT = { x: 20, y: 150, w: 300, h: 40 };
const SELECT = { x: 20, y: 220, w: 200, h: 30 };
const ASK = { x: 260, y: 20, w: 150, h: 100 };
const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>start</title><style>
body { margin: 0; background: rgb(255, 255, 255); font: 16px sans-serif; }
#btn { position: absolute; left: ${BUTTON.x}px; top: ${BUTTON.y}px; width: ${BUTTON.w}px; height: ${BUTTON.h}px; background: rgb(0, 0, 255); color: #fff; border: 0; }
#inp { position: absolute; left: ${INPUT.x}px; top: ${INPUT.y}px; width: ${INPUT.w}px; height: ${INPUT.h}px; box-sizing: border-box; }
#sel { position: absolute; left: ${SELECT.x}px; top: ${SELECT.y}px; width: ${SELECT.w}px; height: ${SELECT.h}px; }
#ask { position: absolute; left: ${ASK.x}px; top: ${ASK.y}px; width: ${ASK.w}px; height: ${ASK.h}px; background: rgb(200, 0, 0); color: #fff; border: 0; }
h1 { position: absolute; left: 20px; top: 280px; margin: 0; }
</style></head><body>
<button id="btn" onclick="document.title='clicked'; document.body.style.background='rgb(0, 200, 0)'">Press me</button>
<input id="inp" oninput="document.title='typed:' + this.value">
<select id="sel" onchange="document.title='chose:' + this.value"><option value="a">Alpha</option><option value="b">Beta</option><option value="c">Gamma</option></select>
<button id="ask" onclick="document.title='confirmed:' + confirm('Proceed?')">Ask</button>
<h1>Hello from a screencast</h1>
</body></html>`;

let server: http.Server;
let origin = '';

test.beforeAll(async () => {
  server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(PAGE);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
test.afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

test.describe('screencast panes', () => {
  test('frames, click, typing, <select>, iframe round trip, parking, delete', async ({ wall, page }) => {
    test.setTimeout(120_000);
    await page.setViewportSize({ width: 1280, height: 720 });
    const viewerSockets: { url: string; closed: boolean }[] = [];
    page.on('websocket', (ws) => {
      if (!ws.url().includes('/viewer/')) return;
      const rec = { url: ws.url(), closed: false };
      viewerSockets.push(rec);
      ws.on('close', () => (rec.closed = true));
    });
    const { id, browser } = await openScreencast(wall);
    const pane = wall.pane(id);
    await expect(pane.getByTestId('browser-url')).toHaveText(`127.0.0.1:${origin.split(':')[2]}`);

    // Frames are painted: the button's blue shows on the canvas.
    await expect.poll(async () => near(await pixelAt(page, id, BUTTON.x + 15, BUTTON.y + 15), [0, 0, 255]), { timeout: 15_000 }).toBe(true);
    expect((await api('GET', `/api/browsers/${browser}`)).title).toBe('start');

    // A click on the button reaches the page; the new background is painted.
    // (Coordinates come from the frame on screen; retried while a frame of an older size shows.)
    await expect(async () => {
      const b = await pointOf(page, id, BUTTON.x + 100, BUTTON.y + 50);
      await page.mouse.click(b.x, b.y);
      await expect.poll(async () => (await api('GET', `/api/browsers/${browser}`)).title, { timeout: 2_000 }).toBe('clicked');
    }).toPass({ timeout: 20_000 });
    await expect.poll(async () => near(await pixelAt(page, id, 600, 20), [0, 200, 0]), { timeout: 15_000 }).toBe(true);

    // The canvas has the keyboard after the click; typing lands in the input.
    const i = await pointOf(page, id, INPUT.x + 50, INPUT.y + 20);
    await page.mouse.click(i.x, i.y);
    await expect(pane.getByTestId('screencast-input')).toBeFocused();
    await page.keyboard.type('hello');
    await expect.poll(async () => (await api('GET', `/api/browsers/${browser}`)).title).toBe('typed:hello');
    await page.keyboard.press('Backspace');
    await expect.poll(async () => (await api('GET', `/api/browsers/${browser}`)).title).toBe('typed:hell');

    // The prefix still works while the screencast has the keyboard (Ctrl-b z zooms).
    await page.keyboard.press('Control+b');
    await page.keyboard.press('z');
    await expect(wall.visiblePanes()).toHaveCount(1);
    await page.keyboard.press('Control+b');
    await page.keyboard.press('z');
    await expect(wall.visiblePanes()).toHaveCount(2);

    // A <select>: the pane draws the list; the choice goes back to the page. (The unzoom just
    // resized the canvas: retried while the frame on screen still has the old fit.)
    const popup = pane.getByTestId('select-popup');
    let s = { x: 0, y: 0 };
    await expect(async () => {
      s = await pointOf(page, id, SELECT.x + 50, SELECT.y + 15);
      await page.mouse.click(s.x, s.y);
      await expect(popup).toBeVisible({ timeout: 5_000 });
    }).toPass({ timeout: 30_000 });
    await expect(popup.getByTestId('select-option')).toHaveText(['Alpha', 'Beta', 'Gamma']);
    await popup.getByTestId('select-option').filter({ hasText: 'Gamma' }).click();
    await expect(popup).toHaveCount(0);
    await expect.poll(async () => (await api('GET', `/api/browsers/${browser}`)).title).toBe('chose:c');
    // By keyboard, like the native list: it opens on the selected option; Up, Enter picks Beta.
    await page.mouse.click(s.x, s.y);
    await expect(popup.getByTestId('select-option').filter({ hasText: 'Gamma' })).toBeFocused();
    await page.keyboard.press('ArrowUp');
    await expect(popup.getByTestId('select-option').filter({ hasText: 'Beta' })).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(popup).toHaveCount(0);
    await expect.poll(async () => (await api('GET', `/api/browsers/${browser}`)).title).toBe('chose:b');

    // Minimize: after 1 s the viewer socket closes (parked); the browser stays alive.
    await pane.getByTestId('pane-minimize').click();
    await expect(pane.locator('.screencast-host')).toHaveAttribute('data-socket', 'parked', { timeout: 5_000 });
    await expect.poll(() => viewerSockets.length > 0 && viewerSockets.every((w) => w.closed)).toBe(true);
    expect((await api('GET', `/api/browsers/${browser}`)).connected).toBe(true);
    const painted = Number(await pane.getByTestId('screencast-canvas').getAttribute('data-painted'));
    // Restore: a new viewer socket, fresh frames painted.
    await page.getByTestId('baseboard-chip').click();
    await expect(pane).toHaveAttribute('data-visible', 'true');
    await expect(pane.locator('.screencast-host')).toHaveAttribute('data-socket', 'open', { timeout: 10_000 });
    expect(viewerSockets.filter((w) => !w.closed).length).toBe(1);
    await expect.poll(async () => Number(await pane.getByTestId('screencast-canvas').getAttribute('data-painted')), { timeout: 15_000 }).toBeGreaterThan(painted);

    // Switch to iframe and back: same pane, same URL.
    await pane.getByTestId('browser-display').click();
    await pane.getByTestId('display-iframe').click();
    await expect(pane).toHaveAttribute('data-mode', 'iframe');
    await expect(pane.getByTestId('browser-url')).toHaveText(`127.0.0.1:${origin.split(':')[2]}`);
    await expect(page.frameLocator(`[data-pane-id="${id}"] iframe`).locator('h1')).toHaveText('Hello from a screencast', { timeout: 15_000 });
    // The old browser was deleted with the screencast renderer.
    await expect.poll(() => api('GET', `/api/browsers/${browser}`).then(() => 'alive', () => 'gone')).toBe('gone');
    await pane.getByTestId('browser-display').click();
    await pane.getByTestId('display-screencast').click();
    await expect(pane).toHaveAttribute('data-mode', 'screencast');
    await expect(pane).toHaveAttribute('data-browser-id', /^b\d+$/, { timeout: 20_000 });
    const second = (await pane.getAttribute('data-browser-id'))!;
    expect(second).not.toBe(browser);
    await expect.poll(async () => (await api('GET', `/api/browsers/${second}`)).url).toBe(`${origin}/`);
    await expect(pane.getByTestId('screencast-canvas')).not.toHaveAttribute('data-frame', '0', { timeout: 20_000 });

    // Closing the pane deletes its browser.
    await pane.getByTestId('pane-close').click();
    await expect(wall.panes()).toHaveCount(1);
    await expect.poll(() => api('GET', `/api/browsers/${second}`).then(() => 'alive', () => 'gone')).toBe('gone');
  });

  test('fixed viewport presets letterbox the page; Custom validates', async ({ wall, page }) => {
    test.setTimeout(90_000);
    await page.setViewportSize({ width: 1280, height: 720 });
    const { id, browser } = await openScreencast(wall);
    const pane = wall.pane(id);
    // The pane's own size has been written first (so the preset is the last write).
    await expect(pane.locator('.screencast-host')).toHaveAttribute('data-sync', 'synced', { timeout: 15_000 });
    await pane.getByTestId('browser-display').click();
    await pane.getByTestId('viewport-phone').click();
    await expect.poll(async () => (await api('GET', `/api/browsers/${browser}`)).viewport).toEqual({ width: 390, height: 844, dpr: 3 });
    // Letterboxed: the frame is narrower than the canvas and centred.
    const canvas = pane.getByTestId('screencast-canvas');
    await expect.poll(async () => Number((await canvas.getAttribute('data-fit'))!.split(',')[0]), { timeout: 15_000 }).toBeGreaterThan(10);
    // At rest, the crisp capture (1170×2532 px) is decoded to the pixels it covers, and again
    // when the pane grows (a page at rest sends no new frame).
    const covered = () =>
      canvas.evaluate((c: HTMLCanvasElement) => {
        const s = Number(c.dataset.fit!.split(',')[2]);
        return { crisp: c.dataset.crisp, height: c.height, covers: Math.round(844 * s * devicePixelRatio) };
      });
    await expect.poll(async () => { const c = await covered(); return c.crisp === 'true' && c.height === c.covers; }, { timeout: 15_000 }).toBe(true);
    const before = (await covered()).height;
    await page.setViewportSize({ width: 1280, height: 900 });
    await expect.poll(async () => { const c = await covered(); return c.height === c.covers && c.height > before; }, { timeout: 15_000 }).toBe(true);
    await pane.getByTestId('browser-display').click();
    await pane.getByTestId('viewport-w').fill('50');
    await pane.getByTestId('viewport-apply').click();
    await expect(pane.getByTestId('viewport-error')).toBeVisible();
    await pane.getByTestId('viewport-w').fill('800');
    await pane.getByTestId('viewport-h').fill('600');
    await pane.getByTestId('viewport-dpr').fill('1');
    await pane.getByTestId('viewport-apply').click();
    await expect.poll(async () => (await api('GET', `/api/browsers/${browser}`)).viewport).toEqual({ width: 800, height: 600, dpr: 1 });
    // Back to Resize with pane: the page takes the body's size.
    await pane.getByTestId('browser-display').click();
    await pane.getByTestId('viewport-pane').click();
    const body = (await canvas.boundingBox())!;
    await expect
      .poll(async () => (await api('GET', `/api/browsers/${browser}`)).viewport?.width, { timeout: 15_000 })
      .toBe(Math.round(body.width));
  });

  test('a JavaScript confirm is shown in the pane and answered only by the user', async ({ wall, page }) => {
    test.setTimeout(90_000);
    await page.setViewportSize({ width: 1280, height: 720 });
    const { id, browser } = await openScreencast(wall);
    const pane = wall.pane(id);
    await expect.poll(async () => near(await pixelAt(page, id, ASK.x + 10, ASK.y + 10), [200, 0, 0]), { timeout: 15_000 }).toBe(true);
    const dialog = pane.getByTestId('page-dialog');
    await expect(async () => {
      const a = await pointOf(page, id, ASK.x + 10, ASK.y + 10);
      await page.mouse.click(a.x, a.y);
      await expect(dialog).toBeVisible({ timeout: 2_000 });
    }).toPass({ timeout: 20_000 });
    await expect(dialog).toHaveAttribute('data-kind', 'confirm');
    await expect(dialog).toContainText('Proceed?');
    await page.waitForTimeout(500);
    await expect(dialog).toBeVisible(); // never auto-answered
    await dialog.getByTestId('page-dialog-cancel').click();
    await expect(dialog).toHaveCount(0);
    await expect.poll(async () => (await api('GET', `/api/browsers/${browser}`)).title).toBe('confirmed:false');
  });

  test('screenshot of a terminal beside a screencast pane', async ({ wall, page }) => {
    test.setTimeout(90_000);
    await page.setViewportSize({ width: 1280, height: 720 });
    const [term] = await wall.paneIds();
    const { id } = await openScreencast(wall);
    await expect.poll(async () => near(await pixelAt(page, id, BUTTON.x + 15, BUTTON.y + 15), [0, 0, 255]), { timeout: 15_000 }).toBe(true);
    await wall.click(term);
    await wall.type(`clear; curl -s ${origin}/ | head -5\n`);
    await wall.waitText(term, /<title>start/);
    await page.waitForTimeout(800);
    const out = path.resolve(import.meta.dirname, '../../../docs/screenshot-screencast.png');
    await page.screenshot({ path: out });
    expect(fs.statSync(out).size).toBeGreaterThan(10_000);
  });
});
