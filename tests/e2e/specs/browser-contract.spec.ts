// The app's side of the proxy contract, with the grant API stubbed (page.route) and a tiny
// stand-in proxy: a loopback server whose pages carry a hand-written shim that speaks the
// documented messages. It pins what the UI does with location / navigating / pointerdown /
// open-window reports and the app → shim history and reload messages, independently of the real proxy
// (browser.spec.ts covers the real one).
import http from 'node:http';
import type net from 'node:net';
import { expect, test } from './fixtures';

const UPSTREAM = 'http://localhost:5999';

function shim(appOrigin: string): string {
  return `<script>
(() => {
  const app = ${JSON.stringify(appOrigin)};
  const post = (m) => parent.postMessage(Object.assign({ porthole: 'shim', v: 1 }, m), app);
  const where = (loaded) => post({ kind: 'location', url: location.href, title: document.title, loaded });
  addEventListener('DOMContentLoaded', () => where(true));
  addEventListener('popstate', () => where(false));
  addEventListener('pointerdown', () => post({ kind: 'pointerdown' }), true);
  addEventListener('click', (e) => {
    const a = e.target.closest && e.target.closest('a[target]');
    if (a && a.target !== '_self') { e.preventDefault(); post({ kind: 'open-window', url: a.href }); }
  }, true);
  window.__spa = (p) => { history.pushState(null, '', p); where(false); };
  window.__leaving = () => post({ kind: 'navigating' });
  window.__report = () => where(false);
  addEventListener('message', (e) => {
    if (e.origin !== app || !e.data || e.data.porthole !== 'app') return;
    window.__appMessages = (window.__appMessages || []).concat([e.data]);
    if (e.data.kind === 'history') history.go(e.data.delta);
    if (e.data.kind === 'reload') location.reload();
  });
  // A forged report of a URL off the proxy must be ignored by the app (nothing maps it).
  window.__forge = () => parent.postMessage({ porthole: 'shim', v: 1, kind: 'location', url: 'http://evil.example/x', title: 'evil', loaded: false }, app);
})();
</script>`;
}

