// Remote workspaces (issue 28, protocol §11) through the UI, against a real sshd in a private
// network namespace (fixtures `startTestSshd`, as scripts/test-sshd.sh): "New remote
// workspace…" connects to the test host and opens a workspace whose terminal runs there
// (`hostname` says porthole-remote-test); the link's ssh killed (and held down) while output
// is being made → the tab says reconnecting, then connected, and the terminal ends with the
// whole output; a split there is remote too; a page reload finds the remote workspace and
// the same shell (`$$`), and so does a restart of the local sidecar. An unknown host or host
// key shows the sidecar's error (code, ssh's stderr) and creates nothing. A remote pane's
// `python3 -m http.server` is listed in its pane menu and opens embedded (a grant through the
// link) and as a screencast (the local Chromium through the link), showing the remote's
// listing while the laptop serves the same port number, which is never asked. A
// sidecar of its own: it needs the test ssh config and the remote binary
// (PORTHOLE_SSH_CONFIG, PORTHOLE_REMOTE_BIN).
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type Locator, type Page, expect, test } from '@playwright/test';
import { type Sidecar, startSidecar } from '../sidecar';
import { type TestSshd, Wall, startTestSshd } from './fixtures';

const repo = path.resolve(import.meta.dirname, '../../..');

let sshd: TestSshd | null = null;
let s: Sidecar | null = null;
test.beforeEach(async () => {
  sshd = await startTestSshd();
  s = await startSidecar({
    name: 'remote',
    env: remoteEnv(),
  });
});
test.afterEach(async () => {
  // The local sidecar first (its links' ssh go), then the remote (its daemon and shells).
  await s?.stop();
  await sshd?.stop();
  s = null;
  sshd = null;
});

/** The local sidecar's environment: the test sshd's ssh config, and this build's sidecar as the remote binary. */
function remoteEnv(): Record<string, string> {
  return { PORTHOLE_SSH_CONFIG: sshd!.sshConfig, PORTHOLE_REMOTE_BIN: process.env.PORTHOLE_SIDECAR_BIN ?? path.join(repo, 'target/debug/porthole-sidecar') };
}

/** Connects to the test host from the "New remote workspace…" dialog; the host's tab, once active. */
async function connectTestHost(page: Page): Promise<Locator> {
  await page.getByTestId('ws-new-remote').click();
  await page.getByTestId('remote-host').fill('porthole-test');
  await page.getByTestId('remote-connect').click();
  const tab = page.locator('[data-testid=ws-tab][data-host=porthole-test]');
  await expect(tab).toHaveAttribute('data-active', 'true', { timeout: 20_000 });
  return tab;
}

async function open(page: Page): Promise<Wall> {
  page.on('pageerror', (e) => console.log(`[pageerror] ${e.message}`));
  const { url } = await s!.call('POST', '/api/login-codes');
  await page.goto(new URL(url, s!.url).toString());
  await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
  return new Wall(page);
}

/** The last non-empty line before the prompt line of pane `id`'s text. */
function lastOutputLine(text: string): string {
  const lines = text.split('\n').map((l) => l.trimEnd()).filter((l) => l !== '');
  while (lines.length && /^\$\s*$/.test(lines[lines.length - 1])) lines.pop();
  return lines[lines.length - 1] ?? '';
}

