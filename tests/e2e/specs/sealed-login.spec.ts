// Issue 24's "done when", from a terminal pane against the real UI: a page whose login form
// lives in a closed shadow root, served from the pane. `ph browser snapshot` shows the host
// and how to ask; `--sealed` lists the fields with sN tokens; `fill`, `fill`, `click` with
// those tokens log in, and no output (nor the pane's screen) holds the password. Then the
// human turns sealed discovery off in Settings → Agent access and the same `--sealed` is
// refused (exit 2, `sealed_disabled`, naming `agent.sealed.discovery`).
// A sidecar of its own (as agent-access.spec.ts), so the shared one's config stays
// untouched. Writes docs/screenshot-sealed-login.png (the wall after the login).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { type Sidecar, startSidecar } from '../sidecar';
import { Wall } from './fixtures';

const repo = path.resolve(import.meta.dirname, '../../..');

// The whole form inside a closed root: the page's own scripts (and a plain snapshot) cannot
// reach it. Success is said in the light DOM, where `ph browser wait --text` sees it.
const PAGE = `<!doctype html><title>Sealed login</title>
<body style="font:18px sans-serif;margin:16px">
<h1>Acme account</h1>
<p id="status">Please log in.</p>
<x-login></x-login>
<script>
const root = document.querySelector('x-login').attachShadow({ mode: 'closed' });
root.innerHTML = \`<style>label{display:block;margin:8px 0}input{font:inherit}</style>
  <form>
    <label>User <input id="u" autocomplete="off"></label>
    <label>Password <input id="p" type="password"></label>
    <button type="submit">Log in</button>
  </form>\`;
root.querySelector('form').addEventListener('submit', (e) => {
  e.preventDefault();
  const ok = root.querySelector('#p').value === 'S3cret-horse-9';
  document.getElementById('status').textContent = ok ? 'Welcome, ' + root.querySelector('#u').value : 'Wrong password';
});
</script></body>
`;
const PASSWORD = 'S3cret-horse-9';

let s: Sidecar;
test.beforeEach(async () => {
  s = await startSidecar({ name: 'sealed-login' });
});
test.afterEach(async () => {
  await s?.stop();
});

