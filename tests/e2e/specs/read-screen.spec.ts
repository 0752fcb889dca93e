// `ph read` (the sidecar's own screen model, protocol §9.5) shows what xterm.js shows in the
// same pane: full-screen programs (vim, less, htop), wide and non-ASCII characters, and the
// screen after the pane was resized.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { type Wall, BASE, expect, test } from './fixtures';

const repo = path.resolve(import.meta.dirname, '../../..');
const PH = path.join(repo, 'target/debug/ph');

/** The real `ph`, run by the test with the master token (it reaches the control verbs too). */
async function ph(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(PH, args, {
    env: { ...process.env, PORTHOLE_URL: BASE(), PORTHOLE_TOKEN: process.env.PORTHOLE_E2E_TOKEN! },
  });
  return stdout;
}

/**
 * What xterm.js shows now: the viewport's rows with trailing blanks trimmed (xterm's own trim
 * keeps spaces a program wrote explicitly; they show as nothing), trailing empty rows dropped.
 */
async function xtermScreen(wall: Wall, id: string): Promise<string> {
  return wall.page.evaluate((id) => {
    const term = (window as any).__porthole.store.runtime(id).host.term;
    const buf = term.buffer.active;
    const rows: string[] = [];
    for (let y = 0; y < term.rows; y++) rows.push((buf.getLine(buf.viewportY + y)?.translateToString(true) ?? '').replace(/ +$/, ''));
    while (rows.length && rows[rows.length - 1] === '') rows.pop();
    return rows.join('\n');
  }, id);
}

async function handleOf(wall: Wall, id: string): Promise<string> {
  await expect.poll(() => wall.page.evaluate((id) => (window as any).__porthole.store.getSnapshot().panes[id]?.handle ?? null, id)).not.toBeNull();
  return wall.page.evaluate((id) => (window as any).__porthole.store.getSnapshot().panes[id].handle, id);
}

/** Waits until `ph read` and xterm.js agree (a redraw may land between the two reads). */
async function expectSameScreen(wall: Wall, id: string, handle: string, mustShow: RegExp) {
  await wall.waitText(id, mustShow, 15_000);
  let last = { ph: '', xterm: '' };
  await expect
    .poll(
      async () => {
        const xterm = await xtermScreen(wall, id);
        const read = (await ph('read', handle)).replace(/\n$/, '');
        last = { ph: read, xterm };
        return read === xterm && mustShow.test(read);
      },
      { timeout: 15_000, message: 'ph read matches xterm.js' },
    )
    .toBe(true)
    .catch((e) => {
      const a = last.ph.split('\n');
      const b = last.xterm.split('\n');
      const i = a.findIndex((l, k) => l !== b[k]);
      const at = i < 0 ? Math.min(a.length, b.length) : i;
      throw new Error(
        `${e}\nrows: ph ${a.length}, xterm ${b.length}; first difference at row ${at}:\n` +
          `ph:    ${JSON.stringify(a[at])}\nxterm: ${JSON.stringify(b[at])}\n--- ph read ---\n${last.ph}`,
      );
    });
}

/** Waits until the shell's prompt is back on the screen's last line (a program that exits reads keys typed before it has). */
async function waitPrompt(handle: string) {
  await expect.poll(async () => (await ph('read', handle)).trimEnd().split('\n').pop(), { timeout: 15_000 }).toBe('$');
}

test('ph read shows what xterm.js shows: vim, less and htop, wide characters, after a resize', async ({ wall, page }) => {
  const [id] = await wall.paneIds();
  const handle = await handleOf(wall, id);
  await wall.click(id);
  // A file with wide and accented characters, long enough to scroll.
  await wall.type(`cd "$(mktemp -d)" && { seq 1 120; printf 'caf\\303\\251 \\346\\274\\242\\345\\255\\227 end\\n'; } > f.txt && clear\n`);
  await waitPrompt(handle);

  await wall.type('vim -u NONE -N +60 f.txt\n');
  await expectSameScreen(wall, id, handle, /^60$/m);
  await wall.type('G');
  await expectSameScreen(wall, id, handle, /café 漢字 end/);
  await wall.type(':q!\n');
  await waitPrompt(handle);

  await wall.type('less f.txt\n');
  await expectSameScreen(wall, id, handle, /^1$/m);
  await wall.type('G');
  await expectSameScreen(wall, id, handle, /café 漢字 end/);
  await wall.type('q');
  await waitPrompt(handle);

  // htop redraws on its own; a long delay keeps the screen still long enough to compare.
  await wall.type('htop -d 600\n');
  await expectSameScreen(wall, id, handle, /Load average/);
  // A narrower pane: both redraw at the new size.
  await page.setViewportSize({ width: 900, height: 600 });
  await expectSameScreen(wall, id, handle, /Load average/);
  await wall.type('q');
  await waitPrompt(handle);
  await expectSameScreen(wall, id, handle, /^\$ ?$/m);
});