test('a remote workspace: connect, run there, survive a dropped link, come back after a reload', async ({ page }) => {
  test.setTimeout(150_000);
  const wall = await open(page);
  await wall.waitOpen(1);
  const [local] = await wall.paneIds();

  // New remote workspace… → the dialog → Connect.
  await page.getByTestId('ws-new-remote').click();
  const dialog = page.getByTestId('remote-dialog');
  await expect(dialog).toBeVisible();
  await dialog.getByTestId('remote-host').fill('porthole-test');
  await dialog.getByTestId('remote-connect').click();
  await expect(dialog).toBeHidden({ timeout: 20_000 });
  const tab = page.locator('[data-testid=ws-tab][data-host=porthole-test]');
  await expect(tab).toHaveAttribute('data-active', 'true');
  await expect(tab.getByTestId('ws-remote')).toHaveAttribute('data-state', 'connected', { timeout: 10_000 });
  await wall.waitOpen(1);
  const remote = await wall.focusedId();
  expect(remote).not.toBe(local);

  // The terminal runs on the remote: its hostname is the namespace's.
  await wall.type('hostname\n');
  await wall.waitText(remote, /^porthole-remote-test$/m, 15_000);
  await wall.type('echo pid=$$\n');
  await wall.waitText(remote, /^pid=\d+$/m);
  const pid = /^pid=(\d+)$/m.exec(await wall.text(remote))![1];

  // The link's ssh killed while output is being made, and held down a moment: reconnecting.
  const [link] = (await s!.call('GET', '/api/remotes')).remotes;
  expect(link.host).toBe('porthole-test');
  fs.writeFileSync(sshd!.blockFile, '');
  await wall.type('sleep 1; seq 1 200000\n');
  await page.waitForTimeout(300);
  process.kill(link.ssh_pid, 'SIGKILL');
  await expect(tab.getByTestId('ws-remote')).toHaveAttribute('data-state', 'reconnecting', { timeout: 10_000 });
  await expect(wall.pane(remote)).toHaveAttribute('data-status', 'reconnecting', { timeout: 10_000 });
  // Other workspaces go on meanwhile: the local one answers.
  await page.locator('[data-testid=ws-tab]').first().click();
  await wall.waitOpen(1);
  await wall.click(local);
  await wall.type('echo local-ok\n');
  await wall.waitText(local, /^local-ok$/m);
  await tab.click();
  fs.rmSync(sshd!.blockFile);
  await expect(tab.getByTestId('ws-remote')).toHaveAttribute('data-state', 'connected', { timeout: 30_000 });
  await expect(wall.pane(remote)).toHaveAttribute('data-status', 'open', { timeout: 20_000 });
  await expect.poll(async () => lastOutputLine(await wall.text(remote)), { timeout: 20_000 }).toBe('200000');
  const after = (await s!.call('GET', '/api/remotes')).remotes[0];
  expect(after.reconnects).toBeGreaterThanOrEqual(1);
  expect(after.remote.daemon_pid).toBe(link.remote.daemon_pid);
  // A split in a remote workspace is remote too.
  await wall.prefix('%');
  await wall.waitOpen(2);
  const split = await wall.focusedId();
  await expect(wall.pane(split)).toHaveAttribute('data-remote', 'porthole-test');
  await wall.type('hostname; echo split-pid=$$\n');
  await wall.waitText(split, /^porthole-remote-test$/m, 15_000);
  expect(await wall.text(split)).not.toContain(`split-pid=${pid}`);
  await page.mouse.move(0, 0);
  await page.screenshot({ path: path.join(repo, 'docs/screenshot-remote.png') });

  // A reload: the remote workspace comes back, on screen, with the same shell.
  await page.reload();
  await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
  const again = page.locator('[data-testid=ws-tab][data-host=porthole-test]');
  await expect(again).toHaveAttribute('data-active', 'true');
  await expect(again.getByTestId('ws-remote')).toHaveAttribute('data-state', 'connected', { timeout: 20_000 });
  await wall.waitOpen(2);
  expect(await wall.focusedId()).toBe(split);
  const back = remote;
  await wall.waitText(back, /^200000$/m, 15_000);
  await wall.click(back);
  await wall.type('echo again=$$\n');
  await wall.waitText(back, new RegExp(`^again=${pid}$`, 'm'), 15_000);
  // Still one link, and the local workspace is still there.
  expect((await s!.call('GET', '/api/remotes')).remotes).toHaveLength(1);
  await expect(page.locator('[data-testid=ws-tab]')).toHaveCount(2);
});

