// Agents side by side (issue 26): two terminal panes, each with its own browser pane. The
// pane header names the terminal driving it; another terminal's changing verbs are refused
// `pane_in_use` until the human hands the pane over from its menu ("Let t… drive this"). The
// panes share one login, and a step that is the human's is handed over. Writes
// docs/screenshot-agents-together.png (the wall during a handoff).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test, waitFrameFills, type Wall } from './fixtures';

const repo = path.resolve(import.meta.dirname, '../../..');

/** Types `cmd; echo "TAG rc=$?"` into terminal pane `id` and waits for the rc line; returns it. */
async function run(wall: Wall, id: string, tag: string, cmd: string, timeout = 40_000): Promise<number> {
  await wall.click(id);
  await wall.type(`${cmd}; echo "${tag} rc=$?"\n`);
  const re = new RegExp(`^${tag} rc=(\\d+)$`, 'm');
  await wall.waitText(id, re, timeout);
  return Number(re.exec(await wall.text(id))![1]);
}

/** Serves `dir` with `python3 -m http.server` in a pane split from terminal `id`; its port. */
async function serve(wall: Wall, id: string, dir: string): Promise<string> {
  await wall.type(`cd ${dir} && srv=$(ph split -- python3 -m http.server 0 --bind 127.0.0.1) && ph wait "$srv" --until 'text=Serving HTTP' >/dev/null && port=$(ph ports "$srv" | awk 'NR==2{print $1}') && echo "port=$port"\n`);
  await wall.waitText(id, /^port=\d+$/m, 20_000);
  return /^port=(\d+)$/m.exec(await wall.text(id))![1];
}

test('two terminals, one browser pane each; the human hands one over from the pane menu', async ({ wall, page }) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'porthole-agents-'));
  fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>Counter</title><button onclick="this.textContent=\'Clicked\'">Press</button>\n');
  const [t1id] = await wall.paneIds();
  await wall.click(t1id);
  const port = await serve(wall, t1id, dir);
  // A second agent's terminal.
  expect(await run(wall, t1id, 'split2', `ph split -- bash > /dev/null`)).toBe(0);
  await wall.waitOpen(3);
  const ids = await wall.paneIds();
  const t2id = ids.find((i) => i !== t1id && ids.indexOf(i) === ids.length - 1)!;
  const handleOf = async (id: string) => (await page.locator(`[data-testid=pane][data-pane-id="${id}"] [data-testid=pane-handle]`).textContent())!.trim();
  const t1 = await handleOf(t1id);
  const t2 = await handleOf(t2id);

  expect(await run(wall, t1id, 'open', `ph browser open "http://127.0.0.1:${port}/index.html" > b.txt`)).toBe(0);
  const b1 = fs.readFileSync(path.join(dir, 'b.txt'), 'utf8').trim().split(' ')[0];
  const pane = page.locator('[data-testid=pane][data-kind=browser]').first();
  await expect(pane.getByTestId('pane-driver')).toHaveText(t1);

  // t2 sees t1's pane, but may not click in it.
  expect(await run(wall, t2id, 'snap', `ph browser snapshot -i --pane ${b1} > ${dir}/s2.txt`)).toBe(0);
  const ref = /button "Press" \[ref=(e\d+)\]/.exec(fs.readFileSync(path.join(dir, 's2.txt'), 'utf8'))![1];
  expect(await run(wall, t2id, 'click1', `ph browser click ${ref} --pane ${b1} 2> ${dir}/err.txt`)).toBe(2);
  expect(fs.readFileSync(path.join(dir, 'err.txt'), 'utf8')).toContain(`[pane_in_use]`);

  // The human hands it over from the pane's menu.
  await pane.locator('header').click({ button: 'right', position: { x: 4, y: 4 } });
  const menu = page.getByTestId('context-menu');
  await expect(menu.getByTestId('drive-heading')).toHaveText(`Driven by ${t1}`);
  await menu.getByTestId(`menu-drive-${t2}`).click();
  await expect(menu).toBeHidden();
  await expect(pane.getByTestId('pane-driver')).toHaveText(t2);
  expect(await run(wall, t2id, 'click2', `ph browser click ${ref} --pane ${b1} && ph browser wait --text Clicked --pane ${b1}`)).toBe(0);
  await page.screenshot({ path: test.info().outputPath('wall.png') });
  fs.rmSync(dir, { recursive: true, force: true });
});

