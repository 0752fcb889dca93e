// Native popups in a screencast pane (issue #11 item 2): headless Chromium opens date/colour
// pickers and `<select>` lists as widgets that take no clicks, so the pane draws its own.
// Clicking a day in the pane's date picker sets the page's date (and does not press what is
// drawn under it); a `<select>` inside a cross-origin iframe opens the pane's list at its
// place and a mouse click picks an option; a colour picker answers with the colour.
import { expect, openScreencast, pageTitle, pointOf, servePages, test } from './fixtures';

const DATE = { x: 20, y: 20, w: 200, h: 30 };
const UNDER = { x: 20, y: 50, w: 300, h: 300 };
const COLOR = { x: 20, y: 400, w: 80, h: 30 };
const FRAME = { x: 400, y: 40, w: 400, h: 200 };
const FSELECT = { x: 30, y: 60, w: 180, h: 30 };
const abs = (r: { x: number; y: number; w: number; h: number }) =>
  `position: absolute; left: ${r.x}px; top: ${r.y}px; width: ${r.w}px; height: ${r.h}px; box-sizing: border-box; margin: 0;`;

const frame = `<!doctype html><html><head><meta charset="utf-8"><style>body { margin: 0; background: #eef; } #s { ${abs(FSELECT)} }</style></head><body>
<select id="s" onchange="parent.postMessage('frame:' + this.value, '*')"><option value="a">Alpha</option><option value="b">Beta</option><option value="c">Gamma</option></select>
</body></html>`;

const main = (frameUrl: string) => `<!doctype html><html><head><meta charset="utf-8"><title>start</title><style>
body { margin: 0; background: #fff; font: 16px sans-serif; }
#d { ${abs(DATE)} } #under { ${abs(UNDER)} background: rgb(0, 0, 200); border: 0; } #c { ${abs(COLOR)} }
iframe { ${abs(FRAME)} border: 0; }
</style></head><body>
<button id="under" onclick="document.title = 'under pressed'">under</button>
<input id="d" type="date" value="2026-12-01" onchange="document.title = 'date:' + this.value">
<input id="c" type="color" value="#000000" onchange="document.title = 'color:' + this.value">
<iframe src="${frameUrl}"></iframe>
<script>addEventListener('message', (e) => { document.title = String(e.data); });</script>
</body></html>`;

test.describe('screencast native popups', () => {
  test('a day clicked in the date picker sets the date; nothing under the picker is pressed', async ({ wall, page }) => {
    test.setTimeout(90_000);
    await page.setViewportSize({ width: 1280, height: 800 });
    const frames = await servePages({ '/frame': frame });
    const pages = await servePages({ '/': main(`http://localhost:${frames.origin.split(':')[2]}/frame`) });
    try {
      const { id, browser } = await openScreencast(wall, `${pages.origin}/`);
      const pane = wall.pane(id);
      const p = await pointOf(page, id, DATE.x + DATE.w - 15, DATE.y + DATE.h / 2);
      await page.mouse.click(p.x, p.y);
      const picker = pane.getByTestId('picker-popup');
      await expect(picker).toBeVisible();
      await expect(picker).toHaveAttribute('data-type', 'date');
      await expect(picker.getByTestId('picker-title')).toHaveText('Dec 2026');
      // Drawn under the element, over the blue button.
      const pb = (await picker.boundingBox())!;
      const under = await pointOf(page, id, DATE.x, DATE.y + DATE.h);
      expect(Math.abs(pb.x - under.x)).toBeLessThan(4);
      expect(Math.abs(pb.y - under.y)).toBeLessThan(4);
      await picker.locator('[data-testid=picker-day][data-date="2026-12-15"]').click();
      await expect(picker).toHaveCount(0);
      await expect.poll(() => pageTitle(browser)).toBe('date:2026-12-15');
      // A month later through the picker's own navigation.
      await page.mouse.click(p.x, p.y);
      await expect(picker.getByTestId('picker-title')).toHaveText('Dec 2026');
      await picker.getByTestId('picker-next').click();
      await picker.locator('[data-testid=picker-day][data-date="2027-01-07"]').click();
      await expect.poll(() => pageTitle(browser)).toBe('date:2027-01-07');
      // Escape dismisses without a change; so does focus moving to another pane.
      await page.mouse.click(p.x, p.y);
      await expect(picker).toBeVisible();
      await page.keyboard.press('Escape');
      await expect(picker).toHaveCount(0);
      await page.mouse.click(p.x, p.y);
      await expect(picker).toBeVisible();
      const [term] = await wall.paneIds();
      await wall.pane(term).getByTestId('terminal-body').click();
      await expect(picker).toHaveCount(0);
      expect(await pageTitle(browser)).toBe('date:2027-01-07');

      // The colour picker answers with the colour typed.
      const c = await pointOf(page, id, COLOR.x + 40, COLOR.y + 15);
      await page.mouse.click(c.x, c.y);
      await expect(picker).toHaveAttribute('data-type', 'color');
      await picker.getByTestId('picker-hex').fill('#12ab00');
      await picker.getByTestId('picker-ok').click();
      await expect.poll(() => pageTitle(browser)).toBe('color:#12ab00');
    } finally {
      await pages.close();
      await frames.close();
    }
  });

  // Site isolation stays on: the cross-origin iframe is an out-of-process frame with a
  // target of its own, which the popup probe (viewer/popup.rs) attaches to.
  test('a <select> inside a cross-origin iframe opens at its place and picks with the mouse', async ({ wall, page }) => {
    test.setTimeout(90_000);
    await page.setViewportSize({ width: 1280, height: 800 });
    const frames = await servePages({ '/frame': frame });
    const port = frames.origin.split(':')[2];
    // Another host name: another origin and another site than the page's 127.0.0.1.
    const pages = await servePages({ '/': main(`http://localhost:${port}/frame`) });
    try {
      const { id, browser } = await openScreencast(wall, `${pages.origin}/`);
      const pane = wall.pane(id);
      const s = await pointOf(page, id, FRAME.x + FSELECT.x + 50, FRAME.y + FSELECT.y + 15);
      const list = pane.getByTestId('select-popup');
      // The frame may still be loading: retry the press until its list opens.
      await expect(async () => {
        await page.mouse.click(s.x, s.y);
        await expect(list).toBeVisible({ timeout: 2_000 });
      }).toPass({ timeout: 20_000 });
      await expect(list.getByTestId('select-option')).toHaveText(['Alpha', 'Beta', 'Gamma']);
      // At the select's place in the top page: under its box.
      const lb = (await list.boundingBox())!;
      const at = await pointOf(page, id, FRAME.x + FSELECT.x, FRAME.y + FSELECT.y + FSELECT.h);
      expect(Math.abs(lb.x - at.x)).toBeLessThan(4);
      expect(Math.abs(lb.y - at.y)).toBeLessThan(4);
      await list.getByTestId('select-option').filter({ hasText: 'Gamma' }).click();
      await expect(list).toHaveCount(0);
      await expect.poll(() => pageTitle(browser)).toBe('frame:c');
    } finally {
      await pages.close();
      await frames.close();
    }
  });
});
