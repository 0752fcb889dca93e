// Issue 12 item 14: what a pane's exited session leaves running is named, kept by a restart,
// stopped only on request; closing a pane whose processes are busy asks first.
import { type Locator } from '@playwright/test';
import { type Wall, api, expect, test } from './fixtures';

/** true iff process `pid` exists (the test runs on the sidecar's machine). */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The sidecar's answer status for terminal `id` (200, or 404 once it is gone). */
const status = (id: string) => api('GET', `/api/terminals/${id}`).then(() => 200, (e: Error) => (/ 404 /.test(e.message) ? 404 : 500));

/** Starts a `nohup` python web server in pane `id`'s shell, exits the shell and returns the server's pid. */
async function leaveServerAndExit(wall: Wall, id: string): Promise<number> {
  await wall.click(id);
  await wall.type('nohup python3 -m http.server 0 --bind 127.0.0.1 >/dev/null 2>&1 &\n');
  await wall.type('echo STARTED-$!\n');
  await wall.waitText(id, /^STARTED-\d+$/m);
  const pid = Number((await wall.text(id)).match(/^STARTED-(\d+)$/m)![1]);
  await expect.poll(() => alive(pid)).toBe(true);
  await wall.type('exit\n');
  await expect(wall.pane(id)).toHaveAttribute('data-status', 'exited');
  return pid;
}

async function survivorBanner(pane: Locator, pid: number) {
  await expect(pane.getByTestId('pane-survivors-text')).toHaveText(`exited 0 · python3 (pid ${pid}) still runs from this session · Enter restarts (keeps it)`);
}

test('a nohup server left by exit is named; Enter restarts and keeps it; closing asks (busy program, kept server), Cancel keeps, Close stops', async ({ wall, page }) => {
  const [id] = await wall.paneIds();
  const pane = wall.pane(id);
  const old = (await pane.getAttribute('data-terminal-id'))!;
  const pid = await leaveServerAndExit(wall, id);
  await survivorBanner(pane, pid);
  await wall.waitText(id, new RegExp(`python3 \\(pid ${pid}\\) still runs from this session: Enter restarts and keeps it running`));
  // The sidecar reports it (protocol §4 survivors).
  expect((await api('GET', `/api/terminals/${old}`)).survivors).toEqual([{ pid, name: 'python3' }]);

  await wall.type('\n');
  await expect(pane).toHaveAttribute('data-status', 'open');
  await expect(pane).not.toHaveAttribute('data-terminal-id', old);
  await expect(pane.getByTestId('pane-survivors')).toHaveCount(0);
  await page.waitForTimeout(6000); // well past a deletion's 2 s SIGKILL grace
  expect(alive(pid)).toBe(true);
  // The old terminal stays registered while its server runs.
  expect((await api('GET', `/api/terminals/${old}`)).survivors).toEqual([{ pid, name: 'python3' }]);
  // The header still says so.
  await expect(pane.getByTestId('pane-kept')).toHaveText('+ python3');
  await expect(pane.getByTestId('pane-kept')).toHaveAttribute('title', new RegExp(`^python3 \\(pid ${pid}\\) still runs from an earlier session in this pane`));

  // A busy program in the new shell, and the kept server: Ctrl-b x asks, naming both.
  const now = (await pane.getAttribute('data-terminal-id'))!;
  await wall.type('sleep 1000\n');
  await expect.poll(async () => (await api('GET', `/api/terminals/${now}`)).foreground).toBe('sleep');
  // (Not wall.prefix: the question takes the keyboard, so it never comes back to the pane.)
  await page.keyboard.press('Control+b');
  await page.keyboard.press('x');
  const ask = page.getByTestId('close-confirm');
  await expect(ask).toBeVisible();
  await expect(ask.getByTestId('close-confirm-reasons').locator('li')).toHaveText([
    'sleep is running in this pane',
    `python3 (pid ${pid}) still runs from an earlier session in this pane`,
  ]);
  await expect(ask.getByTestId('close-confirm-cancel')).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(ask).toHaveCount(0);
  await wall.waitKeyboardFocus(); // back in the pane
  await expect(wall.panes()).toHaveCount(1);
  await expect(pane).toHaveAttribute('data-terminal-id', now);
  expect(alive(pid)).toBe(true);

  // The header's close button asks the same; "Close and stop" closes and stops everything.
  await pane.getByTestId('pane-close').click();
  await expect(ask).toBeVisible();
  await ask.getByTestId('close-confirm-ok').click();
  await expect(ask).toHaveCount(0);
  await expect(pane).toHaveCount(0);
  await wall.waitOpen(1); // the last pane closed: a fresh one
  await expect.poll(() => alive(pid), { timeout: 8000 }).toBe(false);
  await expect.poll(() => status(old)).toBe(404);
  await expect.poll(() => status(now)).toBe(404);
});

test('a kept terminal is deleted once what it kept has ended', async ({ wall }) => {
  const [id] = await wall.paneIds();
  const pane = wall.pane(id);
  const old = (await pane.getAttribute('data-terminal-id'))!;
  const pid = await leaveServerAndExit(wall, id);
  await survivorBanner(pane, pid);
  await wall.type('\n');
  await expect(pane.getByTestId('pane-kept')).toHaveText('+ python3');
  process.kill(pid, 'SIGTERM'); // ended elsewhere
  await expect.poll(() => status(old), { timeout: 15_000 }).toBe(404);
  await expect(pane.getByTestId('pane-kept')).toHaveCount(0);
  await expect(pane).toHaveAttribute('data-status', 'open');
});

test('"Stop it" stops what the exited session left running; the pane stays exited and Enter restarts', async ({ wall }) => {
  const [id] = await wall.paneIds();
  const pane = wall.pane(id);
  const old = (await pane.getAttribute('data-terminal-id'))!;
  const pid = await leaveServerAndExit(wall, id);
  await survivorBanner(pane, pid);
  await pane.getByTestId('pane-survivors-stop').click();
  await expect(pane.getByTestId('pane-survivors')).toHaveCount(0);
  await expect.poll(() => alive(pid), { timeout: 8000 }).toBe(false);
  await expect.poll(() => status(old)).toBe(404);
  await wall.waitText(id, new RegExp(`\\[stopped python3 \\(pid ${pid}\\)\\]`));
  await expect(pane).toHaveAttribute('data-status', 'exited');
  await wall.click(id);
  await wall.type('\n');
  await expect(pane).toHaveAttribute('data-status', 'open');
  await wall.type('echo again-$((2+3))\n');
  await wall.waitText(id, /^again-5$/m);
});

test('an idle shell closes without a question; an exit with nothing left restarts as before', async ({ wall, page }) => {
  const [first] = await wall.paneIds();
  await wall.click(first);
  await wall.prefix('Shift+Digit5');
  await wall.waitOpen(2);
  const second = await wall.focusedId();
  await wall.type('exit 0\n');
  await expect(wall.pane(second)).toHaveAttribute('data-status', 'exited');
  await page.waitForTimeout(500);
  await expect(wall.pane(second).getByTestId('pane-survivors')).toHaveCount(0);
  await wall.prefix('x');
  await expect(wall.pane(second)).toHaveCount(0);
  await wall.click(first);
  await wall.prefix('x');
  await expect(page.getByTestId('close-confirm')).toHaveCount(0);
  await expect(wall.pane(first)).toHaveCount(0);
  await wall.waitOpen(1);
});