test('an agent hands a step to the human: done, declined and timed out, nothing typed reported', async ({ wall, page, context }) => {
  await context.grantPermissions(['notifications']);
  // Record notifications (the headless browser shows none).
  await page.evaluate(() => {
    const made: { title: string; body: string }[] = [];
    class Recorded extends window.Notification {
      constructor(title: string, opts?: NotificationOptions) {
        super(title, opts);
        made.push({ title, body: opts?.body ?? '' });
      }
    }
    (window as any).__notes = made;
    (window as any).Notification = Recorded;
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'porthole-handoff-'));
  // A 2FA page: the code goes in a field; "Verify" moves to the account page.
  fs.writeFileSync(
    path.join(dir, 'index.html'),
    '<!doctype html><title>Verify</title><form onsubmit="location.href=\'account.html\';return false"><label>Code <input name=c autocomplete=one-time-code></label> <button>Verify</button></form>\n',
  );
  fs.writeFileSync(path.join(dir, 'account.html'), '<!doctype html><title>Account</title><h1>Welcome</h1>\n');
  const [t1id] = await wall.paneIds();
  await wall.click(t1id);
  const port = await serve(wall, t1id, dir);
  expect(await run(wall, t1id, 'open', `ph browser open "http://127.0.0.1:${port}/index.html" > /dev/null`)).toBe(0);
  const pane = page.locator('[data-testid=pane][data-kind=browser]').first();

  // Handed over: the banner asks, the pane wants attention, the agent's other verbs wait; the
  // human, in another window, gets a desktop notification.
  await wall.click(t1id);
  await page.evaluate(() => (document.hasFocus = () => false));
  await wall.type(`ph browser handoff --reason "Type the 2FA code from your phone" > ho.txt 2> ho.err; echo "ho rc=$?"\n`);
  await expect(pane.getByTestId('handoff-reason')).toHaveText('Type the 2FA code from your phone');
  await expect(pane).toHaveAttribute('data-attention', 'true');
  await expect.poll(() => page.evaluate(() => (window as any).__notes.length), { timeout: 15_000 }).toBe(1);
  expect(await page.evaluate(() => (window as any).__notes[0])).toEqual({ title: expect.stringMatching(/^t\d+ hands you a step \(Verify\)$/), body: 'Type the 2FA code from your phone' });
  await page.evaluate(() => delete (document as any).hasFocus);
  // The human types the code in the page and verifies, then hands back.
  // The banner made the page shorter: a point is only stable once a frame of the new size
  // fills the canvas (CI: a click computed before that landed beside the field). A click on
  // the page's blank lower part gives it the keyboard; Tab goes to the field.
  await expect(pane.locator('.screencast-host')).toHaveAttribute('data-sync', 'synced', { timeout: 15_000 });
  await waitFrameFills(page, (await pane.getAttribute('data-pane-id'))!);
  const canvas = pane.locator('canvas').first();
  const box = (await canvas.boundingBox())!;
  await page.mouse.click(box.x + 20, box.y + box.height - 20);
  await page.keyboard.press('Tab');
  await page.keyboard.type('918273');
  await page.keyboard.press('Enter');
  // The human sees the account page, then hands back.
  await expect(pane.getByTestId('browser-url')).toContainText('account.html', { timeout: 20_000 });
  await pane.getByTestId('handoff-done').click();
  await wall.waitText(t1id, /^ho rc=\d+$/m, 30_000);
  expect(await wall.text(t1id)).toMatch(/^ho rc=0$/m);
  const said = fs.readFileSync(path.join(dir, 'ho.txt'), 'utf8');
  expect(said).toMatch(/^handed back; changed: .*url/);
  expect(said).not.toContain('918273');
  await expect(pane.getByTestId('handoff-banner')).toHaveCount(0);

  // Declined: exit 2, `declined`.
  await wall.click(t1id);
  await wall.type(`ph browser handoff --reason "Solve the CAPTCHA" 2> dec.err; echo "dec rc=$?"\n`);
  await pane.getByTestId('handoff-decline').click();
  await wall.waitText(t1id, /^dec rc=\d+$/m, 30_000);
  expect(await wall.text(t1id)).toMatch(/^dec rc=2$/m);
  expect(fs.readFileSync(path.join(dir, 'dec.err'), 'utf8')).toContain('[declined]');

  // Timed out: exit 4, and the pane is free again.
  expect(await run(wall, t1id, 'late', `ph browser handoff --reason "Approve the payment" --timeout 1 2> late.err`)).toBe(4);
  expect(fs.readFileSync(path.join(dir, 'late.err'), 'utf8')).toContain('[timed_out]');
  await expect(pane.getByTestId('handoff-banner')).toHaveCount(0);
  expect(await run(wall, t1id, 'after', `ph browser reload`)).toBe(0);
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A dev server with a cookie login and a 2FA step (Python's standard library only). */
const LOGIN_SERVER = `
import http.server, sys, urllib.parse
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def page(self, body):
        b = ('<!doctype html><meta charset=utf-8>' + body).encode()
        self.send_response(200); self.send_header('Content-Type', 'text/html; charset=utf-8')
        self.send_header('Cache-Control', 'no-store'); self.send_header('Content-Length', str(len(b))); self.end_headers(); self.wfile.write(b)
    def go(self, to, cookie=None):
        self.send_response(302); self.send_header('Location', to)
        if cookie: self.send_header('Set-Cookie', cookie)
        self.send_header('Content-Length', '0'); self.end_headers()
    def do_GET(self):
        u = urllib.parse.urlparse(self.path); q = urllib.parse.parse_qs(u.query)
        c = dict(p.split('=', 1) for p in self.headers.get('Cookie', '').split('; ') if '=' in p)
        # Cookies ignore ports: names carry this server's port, so an earlier run's login is not this one's.
        n = str(self.server.server_address[1])
        who, ok = c.get('sid' + n), c.get('2fa' + n) == 'ok'
        if u.path == '/login': return self.go('/verify', 'sid%s=%s; Path=/; HttpOnly' % (n, q.get('u', ['nobody'])[0]))
        if u.path == '/verify': return self.page('<title>Verify</title><h1>Two-step check</h1><form action=/verified><label>Code <input name=c autocomplete=one-time-code></label> <button>Verify</button></form>')
        if u.path == '/verified': return self.go('/app', '2fa%s=ok; Path=/; HttpOnly' % n)
        if u.path == '/app':
            if who and ok: return self.page('<title>App</title><h1>Signed in as %s</h1><p>Orders: 3</p>' % who)
            return self.page('<title>App</title><h1>Signed out</h1><a href="/login?u=alice">Sign in as alice</a>')
        self.send_response(404); self.send_header('Content-Length', '0'); self.end_headers()
s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
print('Serving HTTP on port', s.server_address[1], flush=True)
s.serve_forever()
`;

test('two agents test one app: one logs in, the other is logged in too, and a 2FA step goes to the human', async ({ wall, page }) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'porthole-login-'));
  fs.writeFileSync(path.join(dir, 'server.py'), LOGIN_SERVER);
  const [t1id] = await wall.paneIds();
  await wall.click(t1id);
  await wall.type(`cd ${dir} && srv=$(ph split -- python3 server.py) && ph wait "$srv" --until 'text=Serving HTTP' >/dev/null && port=$(ph ports "$srv" | awk 'NR==2{print $1}') && echo "port=$port"\n`);
  await wall.waitText(t1id, /^port=\d+$/m, 20_000);
  const port = /^port=(\d+)$/m.exec(await wall.text(t1id))![1];
  const app = `http://127.0.0.1:${port}`;
  expect(await run(wall, t1id, 'split2', `ph split -- bash > /dev/null`)).toBe(0);
  await wall.waitOpen(3);
  const ids = await wall.paneIds();
  const t2id = ids[ids.length - 1];
  await wall.click(t2id);
  await wall.type(`cd ${dir}\n`);
  const heading = async (id: string, tag: string) => {
    expect(await run(wall, id, tag, `ph browser wait --load > /dev/null; ph browser snapshot | grep -o 'heading "[^"]*"' | head -1 > ${tag}.txt`)).toBe(0);
    return fs.readFileSync(path.join(dir, `${tag}.txt`), 'utf8').trim();
  };

  // Each agent opens the app in its own pane: both signed out.
  expect(await run(wall, t1id, 'o1', `ph browser open "${app}/app" > b1.txt`)).toBe(0);
  expect(await run(wall, t2id, 'o2', `ph browser open "${app}/app" > b2.txt`)).toBe(0);
  expect(await heading(t1id, 'h1')).toBe('heading "Signed out"');
  expect(await heading(t2id, 'h2')).toBe('heading "Signed out"');
  const b1 = fs.readFileSync(path.join(dir, 'b1.txt'), 'utf8').trim().split(/\s/)[0];
  const b2 = fs.readFileSync(path.join(dir, 'b2.txt'), 'utf8').trim().split(/\s/)[0];
  expect(b1).not.toBe(b2);

  // Agent 1 signs in; the two-step check is the human's: it hands that step over.
  expect(await run(wall, t1id, 'in', `ph browser navigate "${app}/login?u=alice"`)).toBe(0);
  expect(await heading(t1id, 'h3')).toBe('heading "Two-step check"');
  await wall.click(t1id);
  await wall.type(`ph browser handoff --reason "Type the code from your phone" > ho.txt; echo "ho rc=$?"\n`);
  const pane1 = page.locator(`[data-testid=pane][data-kind=browser][data-handle="${b1}"]`);
  await expect(pane1.getByTestId('handoff-reason')).toHaveText('Type the code from your phone');
  await page.screenshot({ path: path.join(repo, 'docs/screenshot-agents-together.png') });
  // The human types the code and verifies in agent 1's pane, then hands back.
  // (A click on the page's blank lower part gives it the keyboard; Tab goes to the field,
  // wherever the pane's size put it.)
  await expect(pane1.locator('.screencast-host')).toHaveAttribute('data-sync', 'synced', { timeout: 15_000 });
  await waitFrameFills(page, (await pane1.getAttribute('data-pane-id'))!);
  const canvas = pane1.locator('canvas').first();
  const box = (await canvas.boundingBox())!;
  await page.mouse.click(box.x + 20, box.y + box.height - 20);
  await page.keyboard.press('Tab');
  await page.keyboard.type('424242');
  await page.keyboard.press('Enter');
  await expect(pane1.getByTestId('browser-url')).toContainText('/app', { timeout: 20_000 });
  await pane1.getByTestId('handoff-done').click();
  await wall.waitText(t1id, /^ho rc=\d+$/m, 30_000);
  expect(await wall.text(t1id)).toMatch(/^ho rc=0$/m);
  expect(fs.readFileSync(path.join(dir, 'ho.txt'), 'utf8')).not.toContain('424242');
  expect(await heading(t1id, 'h4')).toBe('heading "Signed in as alice"');

  // Agent 2 never signed in, yet its next load is signed in (one login for both panes); its
  // pane stayed its own (neither agent touched the other's).
  expect(await run(wall, t2id, 'rl', `ph browser reload`)).toBe(0);
  expect(await heading(t2id, 'h5')).toBe('heading "Signed in as alice"');
  expect(await run(wall, t2id, 'mine', `ph list | grep "^${b2} " > mine.txt`)).toBe(0);
  expect(fs.readFileSync(path.join(dir, 'mine.txt'), 'utf8')).toMatch(/driven by t\d+/);
  await page.screenshot({ path: test.info().outputPath('wall-after.png') });
  fs.rmSync(dir, { recursive: true, force: true });
});