test('an unknown host or host key: the sidecar says why, nothing is created', async ({ page }) => {
  const wall = await open(page);
  await wall.waitOpen(1);
  await page.getByTestId('ws-new-remote').click();
  const dialog = page.getByTestId('remote-dialog');
  await dialog.getByTestId('remote-host').fill('no-such-host.invalid');
  await dialog.getByTestId('remote-connect').click();
  const error = dialog.getByTestId('remote-error');
  await expect(error).toBeVisible({ timeout: 20_000 });
  await expect(error).toHaveAttribute('data-code', 'remote_unreachable');
  await expect(page.locator('[data-testid=ws-tab]')).toHaveCount(1);
  expect((await s!.call('GET', '/api/remotes')).remotes).toHaveLength(0);
  // A host whose key is not known: refused, ssh's words shown, nothing connected.
  await dialog.getByTestId('remote-host').fill('porthole-unknown-key');
  await dialog.getByTestId('remote-connect').click();
  await expect(error).toHaveAttribute('data-code', 'host_key', { timeout: 20_000 });
  await expect(error).toContainText(/host key verification failed/i);
  await page.screenshot({ path: path.join(repo, 'docs/screenshot-remote-hostkey.png') });
  await expect(page.locator('[data-testid=ws-tab]')).toHaveCount(1);
  expect((await s!.call('GET', '/api/remotes')).remotes).toHaveLength(0);
  await dialog.getByTestId('remote-cancel').click();
  await expect(dialog).toBeHidden();
});

test('after a local sidecar restart the remote workspace reattaches to the same shell', async ({ page }) => {
  test.setTimeout(120_000);
  let wall = await open(page);
  await wall.waitOpen(1);
  const tab = await connectTestHost(page);
  await wall.waitOpen(1);
  const remote = await wall.focusedId();
  await wall.type('echo before=$$\n');
  await wall.waitText(remote, /^before=\d+$/m, 15_000);
  const pid = /^before=(\d+)$/m.exec(await wall.text(remote))![1];
  // Saved (debounced), then the local sidecar stops: its link goes, the remote daemon stays.
  await page.waitForTimeout(1000);
  await s!.stop({ keep: true });
  const env = remoteEnv();
  s = await startSidecar({ name: 'remote', tmp: s!.tmp, env });
  wall = await open(page);
  await expect(tab).toHaveAttribute('data-active', 'true');
  await expect(tab.getByTestId('ws-remote')).toHaveAttribute('data-state', 'connected', { timeout: 30_000 });
  await wall.waitOpen(1);
  expect(await wall.focusedId()).toBe(remote);
  await wall.click(remote);
  await wall.type('echo after=$$\n');
  await wall.waitText(remote, new RegExp(`^after=${pid}$`, 'm'), 20_000);
});

