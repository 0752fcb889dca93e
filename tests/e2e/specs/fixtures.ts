// Shared fixtures: a clean wall per test (all terminals deleted, workspace cleared), a
// page logged in through a fresh one-time login URL, and the screencast helpers (a local
// page server, opening a screencast pane, page points and canvas pixels).
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type Locator, type Page, test as base, expect } from '@playwright/test';
import type { Sidecar } from '../sidecar';

export const BASE = () => process.env.PORTHOLE_E2E_URL!;
const TOKEN = () => process.env.PORTHOLE_E2E_TOKEN!;

/** Calls the sidecar API with the bearer token. */
export async function api(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(new URL(path, BASE()), {
    method,
    headers: { authorization: `Bearer ${TOKEN()}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${await res.text()}`);
  return res.status === 204 ? null : res.json();
}

async function resetSidecar() {
  await api('PUT', '/api/workspace', { workspace: null });
  const { terminals } = await api('GET', '/api/terminals');
  for (const t of terminals) await api('DELETE', `/api/terminals/${t.id}`).catch(() => undefined);
  // Browsers a test left behind (a failed one, or one whose pane was gone) would hold the kept
  // profile of a pane id the next test's wall uses again (409 profile_in_use).
  const { browsers } = await api('GET', '/api/browsers');
  for (const b of browsers) await api('DELETE', `/api/browsers/${b.id}`).catch(() => undefined);
}

export async function login(page: Page) {
  const { url } = await api('POST', '/api/login-codes');
  await page.goto(url);
  await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
}

export const test = base.extend<{ wall: Wall }>({
  wall: async ({ page }, use) => {
    await resetSidecar();
    page.on('pageerror', (e) => console.log(`[pageerror] ${e.message}`));
    await login(page);
    const wall = new Wall(page);
    await wall.waitOpen(1);
    await use(wall);
    // A screencast pane's browser outlives the page (the sidecar keeps it for a reloaded UI):
    // delete the ones this test left so Chromiums do not pile up over a run.
    const browsers = await page
      .locator('[data-browser-id]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-browser-id')))
      .catch(() => [] as (string | null)[]);
    for (const id of browsers) if (id) await api('DELETE', `/api/browsers/${id}`).catch(() => undefined);
  },
});
export { expect };

/** Page helpers for the wall. */
export class Wall {
  constructor(readonly page: Page) {}

  panes(): Locator {
    return this.page.locator('[data-testid=pane]');
  }
  visiblePanes(): Locator {
    return this.page.locator('[data-testid=pane][data-visible=true]');
  }
  pane(id: string): Locator {
    return this.page.locator(`[data-testid=pane][data-pane-id="${id}"]`);
  }

  async paneIds(): Promise<string[]> {
    return this.panes().evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.paneId!));
  }

  async focusedId(): Promise<string> {
    return (await this.page.locator('[data-testid=pane][data-focused=true]').getAttribute('data-pane-id'))!;
  }

  /** Waits until `n` panes are visible and every visible pane is connected. */
  async waitOpen(n: number) {
    await expect(this.visiblePanes()).toHaveCount(n);
    await expect(this.page.locator('[data-testid=pane][data-visible=true]:not([data-status=open])')).toHaveCount(0);
    await this.waitKeyboardFocus();
  }

  /** The pane's terminal text (scrollback + screen), via xterm's buffer. */
  async text(id: string): Promise<string> {
    return this.page.evaluate((id) => (window as any).__porthole.paneText(id) ?? '', id);
  }

  async size(id: string): Promise<{ cols: number; rows: number }> {
    return this.page.evaluate((id) => (window as any).__porthole.paneSize(id), id);
  }

  async waitText(id: string, re: RegExp, timeout = 10_000) {
    await expect.poll(() => this.text(id), { timeout }).toMatch(re);
  }

  /** Clicks into a pane's terminal (focuses it). */
  async click(id: string) {
    await this.pane(id).getByTestId('terminal-body').click();
    await expect(this.pane(id)).toHaveAttribute('data-focused', 'true');
  }

  /** Types into the focused terminal; `\n` is Enter. */
  async type(text: string) {
    await this.page.keyboard.type(text, { delay: 5 });
  }

  /** Presses the prefix (Ctrl-b) and then `key` (a Playwright key name). */
  async prefix(key: string) {
    await this.page.keyboard.press('Control+b');
    await this.page.keyboard.press(key);
    await this.waitKeyboardFocus();
  }

  /** Waits until the keyboard focus is inside the focused pane (it follows a focus change). */
  async waitKeyboardFocus() {
    await this.page.waitForFunction(() => {
      const p = document.querySelector('[data-testid=pane][data-focused=true]');
      return !!p && p.contains(document.activeElement);
    });
  }

  /** Opens a browser pane with the prefix from the focused pane and returns its id (its URL field is focused). */
  async openBrowserWithPrefix(): Promise<string> {
    const before = new Set(await this.paneIds());
    await this.page.keyboard.press('Control+b');
    await this.page.keyboard.press('b');
    const input = this.page.locator('[data-testid=pane][data-focused=true] [data-testid=browser-url-input]');
    await expect(input).toBeFocused();
    const id = await this.focusedId();
    expect(before.has(id)).toBe(false);
    await expect(this.pane(id)).toHaveAttribute('data-kind', 'browser');
    return id;
  }

  /** Closes terminal pane `id`'s socket from the page and waits for the new one to open. */
  async dropConnection(id: string) {
    await this.page.evaluate((id) => {
      const session = (window as any).__porthole.store.runtime(id).session;
      (window as any).__droppedSocket = session.ws;
      session.ws.close();
    }, id);
    await expect
      .poll(() =>
        this.page.evaluate((id) => {
          const ws = (window as any).__porthole.store.runtime(id).session.ws;
          return !!ws && ws !== (window as any).__droppedSocket && ws.readyState === 1;
        }, id),
      )
      .toBe(true);
  }

  async rect(id: string) {
    return (await this.pane(id).boundingBox())!;
  }
}

