// Takes docs/screenshot.png: real programs in split terminals (vim on a source file; a dev
// server answering requests; htop). vim and htop come with `cargo xtask test`'s packages.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { api, expect, test } from './fixtures';

const repo = path.resolve(import.meta.dirname, '../../..');
// A prompt that names the project rather than this checkout's folder.
const PROMPT = "export PS1='\\[\\e[1;34m\\]porthole\\[\\e[0m\\] \\$ '";

/** The pids of the wall's terminals and everything they started (for `htop -p`). */
async function wallPids(): Promise<number[]> {
  const { terminals } = await api('GET', '/api/terminals');
  const parent = new Map<number, number>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone */
    }
  }
  const pids = new Set<number>(terminals.map((t: { pid: number }) => t.pid));
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, ppid] of parent) if (pids.has(ppid) && !pids.has(pid)) (pids.add(pid), (grew = true));
  }
  return [...pids];
}

test('screenshot of vim, a dev server and htop in split terminals', async ({ wall, page }) => {
  test.setTimeout(90_000);
  await page.setViewportSize({ width: 1280, height: 720 });
  const site = fs.mkdtempSync(path.join(os.tmpdir(), 'porthole-shot-'));
  fs.writeFileSync(path.join(site, 'index.html'), '<!doctype html><title>app</title><h1>app</h1>');
  fs.writeFileSync(path.join(site, 'app.js'), 'console.log("app")\n');
  try {
    const [editor] = await wall.paneIds();
    await wall.click(editor);
    await wall.type(`${PROMPT}; cd ${repo} && clear\n`);
    await wall.prefix('Shift+Digit5');
    await wall.waitOpen(2);
    const server = await wall.focusedId();
    await wall.type(`${PROMPT}; cd ${site} && clear\n`);
    await wall.type('python3 -m http.server 0 --bind 127.0.0.1\n');
    await wall.waitText(server, /Serving HTTP on \S+ port \d+/, 20_000);
    const port = Number(/Serving HTTP on \S+ port (\d+)/.exec(await wall.text(server))![1]);
    for (const p of ['/', '/app.js', '/', '/favicon.ico']) await fetch(`http://127.0.0.1:${port}${p}`).catch(() => undefined);
    await wall.waitText(server, /GET \/favicon\.ico/);

    await wall.prefix('Shift+Quote');
    await wall.waitOpen(3);
    const monitor = await wall.focusedId();
    await wall.type(`${PROMPT}; clear\n`);

    await wall.click(editor);
    await wall.type('vim -R -c "set number" sidecar/src/pty/ring.rs\n');
    await wall.waitText(editor, /ring\.rs/);
    await wall.page.keyboard.type('12G'); // past the file's header comment, into code

    // htop shows this wall's processes only (the machine's others are noise here).
    await wall.click(monitor);
    await wall.type(`htop -p ${(await wallPids()).join(',')}\n`);
    await wall.waitText(monitor, /Tasks:|PID/);
    await page.waitForTimeout(1500);
    const out = path.resolve(repo, 'docs/screenshot.png');
    await page.screenshot({ path: out });
    expect(fs.statSync(out).size).toBeGreaterThan(10_000);
    await wall.type(':q\n');
    await wall.click(monitor);
    await wall.type('q');
    await wall.click(server);
    await page.keyboard.press('Control+c');
  } finally {
    fs.rmSync(site, { recursive: true, force: true });
  }
});