test("a remote pane's port opens embedded and as a screencast: the remote's server, never the laptop's", async ({ page }) => {
  test.setTimeout(120_000);
  // The laptop serves a port of its own; the remote serves the same number.
  let laptopHits = 0;
  const laptop = http.createServer((_req, res) => {
    laptopHits++;
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<title>laptop</title>served-by-the-laptop');
  });
  await new Promise<void>((r) => laptop.listen(0, '127.0.0.1', r));
  const port = (laptop.address() as AddressInfo).port;
  try {
    const wall = await open(page);
    await wall.waitOpen(1);
    const tab = await connectTestHost(page);
    await wall.waitOpen(1);
    const term = await wall.focusedId();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'porthole-remote-ports-'));
    fs.writeFileSync(path.join(dir, 'remote-side.txt'), 'remote\n');
    await wall.type(`cd ${dir} && python3 -m http.server ${port} --bind 127.0.0.1\n`);
    await wall.waitText(term, /Serving HTTP on \S+ port \d+/, 20_000);

    // The pane menu lists the remote process's port (the remote daemon's scan).
    const menu = page.getByTestId('context-menu');
    await wall.pane(term).getByTestId('terminal-body').click({ button: 'right' });
    const row = menu.locator(`[data-testid=port-row][data-port="${port}"]`);
    await expect(row).toBeVisible({ timeout: 15_000 });
    await expect(row).toContainText('python3');
    await menu.getByTestId('port-open-iframe').click();
    await expect(menu).toHaveCount(0);
    await wall.waitOpen(2);
    const browser = await wall.focusedId();
    await expect(wall.pane(browser)).toHaveAttribute('data-remote', 'porthole-test');
    const frame = page.frameLocator(`[data-testid=pane][data-pane-id="${browser}"] iframe[data-testid=browser-frame]`);
    await expect(frame.locator('a', { hasText: 'remote-side.txt' })).toBeVisible({ timeout: 20_000 });
    const grants = (await s!.call('GET', '/api/proxy/grants')).grants;
    expect(grants.map((g: { remote?: string }) => g.remote)).toEqual(['r1']);

    // As a screencast: the local Chromium through the tunnel.
    await wall.pane(term).getByTestId('terminal-body').click({ button: 'right' });
    await expect(row).toBeVisible({ timeout: 15_000 });
    await menu.getByTestId('port-open-screencast').click();
    await expect(menu).toHaveCount(0);
    await expect.poll(async () => (await s!.call('GET', '/api/browsers')).browsers.length, { timeout: 30_000 }).toBe(1);
    const [{ id }] = (await s!.call('GET', '/api/browsers')).browsers;
    await expect.poll(async () => (await s!.call('GET', `/api/browsers/${id}`)).title, { timeout: 30_000 }).toBe('Directory listing for /');
    expect((await s!.call('GET', `/api/browsers/${id}`)).remote).toBe('r1');
    expect(laptopHits).toBe(0);
    fs.rmSync(dir, { recursive: true, force: true });
  } finally {
    laptop.closeAllConnections();
    await new Promise((r) => laptop.close(r));
  }
});

/** Runs `cmd` in the focused terminal with its stdout and stderr and exit status in a file; returns them once it ended. */
async function runToFile(wall: Wall, cmd: string, timeout = 30_000): Promise<{ out: string; status: number }> {
  const file = path.join(os.tmpdir(), `porthole-e2e-ph-${process.pid}-${Date.now()}.txt`);
  await wall.type(`${cmd} >${file}.out 2>&1; echo "status=$?" >${file}.st\n`);
  let st = '';
  await expect.poll(() => (st = fs.existsSync(`${file}.st`) ? fs.readFileSync(`${file}.st`, 'utf8') : ''), { timeout }).toMatch(/status=\d+/);
  const out = fs.readFileSync(`${file}.out`, 'utf8');
  fs.rmSync(`${file}.out`, { force: true });
  fs.rmSync(`${file}.st`, { force: true });
  return { out, status: Number(/status=(\d+)/.exec(st)![1]) };
}

