// Browser panes in the iframe render mode, what the shim reports beyond locations (issue #12):
// title changes an SPA makes, loads the page makes straight from its server's own origin (the
// browser blocks them on CORS inside the frame), the prefix key pressed inside the frame, and a
// hung upstream. Every upstream is a loopback HTTP server started by the test.
import http from 'node:http';
import type net from 'node:net';
import type { Page } from '@playwright/test';
import { type Wall, expect, test } from './fixtures';

/**
 * A loopback server started by the test: `pages` maps a path to [content type, body]. A
 * request for a path starting with `/hang` gets no answer at all (the connection stays open,
 * no response head) until `release()`; `held` counts the ones waiting. No CORS headers.
 */
async function upstream(pages: (port: number) => Record<string, [string, string]>) {
  let waiting: Array<() => void> = [];
  let routes: Record<string, [string, string]> = {};
  const server = http.createServer((req, res) => {
    const p = new URL(req.url ?? '/', 'http://x').pathname;
    const send = () => {
      const page = routes[p];
      res.writeHead(page ? 200 : 404, { 'content-type': page?.[0] ?? 'text/plain', 'cache-control': 'no-store' });
      res.end(page?.[1] ?? 'not found');
    };
    if (p.startsWith('/hang')) waiting.push(send);
    else send();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  routes = pages(port);
  return {
    port,
    held: () => waiting.length,
    release: () => {
      for (const send of waiting) send();
      waiting = [];
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

const HTML = 'text/html; charset=utf-8';

function frameOf(page: Page, paneId: string) {
  return page.frameLocator(`[data-testid=pane][data-pane-id="${paneId}"] iframe[data-testid=browser-frame]`);
}

/** Opens a browser pane beside the first (touched) terminal and loads `url` in it; its id. */
async function openPane(wall: Wall, url: string): Promise<string> {
  const [term] = await wall.paneIds();
  await wall.click(term);
  await wall.type('echo touched\n');
  const id = await wall.openBrowserWithPrefix();
  await typeUrl(wall, url);
  return id;
}

async function typeUrl(wall: Wall, url: string) {
  const input = wall.page.locator('[data-testid=pane][data-focused=true] [data-testid=browser-url-input]');
  await expect(input).toBeFocused();
  await input.fill(url);
  await input.press('Enter');
}

test.describe('the shim beyond locations', () => {
  test('title changes follow: pushState then document.title, and document.title alone', async ({ wall, page }) => {
    const site = await upstream(() => ({
      '/': [
        HTML,
        `<!doctype html><html><head><title>SPA home</title></head><body><h1 id=h>home</h1>
<button id=route onclick="history.pushState({}, '', '/route-two'); document.title = 'Route two'">route</button>
<button id=only onclick="document.title = 'Only the title'">title</button>
<button id=later onclick="setTimeout(function () { document.querySelector('title').textContent = 'Set later' }, 50)">later</button>
</body></html>`,
      ],
    }));
    try {
      const id = await openPane(wall, `127.0.0.1:${site.port}/`);
      const pane = wall.pane(id);
      const url = pane.getByTestId('browser-url');
      await expect(frameOf(page, id).locator('#h')).toHaveText('home');
      await expect(url).toHaveAttribute('title', 'SPA home');

      await frameOf(page, id).locator('#route').click();
      await expect(url).toHaveText(`127.0.0.1:${site.port}/route-two`);
      await expect(url).toHaveAttribute('title', 'Route two');

      await frameOf(page, id).locator('#only').click();
      await expect(url).toHaveAttribute('title', 'Only the title');
      await expect(url).toHaveText(`127.0.0.1:${site.port}/route-two`);

      // The title element's text edited directly, a task later.
      await frameOf(page, id).locator('#later').click();
      await expect(url).toHaveAttribute('title', 'Set later');
      // The app's window title follows the focused pane's.
      await expect(page).toHaveTitle(/Set later/);
    } finally {
      await site.close();
    }
  });

  test("loads from the upstream's own origin that CORS blocks are reported, with Open as screencast", async ({ wall, page }) => {
    const site = await upstream((port) => ({
      '/fetch.html': [
        HTML,
        `<!doctype html><html><head><title>Fetches</title></head><body><p id=rel>…</p><p id=abs>…</p><script>
fetch('/data.json').then(function (r) { return r.text() }).then(function (t) { document.getElementById('rel').textContent = 'relative ' + t });
fetch('http://127.0.0.1:${port}/data.json').then(function () { document.getElementById('abs').textContent = 'absolute ok' },
  function () { document.getElementById('abs').textContent = 'absolute failed' });
</script></body></html>`,
      ],
      '/module.html': [
        HTML,
        `<!doctype html><html><head><title>Modules</title><script type="module" src="http://localhost:${port}/x.js"></script></head><body><p id=m>no module</p></body></html>`,
      ],
      '/plain.html': [HTML, `<!doctype html><html><head><title>Plain</title><script type="module" src="/x.js"></script></head><body><p id=m>no module</p></body></html>`],
      '/x.js': ['text/javascript', `document.getElementById('m').textContent = 'module ran';`],
      '/data.json': ['application/json', '{"ok":true}'],
    }));
    try {
      const id = await openPane(wall, `127.0.0.1:${site.port}/plain.html`);
      const pane = wall.pane(id);
      const blocked = pane.getByTestId('browser-blocked');
      // The same module through the proxy (a relative URL) runs: nothing to say.
      await expect(frameOf(page, id).locator('#m')).toHaveText('module ran');
      await expect(pane.getByTestId('browser-url')).toHaveAttribute('title', 'Plain');

      // fetch: the relative one works, the absolute one to the upstream's origin is blocked.
      await pane.getByTestId('browser-url').click();
      await typeUrl(wall, `127.0.0.1:${site.port}/fetch.html`);
      await expect(frameOf(page, id).locator('#rel')).toHaveText('relative {"ok":true}');
      await expect(frameOf(page, id).locator('#abs')).toHaveText('absolute failed');
      await expect(blocked).toBeVisible();
      await expect(blocked).toContainText(`http://127.0.0.1:${site.port}/data.json`);
      await expect(blocked).toContainText('CORS');
      // It takes its own row above the frame.
      const bannerBox = (await blocked.boundingBox())!;
      const frameBox = (await pane.locator('iframe[data-testid=browser-frame]').boundingBox())!;
      expect(frameBox.y).toBeGreaterThanOrEqual(bannerBox.y + bannerBox.height - 1);
      await pane.getByTestId('browser-blocked-dismiss').click();
      await expect(blocked).toHaveCount(0);
      await expect(pane.getByTestId('browser-url')).toHaveAttribute('title', 'Fetches');

      // A module script named by the upstream's other loopback name: blocked too; one click
      // switches the pane to a screencast of the same page, where the module runs.
      await pane.getByTestId('browser-url').click();
      await typeUrl(wall, `127.0.0.1:${site.port}/module.html`);
      await expect(blocked).toBeVisible();
      await expect(blocked).toContainText(`http://localhost:${site.port}/x.js`);
      await expect(frameOf(page, id).locator('#m')).toHaveText('no module');
      await pane.getByTestId('browser-blocked-screencast').click();
      await expect(pane).toHaveAttribute('data-mode', 'screencast');
      await expect(pane).toHaveAttribute('data-browser-id', /^b\d+$/, { timeout: 20_000 });
      await expect(blocked).toHaveCount(0);
      await expect(pane.getByTestId('browser-url')).toHaveText(`127.0.0.1:${site.port}/module.html`);
    } finally {
      await site.close();
    }
  });

  test('the prefix key inside a framed page reaches the app; ordinary keys still type into the page', async ({ wall, page }) => {
    const site = await upstream(() => ({
      '/': [
        HTML,
        `<!doctype html><html><head><title>Keys</title></head><body>
<input id=i autocomplete=off><iframe id=inner src="/inner.html" width=300 height=80></iframe>
<script>window.seen = []; addEventListener('keydown', function (e) { seen.push((e.ctrlKey ? 'C-' : '') + e.key) });
addEventListener('keyup', function (e) { seen.push('up:' + e.key) });</script></body></html>`,
      ],
      '/inner.html': [HTML, `<!doctype html><html><head><title>inner</title></head><body><input id=j autocomplete=off></body></html>`],
    }));
    try {
      const id = await openPane(wall, `127.0.0.1:${site.port}/`);
      const frame = frameOf(page, id);
      await expect(frame.locator('#i')).toBeVisible();
      await expect(wall.visiblePanes()).toHaveCount(2);

      // The keyboard is in the page's input.
      await frame.locator('#i').click();
      await expect(wall.pane(id)).toHaveAttribute('data-focused', 'true');
      await page.keyboard.type('hi');
      await expect(frame.locator('#i')).toHaveValue('hi');

      // Ctrl-b % splits the pane; the page sees neither key.
      await page.keyboard.press('Control+b');
      await page.keyboard.press('Shift+Digit5');
      await expect(wall.visiblePanes()).toHaveCount(3);
      await expect(frame.locator('#i')).toHaveValue('hi');
      const seen = await frame.locator('body').evaluate(() => (window as any).seen as string[]);
      expect(seen.filter((k) => /b$|%$/.test(k))).toEqual([]);

      // Back in the page: ordinary keys type there again.
      await frame.locator('#i').click();
      await page.keyboard.type('!b');
      await expect(frame.locator('#i')).toHaveValue('hi!b');
      // The prefix twice: the second one is the page's own Ctrl-b.
      await page.keyboard.press('Control+b');
      await page.keyboard.press('Control+b');
      await expect.poll(() => frame.locator('body').evaluate(() => (window as any).seen.filter((k: string) => k === 'C-b').length)).toBe(1);
      await expect(wall.visiblePanes()).toHaveCount(3);

      // From a nested frame of the same page (relayed by its parent's shim): Ctrl-b z zooms.
      await frame.frameLocator('#inner').locator('#j').click();
      await expect(wall.pane(id)).toHaveAttribute('data-focused', 'true');
      await page.keyboard.press('Control+b');
      await page.keyboard.press('z');
      await expect(wall.visiblePanes()).toHaveCount(1);
      await expect(frame.frameLocator('#inner').locator('#j')).toHaveValue('');
      await page.keyboard.type('ok');
      await expect(frame.frameLocator('#inner').locator('#j')).toHaveValue('ok');
    } finally {
      await site.close();
    }
  });

  test('a hung upstream: the loading bar at once, then the address waited on, both gone when the page loads', async ({ wall, page }) => {
    const site = await upstream(() => ({
      '/hang.html': [HTML, `<!doctype html><html><head><title>Late</title></head><body><h1 id=h>late</h1><a id=next href="/hang-next.html">next</a></body></html>`],
      '/hang-next.html': [HTML, `<!doctype html><html><head><title>Later</title></head><body><h1 id=h>later</h1></body></html>`],
    }));
    try {
      const id = await openPane(wall, `127.0.0.1:${site.port}/hang.html`);
      const pane = wall.pane(id);
      const waiting = pane.getByTestId('browser-waiting');
      await expect.poll(site.held).toBe(1);
      await expect(pane.getByTestId('browser-progress')).toBeVisible();
      await expect(waiting).toHaveText(`Waiting for 127.0.0.1:${site.port}…`);
      expect(site.held()).toBe(1);
      site.release();
      await expect(frameOf(page, id).locator('#h')).toHaveText('late');
      await expect(pane.getByTestId('browser-progress')).toHaveCount(0);
      await expect(waiting).toHaveCount(0);

      // A link inside the page to another hung response: the same.
      await frameOf(page, id).locator('#next').click();
      await expect.poll(site.held).toBe(1);
      await expect(pane.getByTestId('browser-progress')).toBeVisible();
      await expect(waiting).toHaveText(`Waiting for 127.0.0.1:${site.port}…`);
      site.release();
      await expect(frameOf(page, id).locator('#h')).toHaveText('later');
      await expect(pane.getByTestId('browser-progress')).toHaveCount(0);
      await expect(waiting).toHaveCount(0);
    } finally {
      site.release();
      await site.close();
    }
  });

  test('several popups at once are all offered, one after another, and window.open returning null is said once (issue 22 item 4)', async ({ wall, page }) => {
    const site = await upstream(() => ({
      '/': [HTML, `<!doctype html><html><head><title>popups</title></head><body><h1 id=h>popups</h1>
<button id=three onclick="window.open('/one'); window.open('/two'); window.open('/three')">three</button></body></html>`],
    }));
    try {
      const id = await openPane(wall, `127.0.0.1:${site.port}/`);
      const pane = wall.pane(id);
      await expect(frameOf(page, id).locator('#h')).toHaveText('popups');
      await frameOf(page, id).locator('#three').click();
      const prompt = pane.getByTestId('browser-prompt');
      for (const p of ['/one', '/two', '/three']) {
        await expect(prompt).toContainText(`Open http://127.0.0.1:${site.port}${p} in a new pane?`);
        await prompt.getByTestId('browser-prompt-cancel').click();
      }
      await expect(prompt).toHaveCount(0);
      // window.open gave the page null: the pane says so, once, with a way out.
      const notice = pane.getByTestId('browser-notice');
      await expect(notice).toContainText('window.open returns null');
      await expect(notice.getByTestId('browser-notice-screencast')).toHaveText('Open as screencast');
      await notice.getByTestId('browser-notice-dismiss').click();
      await expect(notice).toHaveCount(0);
      await frameOf(page, id).locator('#three').click();
      for (let i = 0; i < 3; i++) await prompt.getByTestId('browser-prompt-cancel').click();
      await expect(prompt).toHaveCount(0);
      await expect(notice).toHaveCount(0);
    } finally {
      await site.close();
    }
  });
});
