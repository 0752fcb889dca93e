// Shell integration and attention (DESIGN §13) through the UI: a split opens in the cwd, the
// header shows the running command, prompt jumps, Ctrl+click on a loopback URL, the bell
// badge and a desktop notification whose click focuses the pane.
import { expect, servePages, test } from './fixtures';

test('a split opens in the cwd, and the header shows the running command then the cwd', async ({ wall, page }) => {
  const [first] = await wall.paneIds();
  await wall.click(first);
  await wall.type('mkdir -p /tmp/ph-split-here && cd /tmp/ph-split-here\n');
  await expect(wall.pane(first).getByTestId('pane-cwd')).toHaveText('ph-split-here');
  await wall.type('sleep 3\n');
  const title = wall.pane(first).getByTestId('pane-title');
  await expect(title).toHaveText('sleep 3');
  await expect(title).toHaveAttribute('data-running', 'true');
  await expect(title).toHaveAttribute('data-running', 'false', { timeout: 15_000 });
  await expect(title).not.toHaveText('sleep 3');

  await wall.prefix('Shift+Digit5'); // split right
  await wall.waitOpen(2);
  const second = await wall.focusedId();
  await wall.type('pwd\n');
  await wall.waitText(second, /^\/tmp\/ph-split-here$/m);
});

test('a failed command marks its prompt, and prefix [ ] jump between prompts', async ({ wall, page }) => {
  const [id] = await wall.paneIds();
  await wall.click(id);
  await wall.type('echo first-mark; false\n');
  await wall.waitText(id, /^first-mark$/m);
  await expect(page.locator('.prompt-failed')).toHaveCount(1);
  // Fill more than a screen, then jump back to the prompt of the seq.
  await wall.type('seq 1 200\n');
  await wall.waitText(id, /^200$/m);
  await wall.prefix('BracketLeft');
  await expect.poll(() => page.evaluate((id) => (window as any).__porthole.paneTopLine(id), id)).toMatch(/^\$ seq 1 200/);
  await wall.prefix('BracketLeft');
  await expect.poll(() => page.evaluate((id) => (window as any).__porthole.paneTopLine(id), id)).toMatch(/^\$ echo first-mark/);
  await wall.prefix('BracketRight');
  await expect.poll(() => page.evaluate((id) => (window as any).__porthole.paneTopLine(id), id)).toMatch(/^\$ seq 1 200/);
});

test('Ctrl+click on a printed loopback URL opens it in a browser pane beside', async ({ wall, page }) => {
  const site = await servePages({ '/': '<title>Linked</title><h1>linked page</h1>' });
  try {
    const [id] = await wall.paneIds();
    await wall.click(id);
    await wall.type(`clear; echo '${site.origin}/'\n`);
    await wall.waitText(id, new RegExp(`^${site.origin.replace(/\./g, '\\.')}/$`, 'm'));
    // `clear` left the URL on the first row.
    const body = wall.pane(id).getByTestId('terminal-body');
    const box = (await body.boundingBox())!;
    const cell = await page.evaluate((id) => {
      const t = (window as any).__porthole.paneSize(id);
      return t;
    }, id);
    const rowH = box.height / cell.rows;
    const colW = box.width / cell.cols;
    await page.mouse.move(box.x + colW * 5 + 2, box.y + rowH * 0.5);
    await page.keyboard.down('Control');
    await page.mouse.click(box.x + colW * 5 + 2, box.y + rowH * 0.5);
    await page.keyboard.up('Control');
    await wall.waitOpen(2);
    const browser = page.locator('[data-testid=pane][data-kind=browser]');
    await expect(browser).toHaveCount(1);
    await expect(browser.getByTestId('browser-url')).toContainText(site.origin.replace('http://', ''), { timeout: 20_000 });
    await expect(browser.frameLocator('iframe').locator('h1')).toHaveText('linked page', { timeout: 20_000 });
    // Beside: the terminal stays.
    await expect(wall.pane(id)).toBeVisible();
  } finally {
    await site.close();
  }
});

test('a bell in an unfocused pane shows a badge that focusing clears; a notification click focuses the pane', async ({ wall, page, context }) => {
  await context.grantPermissions(['notifications']);
  // Record notifications (the headless browser shows none) so the test can click one.
  await page.evaluate(() => {
    const Real = window.Notification;
    const made: Notification[] = [];
    class Recorded extends Real {
      constructor(title: string, opts?: NotificationOptions) {
        super(title, opts);
        made.push(this);
      }
    }
    (window as any).__notes = made;
    (window as any).Notification = Recorded;
  });
  const [first] = await wall.paneIds();
  await wall.click(first);
  await wall.prefix('Shift+Digit5');
  await wall.waitOpen(2);
  const second = await wall.focusedId();
  // The first pane rings while the second has the focus.
  await wall.click(first);
  await wall.type('sleep 2; printf "\\a"; echo ph-ring-target-rang\n');
  await wall.click(second);
  await wall.waitText(first, /^ph-ring-target-rang$/m);
  await expect(wall.pane(first).getByTestId('pane-attention')).toBeVisible();
  await expect(wall.pane(second).getByTestId('pane-attention')).toHaveCount(0);
  await wall.click(first);
  await expect(wall.pane(first).getByTestId('pane-attention')).toHaveCount(0);

  // The window loses the focus; a notification from the second pane goes to the desktop.
  await page.evaluate(() => (document.hasFocus = () => false));
  await wall.click(second);
  await wall.type(`sleep 1; printf '\\e]777;notify;Build;done\\a'\n`);
  await wall.click(first);
  await expect.poll(() => page.evaluate(() => (window as any).__notes.length), { timeout: 15_000 }).toBe(1);
  expect(await page.evaluate(() => [(window as any).__notes[0].title, (window as any).__notes[0].body])).toEqual([expect.stringContaining('Build'), 'done']);
  await expect(wall.pane(second).getByTestId('pane-attention')).toBeVisible();
  await page.evaluate(() => (window as any).__notes[0].onclick());
  await expect(wall.pane(second)).toHaveAttribute('data-focused', 'true');
  await expect(wall.pane(second).getByTestId('pane-attention')).toHaveCount(0);
});

test('Ctrl+click on a printed path:line opens the editor there in a pane beside', async ({ wall, page }) => {
  const [id] = await wall.paneIds();
  await wall.click(id);
  await wall.type("mkdir -p /tmp/ph-edit && cd /tmp/ph-edit && printf 'first line\\nsecond line\\n' > notes.txt && clear && echo 'notes.txt:2: here'\n");
  await wall.waitText(id, /^notes\.txt:2: here$/m);
  const body = wall.pane(id).getByTestId('terminal-body');
  const box = (await body.boundingBox())!;
  const size = await page.evaluate((id) => (window as any).__porthole.paneSize(id), id);
  const [rowH, colW] = [box.height / size.rows, box.width / size.cols];
  // Hover first: the link provider asks the sidecar whether the file exists.
  await page.mouse.move(box.x + colW * 3, box.y + rowH * 0.5);
  await page.waitForTimeout(300);
  await page.keyboard.down('Control');
  await page.mouse.click(box.x + colW * 3, box.y + rowH * 0.5);
  await page.keyboard.up('Control');
  await wall.waitOpen(2);
  const editor = (await wall.paneIds()).find((p) => p !== id)!;
  // vi opened notes.txt with the cursor on line 2 (its ruler or the file itself shows it).
  await wall.waitText(editor, /second line/, 20_000);
  await expect(wall.pane(editor).getByTestId('pane-title')).toContainText('notes.txt');
  await wall.click(editor);
  await wall.type(':q\n');
});
