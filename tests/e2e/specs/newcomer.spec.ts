// Issue 22 item 15: a newcomer learns that a port is listening and that right-clicking the
// terminal opens it. A real python3 http.server in a real terminal: its port shows as a chip
// in the pane's header with a one-line hint, once; after the hint is dismissed, or its advice
// used (a right-click on the terminal), it is not shown again, reloads included. The baseboard's
// hint strip names the right-click.
import { expect, startServer, test } from './fixtures';

test('a listening port shows a chip with a one-time hint; dismissed, it stays gone across reloads', async ({ wall, page }) => {
  test.setTimeout(90_000);
  await expect(page.getByTestId('hint-right-click')).toContainText('right-click');
  const [term] = await wall.paneIds();
  await expect(wall.pane(term).getByTestId('listening-chip')).toHaveCount(0);
  const port = await startServer(wall, term);

  const chip = wall.pane(term).getByTestId('listening-chip');
  await expect(chip).toHaveAttribute('data-port', String(port), { timeout: 20_000 });
  await expect(chip).toHaveText(`:${port}`);
  const hint = page.getByTestId('listening-hint');
  await expect(hint).toHaveCount(1);
  await expect(hint).toContainText(`listening on :${port}`);
  await expect(hint).toContainText('Right-click the terminal');

  // Still there after a reload while not yet dismissed: it is the page's first time still.
  await page.reload();
  await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
  await expect(wall.pane(term).getByTestId('listening-chip')).toHaveAttribute('data-port', String(port), { timeout: 20_000 });
  await expect(hint).toHaveCount(1);

  await page.getByTestId('listening-hint-dismiss').click();
  await expect(hint).toHaveCount(0);
  await expect(chip).toBeVisible(); // the chip stays; only the hint goes

  await page.reload();
  await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
  await expect(wall.pane(term).getByTestId('listening-chip')).toHaveAttribute('data-port', String(port), { timeout: 20_000 });
  await expect(hint).toHaveCount(0);

  // The chip's click opens the context menu on the port's row.
  await chip.click();
  await expect(page.getByTestId('context-menu').locator(`[data-testid=port-row][data-port="${port}"]`)).toBeVisible();
  await page.keyboard.press('Escape');
});

test('using the advice (a right-click on the terminal) retires the hint, across reloads', async ({ wall, page }) => {
  test.setTimeout(90_000);
  const [term] = await wall.paneIds();
  const port = await startServer(wall, term);
  const chip = wall.pane(term).getByTestId('listening-chip');
  await expect(chip).toHaveAttribute('data-port', String(port), { timeout: 20_000 });
  const hint = page.getByTestId('listening-hint');
  await expect(hint).toHaveCount(1);

  await wall.pane(term).getByTestId('terminal-body').click({ button: 'right' });
  const menu = page.getByTestId('context-menu');
  await expect(menu.locator(`[data-testid=port-row][data-port="${port}"]`)).toBeVisible();
  await expect(hint).toHaveCount(0);
  await page.keyboard.press('Escape');

  await page.reload();
  await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
  await expect(wall.pane(term).getByTestId('listening-chip')).toHaveAttribute('data-port', String(port), { timeout: 20_000 });
  await expect(hint).toHaveCount(0);
});
