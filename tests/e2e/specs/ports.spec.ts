// Ports from a terminal pane's context menu: a real python3 -m http.server in a real
// terminal, listed by the sidecar's scan (protocol §7), opened embedded beside the terminal,
// reused, and named by the browser pane's dev-server chip.
import { type Wall, expect, startServer, test } from './fixtures';

function frameOf(wall: Wall, paneId: string) {
  return wall.page.frameLocator(`[data-testid=pane][data-pane-id="${paneId}"] iframe[data-testid=browser-frame]`);
}

async function rightClick(wall: Wall, id: string) {
  await wall.pane(id).getByTestId('terminal-body').click({ button: 'right' });
  await expect(wall.page.getByTestId('context-menu')).toBeVisible();
}

test('a listening port opens embedded beside its terminal, is reused, and the chip names the terminal', async ({ wall, page }) => {
  test.setTimeout(90_000);
  const [term] = await wall.paneIds();
  const port = await startServer(wall, term);
  const menu = page.getByTestId('context-menu');

  // Right-click: the scan lists the port with its process and address.
  await rightClick(wall, term);
  const row = menu.locator(`[data-testid=port-row][data-port="${port}"]`);
  await expect(row).toBeVisible();
  await expect(row).toContainText(`:${port}`);
  await expect(row).toContainText('python3');
  await expect(row).toContainText('127.0.0.1');
  await expect(menu.getByTestId('port-open-screencast')).toBeEnabled();
  // This sidecar has no display: Pop out is disabled and says why, as text (not a tooltip).
  await expect(menu.getByTestId('port-open-popout')).toBeDisabled();
  await expect(menu.getByTestId('port-open-popout-reason')).toHaveText('No display to open a window on (neither DISPLAY nor WAYLAND_DISPLAY is set)');
  await expect(menu.getByTestId('port-open-popout-reason')).toBeVisible();

  // Open embedded: a browser pane splits beside the terminal (right: the pane is wide).
  await menu.getByTestId('port-open-iframe').click();
  await expect(menu).toHaveCount(0);
  await expect(wall.visiblePanes()).toHaveCount(2);
  const browser = await wall.focusedId();
  expect(browser).not.toBe(term);
  await expect(wall.pane(browser)).toHaveAttribute('data-kind', 'browser');
  await expect(wall.pane(term)).toHaveAttribute('data-kind', 'terminal');
  const t = await wall.rect(term);
  const b = await wall.rect(browser);
  expect(b.x).toBeGreaterThan(t.x + t.width - 1);
  await expect(frameOf(wall, browser).locator('body')).toContainText('Directory listing for /', { timeout: 20_000 });
  await expect(frameOf(wall, browser).locator('a', { hasText: 'hello-ports.txt' })).toBeVisible();
  await expect(wall.pane(browser).getByTestId('browser-url')).toHaveText(`localhost:${port}`);

  // The same again, from the keyboard (Ctrl-b >, 1, Enter): focuses that pane, no new one.
  await wall.click(term);
  await page.keyboard.press('Control+b');
  await page.keyboard.press('Shift+Period'); // >
  await expect(menu.locator(`[data-testid=port-row][data-port="${port}"]`)).toBeVisible();
  await page.keyboard.press('1');
  await expect(menu.getByTestId('port-open-iframe')).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(menu).toHaveCount(0);
  await expect(wall.panes()).toHaveCount(2);
  await expect(wall.pane(browser)).toHaveAttribute('data-focused', 'true');

  // The dev-server chip names the terminal; a click focuses it.
  const chip = wall.pane(browser).getByTestId('dev-server-chip');
  const title = (await wall.pane(term).getByTestId('pane-title').textContent())!;
  await expect(chip).toHaveText(title, { timeout: 15_000 });
  await expect(chip).toHaveAttribute('data-pane', term);
  await chip.click();
  await expect(wall.pane(term)).toHaveAttribute('data-focused', 'true');

  // Reuse survives an app reload (the origin is in the workspace document).
  await page.reload();
  await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
  await expect(wall.pane(browser)).toHaveAttribute('data-kind', 'browser');
  await rightClick(wall, term);
  await menu.locator(`[data-testid=port-row][data-port="${port}"]`).waitFor();
  await menu.getByTestId('port-open-iframe').click();
  await expect(menu).toHaveCount(0);
  await expect(wall.panes()).toHaveCount(2);
  await expect(wall.pane(browser)).toHaveAttribute('data-focused', 'true');

  // A closed one is created again.
  await wall.pane(browser).getByTestId('pane-close').click();
  await expect(wall.panes()).toHaveCount(1);
  await rightClick(wall, term);
  await menu.locator(`[data-testid=port-row][data-port="${port}"]`).waitFor();
  await menu.getByTestId('port-open-iframe').click();
  await expect(wall.visiblePanes()).toHaveCount(2);
  const again = await wall.focusedId();
  expect(again).not.toBe(browser);
  expect(again).not.toBe(term);
  await expect(frameOf(wall, again).locator('body')).toContainText('Directory listing for /', { timeout: 20_000 });

  // Open as screencast: its own pane (mode screencast), reused for the same (pane, port, mode).
  await rightClick(wall, term);
  await menu.locator(`[data-testid=port-row][data-port="${port}"]`).waitFor();
  await menu.getByTestId('port-open-screencast').click();
  await expect(menu).toHaveCount(0);
  await expect(wall.visiblePanes()).toHaveCount(3);
  const cast = await wall.focusedId();
  expect([term, again]).not.toContain(cast);
  await expect(wall.pane(cast)).toHaveAttribute('data-mode', 'screencast');
  await expect(wall.pane(cast).getByTestId('screencast-canvas')).not.toHaveAttribute('data-frame', '0', { timeout: 20_000 });
  // Its Display menu offers Pop out, disabled with the same reason shown under it.
  await wall.pane(cast).getByTestId('browser-display').click();
  await expect(wall.pane(cast).getByTestId('display-popout')).toBeDisabled();
  await expect(wall.pane(cast).getByTestId('display-popout-reason')).toHaveText('No display to open a window on (neither DISPLAY nor WAYLAND_DISPLAY is set)');
  await page.keyboard.press('Escape');
  await expect(wall.pane(cast).getByTestId('browser-display-menu')).toHaveCount(0);
  await rightClick(wall, term);
  await menu.locator(`[data-testid=port-row][data-port="${port}"]`).waitFor();
  await menu.getByTestId('port-open-screencast').click();
  await expect(menu).toHaveCount(0);
  await expect(wall.panes()).toHaveCount(3);
  await expect(wall.pane(cast)).toHaveAttribute('data-focused', 'true');

  // Stop the server: the menu then says so (an empty scan, not a failure).
  await wall.click(term);
  await page.keyboard.press('Control+c');
  await wall.waitText(term, /KeyboardInterrupt|\$ $/m);
  await rightClick(wall, term);
  await expect(menu.getByTestId('ports-empty')).toHaveText('No listening ports');
  await page.keyboard.press('Escape');
  await expect(menu).toHaveCount(0);
});

test('a fresh pane has no listening ports; Escape closes the menu', async ({ wall, page }) => {
  const [term] = await wall.paneIds();
  await rightClick(wall, term);
  const menu = page.getByTestId('context-menu');
  await expect(menu.getByTestId('ports-empty')).toHaveText('No listening ports');
  await expect(menu.getByTestId('ports-error')).toHaveCount(0);
  await expect(menu.getByTestId('port-row')).toHaveCount(0);
  await page.keyboard.press('Escape');
  await expect(menu).toHaveCount(0);
  await expect(wall.panes()).toHaveCount(1);
});
