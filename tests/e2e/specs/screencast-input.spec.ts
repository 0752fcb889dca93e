// Input through a screencast pane the way a user gives it (Playwright's real mouse and keyboard
// on the canvas, CDP IME events into the app page), checked inside the screencast page: the
// page reports its state as JSON in document.title, read back through GET /api/browsers/{id}.
// Covers paste, copy/cut/select-all, IME composition, drag, double-click, the tab strip (and
// the `<select>` list under it), Relaunch after Chromium is killed or the browser deleted.
import type { Page } from '@playwright/test';
import { type Wall, api, expect, near, openScreencast, pageTitle, pixelAt, pointOf, servePages, test, waitFrameFills } from './fixtures';

// Fixed layout (page CSS px) so the test knows where things are.
const FIELD = { x: 20, y: 20, w: 400, h: 40 };
const BOX = { x: 20, y: 100, w: 60, h: 60 };
const WORDS = { x: 20, y: 240, h: 30 };
const PAIR = { x: 20, y: 300, w: 300, h: 30 };
const SELECT = { x: 20, y: 380, w: 200, h: 30 };
const LINK = { x: 500, y: 20, w: 160, h: 60 };
const OPEN = { x: 500, y: 100, w: 160, h: 60 };
const abs = (r: { x: number; y: number; w: number; h: number }) =>
  `position: absolute; left: ${r.x}px; top: ${r.y}px; width: ${r.w}px; height: ${r.h}px; box-sizing: border-box; margin: 0;`;

const MAIN = `<!doctype html><html><head><meta charset="utf-8"><title>{}</title><style>
body { margin: 0; background: rgb(255, 255, 255); font: 20px monospace; }
#f { ${abs(FIELD)} font: 20px monospace; }
#box { ${abs(BOX)} background: rgb(0, 0, 255); }
#words { position: absolute; left: ${WORDS.x}px; top: ${WORDS.y}px; height: ${WORDS.h}px; margin: 0; white-space: nowrap; }
#pair { ${abs(PAIR)} text-align: right; white-space: nowrap; }
#sel { ${abs(SELECT)} }
#link { ${abs(LINK)} display: block; background: rgb(255, 160, 0); color: #000; }
#open { ${abs(OPEN)} background: rgb(160, 0, 160); color: #fff; border: 0; }
</style></head><body>
<input id="f" autocomplete="off">
<div id="box"></div>
<p id="words">alpha bravo charlie delta</p>
<div id="pair">alpha bravo</div>
<select id="sel"><option>Alpha</option><option>Beta</option></select>
<a id="link" href="/second" target="_blank">new tab</a>
<button id="open" onclick="window.open('/third')">window.open</button>
<script>
  // state: f = the field's value, keys = the keys of keydowns on it, i = input events on it,
  // drag = the box's last dropped position and the moves it saw, dbl = the selection at a
  // dblclick, focused = the field has the focus.
  const state = { f: '', keys: [], i: 0, drag: null, dbl: null, focused: false };
  const report = () => { document.title = JSON.stringify(state); };
  const f = document.getElementById('f');
  f.addEventListener('keydown', (e) => { state.keys.push(e.key); report(); });
  f.addEventListener('focus', () => { state.focused = true; report(); });
  f.addEventListener('blur', () => { state.focused = false; report(); });
  f.addEventListener('input', () => { state.i++; state.f = f.value; report(); });
  // A drag as libraries do it: press on the box, moves with the left button held, release.
  const box = document.getElementById('box');
  let grab = null, moves = 0;
  box.addEventListener('mousedown', (e) => { grab = { dx: e.clientX - box.offsetLeft, dy: e.clientY - box.offsetTop }; moves = 0; e.preventDefault(); });
  document.addEventListener('mousemove', (e) => {
    if (!grab) return;
    if (!(e.buttons & 1)) { grab = null; return; } // button no longer held: the drag is over
    moves++;
    box.style.left = (e.clientX - grab.dx) + 'px';
    box.style.top = (e.clientY - grab.dy) + 'px';
  });
  document.addEventListener('mouseup', () => {
    if (!grab) return;
    grab = null;
    state.drag = { x: box.offsetLeft, y: box.offsetTop, moves };
    report();
  });
  document.getElementById('pair').addEventListener('dblclick', () => { state.dbl = String(getSelection()); report(); });
  report();
</script>
</body></html>`;

