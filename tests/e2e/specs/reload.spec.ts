// Issue 22 item 2a: a reload (or a navigation to `/`) right at the load event, while the UI
// is still reading the saved wall, must neither replace the wall nor save over it. The page
// itself reloads at its load event (an init script), so the timing is the page's own, not a
// guess of this test's: before the fix, the leaving page saved its still-empty wall on
// `pagehide`, and the next one started from that with one new pane.
import { api, expect, test } from './fixtures';

/** How many times in a row the page leaves at its load event. */
const ROUNDS = 6;

/** The saved document's pane ids and the terminals they name. */
async function savedPanes(): Promise<Record<string, string>> {
  const doc = (await api('GET', '/api/workspace')).workspace;
  const out: Record<string, string> = {};
  for (const [id, p] of Object.entries((doc?.panes ?? {}) as Record<string, { terminalId?: string }>)) out[id] = p.terminalId ?? '';
  return out;
}

test('reloading at the load event, again and again, keeps a 3-pane wall and its saved session', async ({ wall, page }) => {
  test.setTimeout(120_000);
  await wall.prefix('Shift+Digit5');
  await wall.waitOpen(2);
  await wall.prefix('Shift+Quote');
  await wall.waitOpen(3);
  const ids = (await wall.paneIds()).sort();
  const terminals: Record<string, string> = {};
  for (const id of ids) terminals[id] = (await wall.pane(id).getAttribute('data-terminal-id'))!;
  // The wall is saved (debounced) with its three terminals.
  await expect.poll(savedPanes, { timeout: 15_000 }).toEqual(terminals);

  // Leave at the load event ROUNDS times: reloads, and every other one a navigation to `/`.
  await page.addInitScript((rounds: number) => {
    window.addEventListener('load', () => {
      const n = Number(sessionStorage.getItem('reload-rounds') ?? '0');
      if (n >= rounds) return;
      sessionStorage.setItem('reload-rounds', String(n + 1));
      if (n % 2) location.href = '/';
      else location.reload();
    });
  }, ROUNDS);
  await page.reload();
  // Each round destroys the page's context: an evaluate caught in one is asked again.
  await expect.poll(() => page.evaluate(() => sessionStorage.getItem('reload-rounds')).catch(() => null), { timeout: 60_000 }).toBe(String(ROUNDS));
  await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true', { timeout: 30_000 });

  // The same wall, on the same terminals, and nothing left running without a pane.
  await wall.waitOpen(3);
  expect((await wall.paneIds()).sort()).toEqual(ids);
  for (const id of ids) await expect(wall.pane(id)).toHaveAttribute('data-terminal-id', terminals[id]);
  await expect(page.getByTestId('orphans')).toHaveCount(0);
  const running = (await api('GET', '/api/terminals')).terminals.map((t: { id: string }) => t.id).sort();
  expect(running).toEqual(Object.values(terminals).sort());
  expect(await savedPanes()).toEqual(terminals);
});
