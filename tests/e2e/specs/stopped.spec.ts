// Porthole stopping under an open page (web mode: Ctrl-C, or `POST /api/shutdown`): the
// whole app shows one "Porthole has stopped" state, not a "reconnecting…" terminal and a
// screencast offering Relaunch; the prefix keys do nothing meanwhile. A sidecar of its own
// (the shared one must live on).
import { expect, test } from '@playwright/test';
import { type Sidecar, startSidecar } from '../sidecar';
import { Wall, openScreencast, servePages } from './fixtures';

let s: Sidecar;
test.beforeEach(async () => {
  s = await startSidecar({ name: 'stopped' });
});
test.afterEach(async () => {
  await s?.stop();
});

async function open(page: import('@playwright/test').Page): Promise<Wall> {
  const { url } = await s.call('POST', '/api/login-codes');
  await page.goto(new URL(url, s.url).toString());
  await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
  const wall = new Wall(page);
  await wall.waitOpen(1);
  return wall;
}

test('a stopped Porthole covers the app with one state, and the keys go nowhere', async ({ page }) => {
  test.setTimeout(90_000);
  const site = await servePages({ '/': '<!doctype html><title>still here</title><h1>page</h1>' });
  try {
    const wall = await open(page);
    const { id: cast } = await openScreencast(wall, `${site.origin}/`);
    const [term] = await wall.paneIds();
    await wall.waitText(term, /touched/);
    await expect(page.getByTestId('stopped-overlay')).toHaveCount(0);

    await s.call('POST', '/api/shutdown');
    const overlay = page.getByTestId('stopped-overlay');
    await expect(overlay).toHaveAttribute('data-liveness', 'stopped', { timeout: 15_000 });
    await expect(overlay.getByRole('alertdialog')).toBeFocused();
    await expect(overlay).toContainText('Porthole has stopped');
    // The panes stay as they were underneath (their last output and frame), covered.
    expect(await wall.text(term)).toMatch(/touched/);
    await expect(wall.pane(cast)).toHaveAttribute('data-mode', 'screencast');
    // Clicks land on the overlay, not on a pane's Relaunch or terminal.
    const box = (await wall.rect(cast))!;
    const hit = await page.evaluate(({ x, y }) => document.elementFromPoint(x, y)?.closest('[data-testid=stopped-overlay]') !== null, {
      x: box.x + box.width / 2,
      y: box.y + box.height / 2,
    });
    expect(hit).toBe(true);
    // The prefix does nothing: no split (it would try to start a terminal that can't exist).
    await page.keyboard.press('Control+b');
    await page.keyboard.press('%');
    await expect(wall.panes()).toHaveCount(2);
  } finally {
    await site.close();
  }
});

test('a wall of terminals only shows it too, and a restart on the same port asks for the new address', async ({ page }) => {
  test.setTimeout(90_000);
  const wall = await open(page);
  const [term] = await wall.paneIds();
  await wall.click(term);
  await wall.type('echo before\n');
  await wall.waitText(term, /^before$/m);
  // A clean shutdown hangs up the shell first: the pane sees an exit, not a dropped socket.
  const port = Number(new URL(s.url).port);
  await s.stop();
  const overlay = page.getByTestId('stopped-overlay');
  await expect(overlay).toHaveAttribute('data-liveness', 'stopped', { timeout: 15_000 });
  await expect(overlay).toContainText('Still checking');
  // A new Porthole on the same port: this page's session cookie means nothing to it.
  s = await startSidecar({ name: 'stopped-again', port });
  await expect(overlay).toHaveAttribute('data-liveness', 'signed-out', { timeout: 20_000 });
  await expect(overlay).toContainText('Porthole was restarted');
  await expect(overlay).not.toContainText('Still checking');
});