const other = (title: string, rgb: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body style="margin:0; background: rgb(${rgb})"><h1>${title}</h1></body></html>`;
const SECOND_RGB = [0, 160, 0];
const THIRD_RGB = [200, 0, 0];

let site: Awaited<ReturnType<typeof servePages>>;
test.beforeAll(async () => {
  site = await servePages({ '/': MAIN, '/second': other('second', SECOND_RGB.join(',')), '/third': other('third', THIRD_RGB.join(',')) });
});
test.afterAll(async () => site.close());

interface PageState {
  f: string;
  keys: string[];
  i: number;
  drag: { x: number; y: number; moves: number } | null;
  dbl: string | null;
  focused: boolean;
}

/** The main page's reported state (its title parsed), or null while another page is active. */
async function state(browser: string): Promise<PageState | null> {
  try {
    return JSON.parse(await pageTitle(browser)) as PageState;
  } catch {
    return null;
  }
}

/** Opens the main page as a screencast pane and waits until it is painted at the pane's size. */
async function openMain(wall: Wall, page: Page) {
  await page.setViewportSize({ width: 1280, height: 720 });
  const { id, browser } = await openScreencast(wall, `${site.origin}/`);
  await expect.poll(async () => near(await pixelAt(page, id, BOX.x + 10, BOX.y + 10), [0, 0, 255]), { timeout: 15_000 }).toBe(true);
  return { id, browser, pane: wall.pane(id) };
}

/** Clicks page point (x, y) through the canvas. */
async function clickAt(page: Page, id: string, x: number, y: number) {
  const p = await pointOf(page, id, x, y);
  await page.mouse.click(p.x, p.y);
}

/** Clicks into the text field; waits until the catcher has the keyboard and the page reports the field focused. */
async function focusField(page: Page, id: string, browser: string) {
  await clickAt(page, id, FIELD.x + 50, FIELD.y + 20);
  await expect(wallInput(page, id)).toBeFocused();
  await expect.poll(async () => (await state(browser))?.focused).toBe(true);
}

const wallInput = (page: Page, id: string) => page.locator(`[data-testid=pane][data-pane-id="${id}"] [data-testid=screencast-input]`);
const clipboard = (page: Page) => page.evaluate(() => navigator.clipboard.readText());
const setClipboard = (page: Page, text: string) => page.evaluate((t) => navigator.clipboard.writeText(t), text);

test.describe('screencast input', () => {
  test.beforeEach(async ({ context }) => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  });

  test('Ctrl+V pastes the clipboard into the focused field', async ({ wall, page }) => {
    test.setTimeout(90_000);
    const { id, browser } = await openMain(wall, page);
    await focusField(page, id, browser);
    const text = 'pasted ✓ 日本 "quotes" & <tags>';
    await setClipboard(page, text);
    await page.keyboard.press('Control+v');
    await expect.poll(async () => (await state(browser))?.f).toBe(text);
    // One insertion; the chord's V never reached the page as a key (the Ctrl before it does, as in any browser).
    const s = (await state(browser))!;
    expect(s.i).toBe(1);
    expect(s.keys).toEqual(['Control']);
    // Shift+Insert is a paste too (the platform's other chord).
    await setClipboard(page, '+more');
    await page.keyboard.press('Shift+Insert');
    await expect.poll(async () => (await state(browser))?.f).toBe(`${text}+more`);
    expect((await state(browser))!.keys).toEqual(['Control', 'Shift']);
    // The browser's own Edit → Paste fires a paste event at the focused catcher (simulated
    // here: a page cannot run the paste command): its text goes to the page too.
    await wallInput(page, id).evaluate((el) => {
      const dt = new DataTransfer();
      dt.setData('text/plain', '+menu');
      el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
    });
    await expect.poll(async () => (await state(browser))?.f).toBe(`${text}+more+menu`);
    expect((await state(browser))!.i).toBe(3);
  });

  test('Ctrl+A selects all, Ctrl+C copies, Ctrl+X cuts to the app clipboard (and Ctrl+Insert, Shift+Delete)', async ({ wall, page }) => {
    test.setTimeout(90_000);
    const { id, browser } = await openMain(wall, page);
    await focusField(page, id, browser);
    await page.keyboard.type('hello world');
    await expect.poll(async () => (await state(browser))?.f).toBe('hello world');

    await setClipboard(page, 'before');
    await page.keyboard.press('Control+a');
    await page.keyboard.press('Control+c');
    await expect.poll(() => clipboard(page)).toBe('hello world');
    expect((await state(browser))!.f).toBe('hello world'); // copy leaves the field alone

    await setClipboard(page, 'before');
    await page.keyboard.press('Control+x');
    await expect.poll(() => clipboard(page)).toBe('hello world');
    await expect.poll(async () => (await state(browser))?.f).toBe('');

    // The older chords off macOS: Ctrl+Insert copies, Shift+Delete cuts.
    await page.keyboard.type('abc');
    await expect.poll(async () => (await state(browser))?.f).toBe('abc');
    await page.keyboard.press('Control+a');
    await setClipboard(page, 'before');
    await page.keyboard.press('Control+Insert');
    await expect.poll(() => clipboard(page)).toBe('abc');
    await setClipboard(page, 'before');
    await page.keyboard.press('Shift+Delete');
    await expect.poll(() => clipboard(page)).toBe('abc');
    await expect.poll(async () => (await state(browser))?.f).toBe('');
    expect((await state(browser))!.keys).not.toContain('Delete');
    expect((await state(browser))!.keys).not.toContain('Insert');

    // Select-all then typing replaces everything.
    await page.keyboard.type('abc');
    await expect.poll(async () => (await state(browser))?.f).toBe('abc');
    await page.keyboard.press('Control+a');
    await page.keyboard.type('Z');
    await expect.poll(async () => (await state(browser))?.f).toBe('Z');
  });

  test('IME composition lands once; composing keystrokes do not leak', async ({ wall, page }) => {
    test.setTimeout(90_000);
    const { id, browser } = await openMain(wall, page);
    await focusField(page, id, browser);
    const cdp = await page.context().newCDPSession(page);
    // What an IME does: keydowns with key "Process" (keyCode 229), composition updates, a commit.
    const processKey = async (code: string) => {
      await cdp.send('Input.dispatchKeyEvent', { type: 'rawKeyDown', key: 'Process', code, windowsVirtualKeyCode: 229 });
      await cdp.send('Input.dispatchKeyEvent', { type: 'keyUp', key: 'Process', code, windowsVirtualKeyCode: 229 });
    };
    await processKey('KeyN');
    await cdp.send('Input.imeSetComposition', { text: 'に', selectionStart: 1, selectionEnd: 1 });
    await processKey('KeyH');
    await cdp.send('Input.imeSetComposition', { text: 'にほ', selectionStart: 2, selectionEnd: 2 });
    await processKey('KeyN');
    await cdp.send('Input.imeSetComposition', { text: '日本', selectionStart: 2, selectionEnd: 2 });
    await cdp.send('Input.insertText', { text: '日本' });
    await expect.poll(async () => (await state(browser))?.f).toBe('日本');
    const s = (await state(browser))!;
    expect(s.i).toBe(1); // inserted exactly once
    expect(s.keys).toEqual([]); // no composing keystroke reached the page
    // The next ordinary key still goes through as a key.
    await page.keyboard.type('x');
    await expect.poll(async () => (await state(browser))?.f).toBe('日本x');
    expect((await state(browser))!.keys).toEqual(['x']);
    // A second composition after that one also lands once.
    await cdp.send('Input.imeSetComposition', { text: 'か', selectionStart: 1, selectionEnd: 1 });
    await cdp.send('Input.insertText', { text: '火' });
    await expect.poll(async () => (await state(browser))?.f).toBe('日本x火');
    expect((await state(browser))!.i).toBe(3);
    await cdp.detach();
  });

  test('a drag on the canvas moves a box; a drag over text selects it for copy', async ({ wall, page }) => {
    test.setTimeout(90_000);
    const { id, browser } = await openMain(wall, page);
    const from = await pointOf(page, id, BOX.x + 30, BOX.y + 30);
    const to = await pointOf(page, id, BOX.x + 30 + 150, BOX.y + 30 + 40);
    await page.mouse.move(from.x, from.y);
    await page.mouse.down();
    await page.mouse.move(to.x, to.y, { steps: 8 });
    await page.mouse.up();
    await expect.poll(async () => (await state(browser))?.drag, { timeout: 15_000 }).not.toBeNull();
    const drag = (await state(browser))!.drag!;
    expect(Math.abs(drag.x - (BOX.x + 150))).toBeLessThanOrEqual(2);
    expect(Math.abs(drag.y - (BOX.y + 40))).toBeLessThanOrEqual(2);
    expect(drag.moves).toBeGreaterThanOrEqual(1);
    // The box is painted where it was dropped.
    await expect.poll(async () => near(await pixelAt(page, id, BOX.x + 150 + 30, BOX.y + 40 + 30), [0, 0, 255]), { timeout: 15_000 }).toBe(true);

    // Select text by dragging from the left of "alpha" into "charlie", then copy it.
    await setClipboard(page, 'before');
    const a = await pointOf(page, id, WORDS.x + 1, WORDS.y + WORDS.h / 2);
    const b = await pointOf(page, id, WORDS.x + 200, WORDS.y + WORDS.h / 2);
    await page.mouse.move(a.x, a.y);
    await page.mouse.down();
    await page.mouse.move(b.x, b.y, { steps: 6 });
    await page.mouse.up();
    await page.keyboard.press('Control+c');
    await expect.poll(() => clipboard(page)).toMatch(/^alpha bravo c/);
    expect('alpha bravo charlie delta'.startsWith(await clipboard(page))).toBe(true);
  });

  test('a double-click selects a word', async ({ wall, page }) => {
    test.setTimeout(90_000);
    const { id, browser } = await openMain(wall, page);
    // The line is right-aligned in its box: 25 px left of its end is inside "bravo" (at any
    // monospace advance between 6 and 24 px).
    const p = await pointOf(page, id, PAIR.x + PAIR.w - 25, PAIR.y + PAIR.h / 2);
    await page.mouse.dblclick(p.x, p.y);
    await expect.poll(async () => (await state(browser))?.dbl).toBe('bravo');
    await setClipboard(page, 'before');
    await page.keyboard.press('Control+c');
    await expect.poll(() => clipboard(page)).toBe('bravo');
  });

  test('tabs: target=_blank and window.open show the strip; select, close, strip gone at one', async ({ wall, page }) => {
    test.setTimeout(120_000);
    const { id, browser, pane } = await openMain(wall, page);
    const tabs = pane.getByTestId('browser-tab');
    const url = pane.getByTestId('browser-url');
    await expect(pane.getByTestId('browser-tabs')).toHaveCount(0);

    // A target=_blank link opens a second tab, which becomes active: strip, header, frames follow.
    await clickAt(page, id, LINK.x + 40, LINK.y + 30);
    await expect(tabs).toHaveCount(2, { timeout: 15_000 });
    await expect(tabs).toHaveText([/^\{/, 'second']);
    await expect(url).toContainText('/second');
    await expect.poll(async () => near(await pixelAt(page, id, 600, 300), SECOND_RGB), { timeout: 15_000 }).toBe(true);
    // The strip takes room from the body: the page follows the smaller size (no letterbox left).
    await waitFrameFills(page, id);
    await page.screenshot({ path: test.info().outputPath('tabs.png') });

    // Clicking the first tab switches back.
    await tabs.first().click();
    await expect(url).not.toContainText('/second');
    await expect.poll(async () => near(await pixelAt(page, id, BOX.x + 10, BOX.y + 10), [0, 0, 255]), { timeout: 15_000 }).toBe(true);
    expect((await api('GET', `/api/browsers/${browser}`)).url).toBe(`${site.origin}/`);
    await waitFrameFills(page, id);

    // With the strip shown, the pane's `<select>` list still opens right under the element.
    const under = await pointOf(page, id, SELECT.x, SELECT.y + SELECT.h);
    await clickAt(page, id, SELECT.x + 50, SELECT.y + 15);
    const popup = pane.getByTestId('select-popup');
    await expect(popup).toBeVisible();
    const pb = (await popup.boundingBox())!;
    expect(Math.abs(pb.y - under.y)).toBeLessThanOrEqual(2);
    expect(Math.abs(pb.x - under.x)).toBeLessThanOrEqual(2);
    await page.keyboard.press('Escape');
    await expect(popup).toHaveCount(0);

    // Closing the second tab from the strip: one tab left, the strip goes away.
    await pane.getByTestId('browser-tab-close').nth(1).click();
    await expect(pane.getByTestId('browser-tabs')).toHaveCount(0);
    expect((await api('GET', `/api/browsers/${browser}`)).tabs).toHaveLength(1);
    await waitFrameFills(page, id); // the body grew back: wait for a frame of its size

    // window.open from a button: a new active tab again.
    await clickAt(page, id, OPEN.x + 40, OPEN.y + 30);
    await expect(tabs).toHaveCount(2, { timeout: 15_000 });
    await expect(url).toContainText('/third');
    await expect.poll(async () => near(await pixelAt(page, id, 600, 300), THIRD_RGB), { timeout: 15_000 }).toBe(true);
    // Closing the active tab makes the other one active.
    await pane.getByTestId('browser-tab-close').nth(1).click();
    await expect(pane.getByTestId('browser-tabs')).toHaveCount(0);
    await expect(url).not.toContainText('/third');
    await expect.poll(async () => near(await pixelAt(page, id, BOX.x + 10, BOX.y + 10), [0, 0, 255]), { timeout: 15_000 }).toBe(true);
  });

  test('from another pane, one click on the URL field takes the keyboard; a refused address leaves the page and header as they were', async ({ wall, page }) => {
    const { id, browser, pane } = await openMain(wall, page);
    const [term] = await wall.paneIds();
    await wall.click(term);
    await pane.getByTestId('browser-url').click();
    const field = pane.getByTestId('browser-url-input');
    await expect(field).toBeFocused();
    await page.waitForTimeout(300); // the focus sync after the pane took focus has run
    await expect(field).toBeFocused();
    await page.keyboard.type(`${site.origin}/second`);
    await page.keyboard.press('Enter');
    await expect.poll(async () => (await api('GET', `/api/browsers/${browser}`)).url, { timeout: 15_000 }).toBe(`${site.origin}/second`);
    await expect.poll(async () => near(await pixelAt(page, id, 600, 300), SECOND_RGB), { timeout: 15_000 }).toBe(true);

    // A refused address: the field says why, and the page and header stay as they were.
    const go = async (u: string) => {
      await pane.getByTestId('browser-url').click();
      await field.fill(u);
      await field.press('Enter');
    };
    await go('http://169.254.169.254/');
    await expect(pane.getByTestId('browser-url-error')).toContainText(/link-local|metadata/);
    await field.press('Escape');
    await expect(pane.getByTestId('browser-url')).toContainText('/second');
    expect((await api('GET', `/api/browsers/${browser}`)).url).toBe(`${site.origin}/second`);
    await go(`${site.origin}/third`);
    await expect.poll(async () => (await api('GET', `/api/browsers/${browser}`)).url, { timeout: 15_000 }).toBe(`${site.origin}/third`);
    await expect(pane.getByTestId('screencast-error')).toHaveCount(0);
  });

  test('Chromium killed: the pane says so and Relaunch brings frames back at the last URL', async ({ wall, page }) => {
    test.setTimeout(120_000);
    const { id, browser, pane } = await openMain(wall, page);
    // Move to another page first (the URL field), so "last URL" is not the first one.
    await pane.getByTestId('browser-url').click();
    const field = pane.getByTestId('browser-url-input');
    await field.fill(`${site.origin}/second`);
    await field.press('Enter');
    await expect.poll(async () => near(await pixelAt(page, id, 600, 300), SECOND_RGB), { timeout: 15_000 }).toBe(true);
    const { pid } = await api('GET', `/api/browsers/${browser}`);
    expect(pid).toBeGreaterThan(1);
    process.kill(pid, 'SIGKILL');

    const panel = pane.getByTestId('screencast-disconnected');
    await expect(panel).toBeVisible({ timeout: 15_000 });
    await expect(panel).toContainText(/Chromium quit/);
    await page.screenshot({ path: test.info().outputPath('crashed.png') });
    const painted = Number(await pane.getByTestId('screencast-canvas').getAttribute('data-painted'));
    await panel.getByTestId('screencast-relaunch').click();
    // The panel goes as soon as the relaunch begins (status `launching`); wait for its end.
    await expect(panel).toHaveCount(0, { timeout: 30_000 });
    await expect.poll(async () => (await api('GET', `/api/browsers/${browser}`)).connected, { timeout: 30_000 }).toBe(true);
    await expect(panel).toHaveCount(0);
    const info = await api('GET', `/api/browsers/${browser}`);
    expect(info.url).toBe(`${site.origin}/second`);
    expect(info.pid).not.toBe(pid);
    // Fresh frames of the page are painted again, from a live viewer socket.
    await expect.poll(async () => Number(await pane.getByTestId('screencast-canvas').getAttribute('data-painted')), { timeout: 20_000 }).toBeGreaterThan(painted);
    await expect.poll(async () => near(await pixelAt(page, id, 600, 300), SECOND_RGB), { timeout: 15_000 }).toBe(true);
    await expect(pane.locator('.screencast-host')).toHaveAttribute('data-socket', 'open');
  });
  test('Chromium killed: back/forward/reload are off, and an address typed in the field relaunches it there', async ({ wall, page }) => {
    test.setTimeout(120_000);
    const { id, browser, pane } = await openMain(wall, page);
    const { pid } = await api('GET', `/api/browsers/${browser}`);
    process.kill(pid, 'SIGKILL');
    const panel = pane.getByTestId('screencast-disconnected');
    await expect(panel).toBeVisible({ timeout: 15_000 });
    for (const b of ['browser-back', 'browser-forward', 'browser-reload']) await expect(pane.getByTestId(b)).toBeDisabled();
    await expect(pane.getByTestId('browser-reload')).toHaveAttribute('title', /Chromium stopped/);

    await pane.getByTestId('browser-url').click();
    const field = pane.getByTestId('browser-url-input');
    await field.fill(`${site.origin}/second`);
    await field.press('Enter');
    await expect(panel).toHaveCount(0, { timeout: 30_000 });
    await expect.poll(async () => (await api('GET', `/api/browsers/${browser}`)).url, { timeout: 30_000 }).toBe(`${site.origin}/second`);
    await expect.poll(async () => near(await pixelAt(page, id, 600, 300), SECOND_RGB), { timeout: 15_000 }).toBe(true);
    expect((await api('GET', `/api/browsers/${browser}`)).pid).not.toBe(pid);
    await expect(pane.getByTestId('browser-reload')).toBeEnabled();
  });
  test('a browser deleted elsewhere: the pane says so and Relaunch starts a new one at its URL', async ({ wall, page }) => {
    test.setTimeout(120_000);
    const { browser, pane } = await openMain(wall, page);
    await api('DELETE', `/api/browsers/${browser}`);
    const panel = pane.getByTestId('screencast-disconnected');
    await expect(panel).toBeVisible({ timeout: 15_000 });
    await panel.getByTestId('screencast-relaunch').click();
    await expect
      .poll(async () => {
        const v = await pane.getAttribute('data-browser-id');
        return v !== null && v !== browser;
      }, { timeout: 30_000 })
      .toBe(true);
    const fresh = (await pane.getAttribute('data-browser-id'))!;
    await expect(panel).toHaveCount(0);
    await expect(pane.getByTestId('screencast-starting')).toHaveCount(0, { timeout: 30_000 });
    expect((await api('GET', `/api/browsers/${fresh}`)).url).toBe(`${site.origin}/`);
    await expect(pane.locator('.screencast-host')).toHaveAttribute('data-socket', 'open', { timeout: 15_000 });
  });
});