function page(title: string, body: string, appOrigin: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title>${shim(appOrigin)}</head><body>${body}</body></html>`;
}

test.describe('browser pane ↔ shim contract (stubbed proxy)', () => {
  let server: http.Server;
  let origin = '';
  let loads = 0;

  test.beforeAll(async () => {
    const appOrigin = new URL(process.env.PORTHOLE_E2E_URL!).origin;
    server = http.createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      if (url.pathname === '/plain.txt') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('no shim in plain text');
        return;
      }
      loads++;
      const pages: Record<string, string> = {
        '/': page('Home stub', '<h1 id="h">home</h1><a id="next" href="/next.html?x=1">next</a> <a id="pop" target="_blank" href="/pop.html">pop</a>', appOrigin),
        '/next.html': page('Next stub', '<h1 id="h">next</h1>', appOrigin),
        '/pop.html': page('Pop stub', '<h1 id="h">pop</h1>', appOrigin),
      };
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(pages[url.pathname] ?? page('Other stub', `<h1 id="h">${url.pathname}</h1>`, appOrigin));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  });
  test.afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  test('location, pointerdown, open-window, history and reload', async ({ wall, page: p }) => {
    const grantRequests: any[] = [];
    await p.route('**/api/proxy/grants', async (route) => {
      const body = route.request().postDataJSON();
      grantRequests.push(body);
      const u = new URL(body.url);
      await route.fulfill({
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ url: `${origin}${u.pathname}${u.search}`, grant: 'g1', origin, upstream: u.origin }),
      });
    });
    const [term] = await wall.paneIds();
    await wall.click(term);
    await wall.type('echo x\n');
    const id = await wall.openBrowserWithPrefix();
    const pane = wall.pane(id);
    await pane.getByTestId('browser-url-input').fill('localhost:5999');
    await pane.getByTestId('browser-url-input').press('Enter');
    const frame = p.frameLocator(`[data-pane-id="${id}"] iframe`);
    await expect(frame.locator('#h')).toHaveText('home');
    expect(grantRequests[0]).toEqual({ url: `${UPSTREAM}/`, embedders: [new URL(process.env.PORTHOLE_E2E_URL!).origin] });
    const url = pane.getByTestId('browser-url');
    await expect(url).toHaveAttribute('title', 'Home stub');
    await expect(url).toHaveText('localhost:5999');

    // A link: the header maps the proxy URL back to the upstream one, query included.
    await frame.locator('#next').click();
    await expect(frame.locator('#h')).toHaveText('next');
    await expect(url).toHaveText('localhost:5999/next.html?x=1');
    await expect(url).toHaveAttribute('title', 'Next stub');
    // SPA navigation: loaded:false still moves the header, without a load.
    const before = loads;
    const f = await (await p.locator(`[data-pane-id="${id}"] iframe`).elementHandle())!.contentFrame();
    await f!.evaluate(() => (window as any).__spa('/spa/route'));
    await expect(url).toHaveText('localhost:5999/spa/route');
    // A forged off-proxy location is ignored.
    await f!.evaluate(() => (window as any).__forge());
    await p.waitForTimeout(200);
    await expect(url).toHaveText('localhost:5999/spa/route');
    expect(loads).toBe(before);
    // navigating: the bar runs and the title goes; the next location report ends both.
    await expect(pane.getByTestId('browser-progress')).toHaveCount(0);
    await f!.evaluate(() => (window as any).__leaving());
    await expect(pane.getByTestId('browser-progress')).toBeVisible();
    await expect(url).toHaveAttribute('title', `${UPSTREAM}/spa/route`);
    await f!.evaluate(() => (window as any).__report());
    await expect(pane.getByTestId('browser-progress')).toHaveCount(0);
    await expect(url).toHaveAttribute('title', 'Next stub');

    // Back goes through the shim (history message), not a grant request.
    const grantsBefore = grantRequests.length;
    await pane.getByTestId('browser-back').click();
    await expect(url).toHaveText('localhost:5999/next.html?x=1');
    await pane.getByTestId('browser-back').click();
    await expect(url).toHaveText('localhost:5999');
    await expect(frame.locator('#h')).toHaveText('home');
    await pane.getByTestId('browser-forward').click();
    await expect(url).toHaveText('localhost:5999/next.html?x=1');
    expect(grantRequests.length).toBe(grantsBefore);
    // Reload through the shim.
    const loadsBefore = loads;
    await pane.getByTestId('browser-reload').click();
    await expect.poll(() => loads).toBe(loadsBefore + 1);
    await expect(frame.locator('#h')).toHaveText('next');
    expect(grantRequests.length).toBe(grantsBefore);

    // pointerdown focuses the pane.
    await wall.click(term);
    await frame.locator('#h').click();
    await expect(pane).toHaveAttribute('data-focused', 'true');

    // open-window asks; Open splits an adjacent browser pane.
    await pane.getByTestId('browser-back').click();
    await expect(frame.locator('#h')).toHaveText('home');
    await frame.locator('#pop').click();
    await expect(pane.getByTestId('browser-prompt')).toContainText(`Open ${UPSTREAM}/pop.html in a new pane?`);
    await pane.getByTestId('browser-prompt-accept').click();
    await expect(wall.visiblePanes()).toHaveCount(3);
    const popup = await wall.focusedId();
    await expect(wall.pane(popup)).toHaveAttribute('data-kind', 'browser');
    await expect(p.frameLocator(`[data-pane-id="${popup}"] iframe`).locator('#h')).toHaveText('pop');

    // A document without the shim: banner after the load, and Reload re-resolves the grant.
    await pane.getByTestId('browser-url').click();
    await pane.getByTestId('browser-url-input').fill('localhost:5999/plain.txt');
    await pane.getByTestId('browser-url-input').press('Enter');
    await expect(pane.getByTestId('browser-banner')).toBeVisible();
    const n = grantRequests.length;
    await pane.getByTestId('browser-banner-reload').click();
    await expect.poll(() => grantRequests.length).toBe(n + 1);
    // Back without a shim: the app's list, through a fresh grant.
    await pane.getByTestId('browser-back').click();
    await expect(frame.locator('#h')).toHaveText('home');
    await expect(url).toHaveText('localhost:5999');
    expect(grantRequests.length).toBe(n + 2);
  });

  test('a grant refusal shows its message in the pane', async ({ wall, page: p }) => {
    await p.route('**/api/proxy/grants', (route) =>
      route.fulfill({ status: 400, contentType: 'application/json', body: JSON.stringify({ error: { code: 'blocked_address', message: 'link-local and cloud metadata addresses are refused' } }) }),
    );
    const [term] = await wall.paneIds();
    await wall.click(term);
    const id = await wall.openBrowserWithPrefix();
    // Any address the field accepts: the stubbed sidecar refuses the grant.
    await wall.pane(id).getByTestId('browser-url-input').fill('localhost:5998');
    await wall.pane(id).getByTestId('browser-url-input').press('Enter');
    const panel = wall.pane(id).getByTestId('browser-error-panel');
    await expect(panel).toBeVisible();
    await expect(panel).toContainText('link-local and cloud metadata addresses are refused');
  });
  test('messages count only from grants an open pane holds', async ({ wall, page: p }) => {
    // A second stand-in proxy for a second upstream, serving a page without a shim that links
    // to a page on the first one.
    const other = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><html><head><title>No shim</title></head><body><h1 id="h">other</h1><a id="to-first" href="${origin}/next.html">first</a></body></html>`);
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const otherOrigin = `http://127.0.0.1:${(other.address() as net.AddressInfo).port}`;
    try {
      const proxies: Record<string, [string, string]> = { 'http://localhost:5999': ['g1', origin], 'http://localhost:5998': ['g2', otherOrigin] };
      await p.route('**/api/proxy/grants', async (route) => {
        const u = new URL(route.request().postDataJSON().url);
        const [grant, proxy] = proxies[u.origin];
        await route.fulfill({
          status: 200,
          contentType: 'application/json',
          body: JSON.stringify({ url: `${proxy}${u.pathname}${u.search}`, grant, origin: proxy, upstream: u.origin }),
        });
      });
      const [term] = await wall.paneIds();
      await wall.click(term);
      await wall.type('echo x\n');
      const id = await wall.openBrowserWithPrefix();
      const pane = wall.pane(id);
      const url = pane.getByTestId('browser-url');
      const banner = pane.getByTestId('browser-banner');
      const frame = p.frameLocator(`[data-pane-id="${id}"] iframe`);
      await pane.getByTestId('browser-url-input').fill('localhost:5999');
      await pane.getByTestId('browser-url-input').press('Enter');
      await expect(frame.locator('#h')).toHaveText('home');
      await expect(url).toHaveAttribute('title', 'Home stub');
      // The pane moves to the second upstream and lets go of the first grant (no other pane holds it).
      await url.click();
      await pane.getByTestId('browser-url-input').fill('localhost:5998/o');
      await pane.getByTestId('browser-url-input').press('Enter');
      await expect(frame.locator('#h')).toHaveText('other');
      await expect(banner).toBeVisible();
      await pane.getByTestId('browser-banner-dismiss').click();
      await expect(banner).toHaveCount(0);
      // A link onto the first grant's origin: that page's shim reports are refused, so its load
      // is judged uninstrumented (the banner is back) and the header stays where it was.
      await frame.locator('#to-first').click();
      await expect(frame.locator('#h')).toHaveText('next');
      await expect(banner).toBeVisible();
      await expect(url).toHaveText('localhost:5998/o');
      await expect(url).toHaveAttribute('title', 'http://localhost:5998/o');
    } finally {
      other.closeAllConnections();
      await new Promise((r) => other.close(r));
    }
  });
});