test('a closed-root login form: shown quietly, listed when asked, driven by tokens, refused once the human turns it off', async ({ page }) => {
  test.setTimeout(180_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'porthole-sealed-'));
  fs.writeFileSync(path.join(dir, 'index.html'), PAGE);
  // The password reaches `ph` from a file, so it is never typed onto the pane's screen either.
  fs.writeFileSync(path.join(dir, 'pw'), PASSWORD);
  const read = (name: string) => fs.readFileSync(path.join(dir, name), 'utf8');

  const { url } = await s.call('POST', '/api/login-codes');
  await page.goto(new URL(url, s.url).toString());
  await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
  const wall = new Wall(page);
  await wall.waitOpen(1);
  const [id] = await wall.paneIds();
  await wall.click(id);
  await wall.type(
    `cd ${dir} && srv=$(ph split -- python3 -m http.server 0 --bind 127.0.0.1) && ph wait "$srv" --until 'text=Serving HTTP' >/dev/null && port=$(ph ports "$srv" | awk 'NR==2{print $1}') && echo "port=$port"\n`,
  );
  await wall.waitText(id, /^port=\d+$/m, 20_000);

  // Quiet by default: the host and how to ask, nothing from inside.
  await wall.click(id);
  await wall.type('ph browser open ":$port" >/dev/null && ph browser snapshot > snap.txt; echo "snap rc=$?"\n');
  await wall.waitText(id, /^snap rc=\d+$/m, 40_000);
  expect(await wall.text(id)).toMatch(/^snap rc=0$/m);
  const snap = read('snap.txt');
  expect(snap).toContain('x-login [closed shadow root]');
  expect(snap).toContain("'ph browser snapshot --sealed' lists them");
  expect(snap).not.toContain('Log in');
  expect(snap).not.toMatch(/\[sealed=s\d+\]/);

  // Asked: the fields with tokens (role, name, point; never a value).
  await wall.type('ph browser snapshot --sealed > sealed.txt; echo "sealed rc=$?"\n');
  await wall.waitText(id, /^sealed rc=\d+$/m, 40_000);
  expect(await wall.text(id)).toMatch(/^sealed rc=0$/m);
  const sealed = read('sealed.txt');
  const token = (line: RegExp) => {
    const m = line.exec(sealed);
    expect(m, `${line} in:\n${sealed}`).not.toBeNull();
    return m![1];
  };
  const user = token(/^- textbox "User" \[sealed=(s\d+)\] @ \(\d+, \d+\)/m);
  const pw = token(/^- textbox "Password" \[sealed=(s\d+)\] @ \(\d+, \d+\)/m);
  const go = token(/^- button "Log in" \[sealed=(s\d+)\] @ \(\d+, \d+\)/m);
  expect(new Set([user, pw, go]).size).toBe(3);

  // Driven by the tokens: trusted input inside the closed root logs in.
  await wall.type(
    `ph browser fill ${user} alice > fill-user.txt && ph browser fill ${pw} "$(cat pw)" > fill-pw.txt && ph browser click ${go} > click.txt && ph browser wait --text 'Welcome, alice' > wait.txt; echo "act rc=$?"\n`,
  );
  await wall.waitText(id, /^act rc=\d+$/m, 60_000);
  expect(await wall.text(id)).toMatch(/^act rc=0$/m);
  expect(read('fill-user.txt')).toMatch(new RegExp(`^fill ${user}: matched`));
  expect(read('fill-pw.txt')).toMatch(new RegExp(`^fill ${pw}: matched \\(${PASSWORD.length} characters\\)`));
  expect(read('wait.txt')).toMatch(/^ok after \d+ ms/);
  for (const f of ['snap.txt', 'sealed.txt', 'fill-user.txt', 'fill-pw.txt', 'click.txt', 'wait.txt']) {
    expect(read(f), f).not.toContain(PASSWORD);
  }
  expect(await wall.text(id)).not.toContain(PASSWORD);

  // The human sees it: the screencast pane beside the terminal shows the logged-in page.
  const browserPane = page.locator('[data-testid=pane][data-kind=browser]').first();
  await expect(browserPane.getByTestId('screencast-canvas')).toBeVisible();
  await page.screenshot({ path: path.join(repo, 'docs/screenshot-sealed-login.png') });

  // The human turns sealed discovery off in Settings → Agent access.
  await page.getByTestId('open-agent-access').click();
  const panel = page.getByTestId('agent-access');
  await expect(panel.getByTestId('sealed-discovery')).toBeChecked();
  await panel.getByTestId('sealed-discovery').click();
  await expect(panel.getByTestId('sealed-discovery')).not.toBeChecked();
  await expect.poll(() => fs.readFileSync(path.join(s.config, 'config.toml'), 'utf8'), { timeout: 15_000 }).toContain('discovery = false');
  await expect.poll(async () => (await s.call('GET', '/api/control/browser/policy')).policy.discovery, { timeout: 15_000 }).toBe(false);
  await panel.getByTestId('agent-access-close').click();
  await expect(panel).toHaveCount(0);

  // The same call is refused, naming the key that allows it; the plain snapshot still works.
  await wall.click(id);
  await wall.type('ph browser snapshot --sealed > refused.txt 2> refused.err; echo "refused rc=$?"\n');
  await wall.waitText(id, /^refused rc=\d+$/m, 40_000);
  expect(await wall.text(id)).toMatch(/^refused rc=2$/m);
  const refused = read('refused.err');
  expect(refused).toContain('sealed_disabled');
  expect(refused).toContain('agent.sealed.discovery');
  expect(read('refused.txt')).toBe('');
  await wall.type('ph browser snapshot > after.txt; echo "after rc=$?"\n');
  await wall.waitText(id, /^after rc=\d+$/m, 40_000);
  expect(await wall.text(id)).toMatch(/^after rc=0$/m);
  expect(read('after.txt')).toContain('Welcome, alice');
  expect(read('after.txt')).toContain('x-login [closed shadow root]');
  fs.rmSync(dir, { recursive: true, force: true });
});