test('ph workspace new --ssh: a remote workspace from a pane; a failed connect exits with its code and adds nothing', async ({ page }) => {
  test.setTimeout(120_000);
  const wall = await open(page);
  await wall.waitOpen(1);
  const [local] = await wall.paneIds();
  await wall.click(local);

  // A host ssh cannot reach: exit 2 with the link's code, and no workspace.
  const failed = await runToFile(wall, 'ph workspace new --ssh no-such-host');
  expect(failed.status).toBe(2);
  expect(failed.out).toMatch(/\[remote_unreachable\]/);
  await expect(page.locator('[data-testid=ws-tab]')).toHaveCount(1);
  expect((await s!.call('GET', '/api/remotes')).remotes).toHaveLength(0);
  // A bad host is refused by the sidecar before any ssh.
  const bad = await runToFile(wall, "ph workspace new --ssh='-oProxyCommand=x'");
  expect(bad.status).toBe(2);
  expect(bad.out).toMatch(/\[bad_host\]/);
  await expect(page.locator('[data-testid=ws-tab]')).toHaveCount(1);

  // Without --ssh: a local workspace with one shell, named, shown; its pane's handle printed.
  const loc = await runToFile(wall, 'ph workspace new --name api');
  expect(loc.status, loc.out).toBe(0);
  const handle = /^workspace 2 "api" (t\d+)$/m.exec(loc.out)?.[1];
  expect(handle, loc.out).toBeTruthy();
  await expect(page.locator('[data-testid=ws-tab]')).toHaveCount(2);
  await expect(page.locator('[data-testid=ws-tab][data-active=true]')).toContainText('api');
  await page.locator('[data-testid=ws-tab]').first().click();
  await wall.click(local);

  // The test host: the strip shows its tab, on screen, with a terminal running there.
  const made = await runToFile(wall, 'ph workspace new --ssh porthole-test', 60_000);
  expect(made.status, made.out).toBe(0);
  expect(made.out).toMatch(/^workspace 3 "porthole-test" on porthole-test: remote pane/m);
  const tab = page.locator('[data-testid=ws-tab][data-host=porthole-test]');
  await expect(tab).toHaveAttribute('data-active', 'true');
  await expect(tab.getByTestId('ws-remote')).toHaveAttribute('data-state', 'connected', { timeout: 10_000 });
  await expect(page.locator('[data-testid=ws-tab]')).toHaveCount(3);
  await wall.waitOpen(1);
  const remote = await wall.focusedId();
  expect(remote).not.toBe(local);
  await wall.type('hostname\n');
  await wall.waitText(remote, /^porthole-remote-test$/m, 15_000);
});

test('?ssh=HOST on the web-mode URL opens the dialog connecting: a failure is shown, a good host connects', async ({ page }) => {
  test.setTimeout(120_000);
  page.on('pageerror', (e) => console.log(`[pageerror] ${e.message}`));
  const dialog = page.getByTestId('remote-dialog');
  const error = dialog.getByTestId('remote-error');
  // Through the login URL (as `porthole --ssh` loads it): an unknown host key is shown to the human.
  const { url } = await s!.call('POST', '/api/login-codes');
  await page.goto(new URL(`${url}&ssh=porthole-unknown-key`, s!.url).toString());
  await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
  await expect(dialog).toBeVisible();
  await expect(dialog.getByTestId('remote-host')).toHaveValue('porthole-unknown-key');
  await expect(error).toHaveAttribute('data-code', 'host_key', { timeout: 20_000 });
  expect(new URL(page.url()).searchParams.get('ssh'), 'taken off the address bar').toBeNull();
  await expect(page.locator('[data-testid=ws-tab]')).toHaveCount(1);
  await dialog.getByTestId('remote-cancel').click();

  // A bad host: the dialog's bad_host, nothing spawned.
  await page.goto(new URL('/?ssh=a%20b', s!.url).toString());
  await expect(dialog).toBeVisible();
  await expect(error).toHaveAttribute('data-code', 'bad_host');
  expect((await s!.call('GET', '/api/remotes')).remotes).toHaveLength(0);
  await dialog.getByTestId('remote-cancel').click();

  // The test host: the dialog connects by itself and the remote workspace is there.
  await page.goto(new URL('/?ssh=porthole-test', s!.url).toString());
  await expect(dialog).toBeVisible();
  await expect(dialog.getByTestId('remote-host')).toHaveValue('porthole-test');
  await expect(dialog).toBeHidden({ timeout: 20_000 });
  const tab = page.locator('[data-testid=ws-tab][data-host=porthole-test]');
  await expect(tab).toHaveAttribute('data-active', 'true');
  const wall = new Wall(page);
  await wall.waitOpen(1);
  const remote = await wall.focusedId();
  await wall.type('hostname\n');
  await wall.waitText(remote, /^porthole-remote-test$/m, 15_000);
});
