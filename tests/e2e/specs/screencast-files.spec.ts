// Files in a screencast pane (issue #11 item 7): a click on <input type=file> asks the user
// in the pane (multiple and accept honoured) and the picked files reach the page; a download
// lands in the user's download directory and the pane says so (name, size, done, where).
import fs from 'node:fs';
import { expect, openScreencast, pageTitle, pointOf, servePages, test } from './fixtures';

const MANY = { x: 20, y: 20, w: 300, h: 40 };
const ONE = { x: 20, y: 80, w: 300, h: 40 };
const LINK = { x: 20, y: 150, w: 200, h: 40 };
const abs = (r: { x: number; y: number; w: number; h: number }) =>
  `position: absolute; left: ${r.x}px; top: ${r.y}px; width: ${r.w}px; height: ${r.h}px; box-sizing: border-box; margin: 0;`;

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>start</title><style>
body { margin: 0; background: #fff; } #many { ${abs(MANY)} } #one { ${abs(ONE)} } #dl { ${abs(LINK)} display: block; background: #fc0; }
</style></head><body>
<input id="many" type="file" multiple accept=".txt,.md">
<input id="one" type="file">
<a id="dl" href="/report" download="report.txt">download</a>
<script>
  const show = (e) => { document.title = e.target.id + ':' + Array.from(e.target.files).map((f) => f.name + '=' + f.size).join(','); };
  document.getElementById('many').addEventListener('change', show);
  document.getElementById('one').addEventListener('change', show);
</script>
</body></html>`;

test.describe('screencast files', () => {
  test('a file input asks in the pane and gets the picked files; one that takes a single file gets one', async ({ wall, page }) => {
    test.setTimeout(90_000);
    const srv = await servePages({ '/': PAGE });
    try {
      const { id, browser } = await openScreencast(wall, `${srv.origin}/`);
      const pane = wall.pane(id);
      const chooser = pane.getByTestId('file-chooser');
      const many = await pointOf(page, id, MANY.x + 40, MANY.y + 20);
      await page.mouse.click(many.x, many.y);
      await expect(chooser).toBeVisible();
      await expect(chooser.getByTestId('file-chooser-accept')).toHaveText('Accepted: .txt,.md');
      const input = chooser.getByTestId('file-chooser-input');
      await expect(input).toHaveAttribute('multiple', '');
      await expect(input).toHaveAttribute('accept', '.txt,.md');
      await input.setInputFiles([
        { name: 'a.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') },
        { name: 'b.md', mimeType: 'text/markdown', buffer: Buffer.from('world!') },
      ]);
      await expect(chooser).toHaveCount(0);
      await expect.poll(() => pageTitle(browser)).toBe('many:a.txt=5,b.md=6');

      // A single-file input: the pane's picker takes one; Cancel leaves the input as it was.
      const one = await pointOf(page, id, ONE.x + 40, ONE.y + 20);
      await page.mouse.click(one.x, one.y);
      await expect(chooser).toBeVisible();
      await expect(chooser.getByTestId('file-chooser-input')).not.toHaveAttribute('multiple', '');
      await chooser.getByTestId('file-chooser-cancel').click();
      await expect(chooser).toHaveCount(0);
      await page.mouse.click(one.x, one.y);
      await chooser.getByTestId('file-chooser-input').setInputFiles([{ name: 'c.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(70_000, 7) }]);
      await expect.poll(() => pageTitle(browser)).toBe('one:c.bin=70000');
    } finally {
      await srv.close();
    }
  });

  test('a download is saved to the download directory and shown with its size and place', async ({ wall, page }) => {
    test.setTimeout(90_000);
    const body = 'x'.repeat(3000);
    const srv = await servePages({ '/': PAGE, '/report': body });
    try {
      const { id } = await openScreencast(wall, `${srv.origin}/`);
      const pane = wall.pane(id);
      const l = await pointOf(page, id, LINK.x + 40, LINK.y + 20);
      await page.mouse.click(l.x, l.y);
      const row = pane.locator('[data-testid=download][data-name="report.txt"]');
      await expect(row).toHaveAttribute('data-state', 'completed', { timeout: 20_000 });
      await expect(row.getByTestId('download-state')).toHaveText('done');
      await expect(row.getByTestId('download-size')).toHaveText('2.9 KB');
      await row.getByTestId('download-show').click();
      const where = (await row.getByTestId('download-path').textContent())!;
      expect(where).toMatch(/\/Downloads\/report\.txt$/);
      expect(fs.readFileSync(where, 'utf8')).toBe(body);
      // A second download of the same name does not overwrite the first.
      await page.mouse.click(l.x, l.y);
      await expect(pane.locator('[data-testid=download][data-state=completed]')).toHaveCount(2, { timeout: 20_000 });
      await pane.getByTestId('download-show').nth(1).click();
      const second = (await pane.getByTestId('download-path').nth(1).textContent())!;
      expect(second).toMatch(/\/Downloads\/report \(1\)\.txt$/);
      await pane.getByTestId('download-dismiss').first().click();
      await expect(pane.getByTestId('download')).toHaveCount(1);
      // One nobody touches fades away by itself (the pointer is on the page, not the shelf);
      // the one whose folder was shown stays.
      await page.mouse.click(l.x, l.y);
      await expect(pane.getByTestId('download')).toHaveCount(2, { timeout: 20_000 });
      await expect(pane.getByTestId('download')).toHaveCount(1, { timeout: 30_000 });
      await expect(pane.getByTestId('download-path')).toHaveText(second);
    } finally {
      await srv.close();
    }
  });
});
