// Issue 12 item 15: running terminals that no pane shows (a workspace document this UI cannot
// read, a terminal made through the API) are offered in the baseboard: Show puts each in a
// pane on that terminal, Stop ends them.
import { api, expect, login, test } from './fixtures';

const status = (id: string) => api('GET', `/api/terminals/${id}`).then(() => 200, (e: Error) => (/ 404 /.test(e.message) ? 404 : 500));

test('after an unreadable workspace document the old terminals are offered; Show attaches panes to them; Stop ends an API-made one', async ({ wall, page }) => {
  const [first] = await wall.paneIds();
  await wall.click(first);
  // Restarted once: its terminal runs under the pane's first handle (protocol §4 `pane`).
  const handle1 = (await wall.pane(first).getAttribute('data-handle'))!;
  await wall.type('exit\n');
  await expect(wall.pane(first)).toHaveAttribute('data-status', 'exited');
  await wall.type('\n');
  await expect(wall.pane(first)).toHaveAttribute('data-status', 'open');
  await expect(wall.pane(first)).not.toHaveAttribute('data-terminal-id', handle1);
  await wall.type('echo orphan-one-$((40+2))\n');
  await wall.waitText(first, /^orphan-one-42$/m);
  const t1 = (await wall.pane(first).getAttribute('data-terminal-id'))!;
  await wall.prefix('Shift+Digit5');
  await wall.waitOpen(2);
  const second = await wall.focusedId();
  const t2 = (await wall.pane(second).getAttribute('data-terminal-id'))!;
  await wall.type('sleep 1000\n');
  await expect.poll(async () => (await api('GET', `/api/terminals/${t2}`)).foreground).toBe('sleep');

  // Leave the page, then store a document this UI cannot read (a later version's).
  await page.goto('about:blank');
  await api('PUT', '/api/workspace', { workspace: { version: 99, panes: 'from the future' } });
  await login(page);
  await wall.waitOpen(1);
  const [fresh] = await wall.paneIds();
  const tFresh = (await wall.pane(fresh).getAttribute('data-terminal-id'))!;
  expect([t1, t2]).not.toContain(tFresh);
  const offer = page.getByTestId('orphans');
  await expect(page.getByTestId('orphans-text')).toHaveText(`2 terminals running without a pane: bash (${t1}), sleep (${t2})`);

  await page.getByTestId('orphans-show').click();
  await expect(offer).toHaveCount(0);
  await wall.waitOpen(3);
  const one = page.locator(`[data-testid=pane][data-terminal-id="${t1}"]`);
  const two = page.locator(`[data-testid=pane][data-terminal-id="${t2}"]`);
  await expect(one).toHaveAttribute('data-handle', handle1);
  await expect(two).toHaveAttribute('data-handle', t2);
  await expect(two).toHaveCount(1);
  const oneId = (await one.getAttribute('data-pane-id'))!;
  await wall.waitText(oneId, /^orphan-one-42$/m);
  await wall.click(oneId);
  await wall.type('echo shown-again\n');
  await wall.waitText(oneId, /^shown-again$/m);
  // The wall is saved with them: a reload offers nothing.
  await expect.poll(async () => JSON.stringify((await api('GET', '/api/workspace')).workspace)).toContain(t2);

  // A terminal made through the API shows in no pane: offered after a reload; Stop ends it.
  const { id: t3 } = await api('POST', '/api/terminals', { cols: 80, rows: 24 });
  await expect.poll(async () => (await api('GET', `/api/terminals/${t3}`)).foreground).toBe('bash');
  await page.reload();
  await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
  await wall.waitOpen(3);
  await expect(page.getByTestId('orphans-text')).toHaveText(`1 terminal running without a pane: bash (${t3})`);
  await page.getByTestId('orphans-stop').click();
  await expect(offer).toHaveCount(0);
  await expect.poll(() => status(t3)).toBe(404);
  await wall.waitOpen(3);
  expect(await status(t1)).toBe(200);
  expect(await status(t2)).toBe(200);
});