/** Starts python3's http.server on a free port in pane `term` (in a fresh directory holding `hello-ports.txt`); returns the port. */
export async function startServer(wall: Wall, term: string): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'porthole-ports-'));
  fs.writeFileSync(path.join(dir, 'hello-ports.txt'), 'hello\n');
  await wall.click(term);
  await wall.type(`cd ${dir} && python3 -m http.server 0 --bind 127.0.0.1\n`);
  await wall.waitText(term, /Serving HTTP on \S+ port \d+/, 20_000);
  const m = /Serving HTTP on \S+ port (\d+)/.exec(await wall.text(term));
  return Number(m![1]);
}

// --- screencast panes (shared by screencast*.spec.ts)

/** A local HTTP server for a spec's pages: `pages` maps a path to its HTML. */
export async function servePages(pages: Record<string, string>): Promise<{ origin: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const html = pages[new URL(req.url ?? '/', 'http://x').pathname];
    res.writeHead(html === undefined ? 404 : 200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(html ?? 'not found');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/**
 * Serves `html` on a loopback port of its own while `run` goes, with the app of sidecar `sc`
 * (a spec's own, `startSidecar`) logged in and its first terminal open; the server closes
 * after, whatever `run` did.
 */
export async function withServedPage(page: Page, sc: Sidecar, html: string, run: (wall: Wall, port: number) => Promise<void>) {
  const served = await servePages({ '/': html });
  try {
    const { url } = await sc.call('POST', '/api/login-codes');
    await page.goto(new URL(url, sc.url).toString());
    await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
    const wall = new Wall(page);
    await wall.waitOpen(1);
    await run(wall, Number(new URL(served.origin).port));
  } finally {
    await served.close();
  }
}

/**
 * Opens `url` in a new screencast pane beside the first (touched) terminal, the way a user
 * does (Ctrl-b b, the URL field, Display → Screencast); waits for a painted frame at the
 * pane's size. Returns the pane id and its sidecar browser id.
 */
export async function openScreencast(wall: Wall, url: string): Promise<{ id: string; browser: string }> {
  const [term] = await wall.paneIds();
  await wall.click(term);
  await wall.type('echo touched\n');
  await wall.page.keyboard.press('Control+b');
  await wall.page.keyboard.press('b');
  const input = wall.page.locator('[data-testid=pane][data-focused=true] [data-testid=browser-url-input]');
  await expect(input).toBeFocused();
  const id = await wall.focusedId();
  await input.fill(url);
  await input.press('Enter');
  const pane = wall.pane(id);
  await expect(pane).toHaveAttribute('data-mode', 'iframe');
  await pane.getByTestId('browser-display').click();
  await pane.getByTestId('display-screencast').click();
  await expect(pane).toHaveAttribute('data-mode', 'screencast');
  await expect(pane).toHaveAttribute('data-browser-id', /^b\d+$/, { timeout: 20_000 });
  const browser = (await pane.getAttribute('data-browser-id'))!;
  await expect(pane.getByTestId('screencast-canvas')).not.toHaveAttribute('data-frame', '0', { timeout: 20_000 });
  // Resize with pane: the page has the body's size, and a frame of that size is on screen.
  await expect(pane.locator('.screencast-host')).toHaveAttribute('data-sync', 'synced', { timeout: 15_000 });
  await waitFrameFills(wall.page, id);
  return { id, browser };
}

/**
 * Waits until the frame on pane `id`'s canvas fills it unscaled (Resize with pane, once the
 * page has the body's size). Points computed from the screen (`pointOf`) are only stable
 * then: a frame of another size painted between computing a point and clicking it moves
 * the point on the page.
 */
export async function waitFrameFills(page: Page, id: string) {
  const canvas = page.locator(`[data-testid=pane][data-pane-id="${id}"] [data-testid=screencast-canvas]`);
  await expect
    .poll(
      async () => {
        const [x, y, s] = ((await canvas.getAttribute('data-fit')) ?? 'NaN,NaN,NaN').split(',').map(Number);
        return Math.abs(x) < 1 && Math.abs(y) < 1 && Math.abs(s - 1) < 0.01;
      },
      { timeout: 15_000 },
    )
    .toBe(true);
}

/** Viewport coordinates (for page.mouse) of page CSS point (x, y) in pane `id`'s screencast. */
export async function pointOf(page: Page, id: string, x: number, y: number): Promise<{ x: number; y: number }> {
  const canvas = page.locator(`[data-testid=pane][data-pane-id="${id}"] [data-testid=screencast-canvas]`);
  await expect(canvas).toHaveAttribute('data-fit', /,/);
  const [fx, fy, s] = (await canvas.getAttribute('data-fit'))!.split(',').map(Number);
  const box = (await canvas.boundingBox())!;
  return { x: box.x + fx + x * s, y: box.y + fy + y * s };
}

/** The canvas pixel (RGBA) at page CSS point (x, y). */
export async function pixelAt(page: Page, id: string, x: number, y: number): Promise<number[]> {
  return page.evaluate(
    ({ id, x, y }) => {
      const c = document.querySelector(`[data-pane-id="${id}"] [data-testid=screencast-canvas]`) as HTMLCanvasElement;
      const [fx, , s] = c.dataset.fit!.split(',').map(Number);
      // The canvas holds the frame's own pixels, letterboxed by CSS: canvas px per page CSS px.
      const k = c.width / ((c.getBoundingClientRect().width - 2 * fx) / s);
      const o = new OffscreenCanvas(c.width, c.height).getContext('2d')!;
      o.drawImage(c, 0, 0);
      const d = o.getImageData(Math.min(c.width - 1, Math.round(x * k)), Math.min(c.height - 1, Math.round(y * k)), 1, 1).data;
      return [d[0], d[1], d[2], d[3]];
    },
    { id, x, y },
  );
}

/** true iff two RGB(A) pixels are within 40 per channel (JPEG noise). */
export const near = (a: number[], b: number[]) => a.slice(0, 3).every((v, i) => Math.abs(v - b[i]) <= 40);

/** The title of the active tab of sidecar browser `browser`, read in the page now. */
export async function pageTitle(browser: string): Promise<string> {
  return (await api('GET', `/api/browsers/${browser}`)).title;
}

/** A running test remote (see `startTestSshd`). */
export interface TestSshd {
  /** the temp folder: keys, configs, the remote side's XDG dirs and HOME */
  dir: string;
  /** an ssh config whose `porthole-test` is this sshd with a known host key (`porthole-unknown-key`: the same sshd, its key unknown) */
  sshConfig: string;
  /** while this file exists, new ssh connections fail (the ProxyCommand refuses): a link stays down */
  blockFile: string;
  stop(): Promise<void>;
}

/**
 * Starts the test remote of protocol §11 as `scripts/test-sshd.sh` and
 * sidecar/tests/common/sshd.rs do: OpenSSH's sshd in private network and UTS namespaces
 * (hostname `porthole-remote-test`) reached only through a ProxyCommand, generated host and
 * user keys, the remote's HOME and XDG dirs in a temp folder (a `$ ` prompt there). Needs
 * root. The ProxyCommand refuses while `blockFile` exists (a test holds a link down).
 */
export async function startTestSshd(port = 2222): Promise<TestSshd> {
  const { spawn, execFileSync } = await import('node:child_process');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'porthole-e2e-sshd-'));
  for (const d of ['run', 'state', 'config', 'data', 'home']) fs.mkdirSync(path.join(dir, d), { recursive: true });
  fs.mkdirSync('/run/sshd', { recursive: true });
  fs.writeFileSync(path.join(dir, 'home/.bash_profile'), 'export PS1="\\$ "\nexport PROMPT_COMMAND=\n');
  fs.writeFileSync(path.join(dir, 'home/.bashrc'), 'export PS1="\\$ "\n');
  for (const k of ['host_ed25519', 'user_ed25519']) execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', k, '-f', path.join(dir, k)]);
  const holder = spawn('unshare', ['--net', '--uts', 'sh', '-c', 'hostname porthole-remote-test && ip link set lo up && exec sleep infinity'], { stdio: 'ignore' });
  const hpid = holder.pid!;
  const until = async (what: string, ok: () => boolean) => {
    const end = Date.now() + 20_000;
    while (!ok()) {
      if (Date.now() > end) throw new Error(`test sshd: ${what} within 20 s`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const read = (p: string) => {
    try {
      return fs.readFileSync(p, 'utf8');
    } catch {
      return '';
    }
  };
  await until('the namespace holder did not start', () => read(`/proc/${hpid}/comm`).trim() === 'sleep');
  fs.writeFileSync(
    path.join(dir, 'sshd_config'),
    `Port ${port}\nListenAddress 127.0.0.1\nHostKey ${dir}/host_ed25519\nAuthorizedKeysFile ${dir}/user_ed25519.pub\n` +
      `PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\n` +
      `PidFile ${dir}/sshd.pid\nSetEnv HOME=${dir}/home XDG_RUNTIME_DIR=${dir}/run XDG_STATE_HOME=${dir}/state XDG_CONFIG_HOME=${dir}/config XDG_DATA_HOME=${dir}/data\nLogLevel ERROR\n`,
  );
  const sshd = spawn('nsenter', [`--net=/proc/${hpid}/ns/net`, `--uts=/proc/${hpid}/ns/uts`, '/usr/sbin/sshd', '-D', '-e', '-f', path.join(dir, 'sshd_config')], { stdio: 'ignore' });
  const hostPub = read(path.join(dir, 'host_ed25519.pub')).split(/\s+/).slice(0, 2).join(' ');
  fs.writeFileSync(path.join(dir, 'known_hosts'), `porthole-test ${hostPub}\n`);
  const blockFile = path.join(dir, 'block');
  const proxy = path.join(dir, 'proxy.sh');
  fs.writeFileSync(proxy, `#!/bin/sh\n[ -e '${blockFile}' ] && exit 1\nexec nsenter --net=/proc/${hpid}/ns/net socat STDIO TCP:127.0.0.1:${port}\n`, { mode: 0o755 });
  const sshConfig = path.join(dir, 'ssh_config');
  fs.writeFileSync(
    sshConfig,
    `Host porthole-test\n  HostName 127.0.0.1\n  Port ${port}\n  User root\n  IdentityFile ${dir}/user_ed25519\n  IdentitiesOnly yes\n` +
      `  HostKeyAlias porthole-test\n  UserKnownHostsFile ${dir}/known_hosts\n  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n` +
      `  BatchMode yes\n  LogLevel ERROR\n  ProxyCommand ${proxy}\n` +
      // The same sshd under an alias whose host key nobody knows (protocol §11.5 `host_key`).
      `Host porthole-unknown-key\n  HostName 127.0.0.1\n  Port ${port}\n  User root\n  IdentityFile ${dir}/user_ed25519\n  IdentitiesOnly yes\n` +
      `  HostKeyAlias porthole-unknown-key\n  UserKnownHostsFile /dev/null\n  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n` +
      `  BatchMode yes\n  LogLevel ERROR\n  ProxyCommand ${proxy}\n`,
  );
  const want = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')} 00000000:0000 0A`;
  await until('sshd did not listen', () => read(`/proc/${hpid}/net/tcp`).includes(want));
  const inNamespace = (): number[] => {
    let ns = '';
    try {
      ns = fs.readlinkSync(`/proc/${hpid}/ns/net`);
    } catch {
      return [];
    }
    const out: number[] = [];
    for (const e of fs.readdirSync('/proc')) {
      const pid = Number(e);
      if (!Number.isInteger(pid) || pid === hpid) continue;
      try {
        if (fs.readlinkSync(`/proc/${pid}/ns/net`) === ns) out.push(pid);
      } catch {
        /* gone */
      }
    }
    return out;
  };
  const stop = async () => {
    // The daemon first, politely (it hangs up its shells), then everything in the namespace.
    const daemon = Number(read(path.join(dir, 'run/porthole-remote/daemon.pid')).trim());
    if (Number.isInteger(daemon) && daemon > 1) {
      try {
        process.kill(daemon, 'SIGTERM');
      } catch {
        /* gone */
      }
      const end = Date.now() + 6000;
      while (Date.now() < end && fs.existsSync(`/proc/${daemon}`)) await new Promise((r) => setTimeout(r, 50));
    }
    sshd.kill('SIGKILL');
    for (let i = 0; i < 3; i++) {
      for (const pid of inNamespace())
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      await new Promise((r) => setTimeout(r, 50));
    }
    holder.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return { dir, sshConfig, blockFile, stop };
}
