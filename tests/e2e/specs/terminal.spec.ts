import type { BrowserContext } from '@playwright/test';
import { Wall, api, expect, login, test } from './fixtures';

test('typing runs a command and shows its output', async ({ wall }) => {
  const [id] = await wall.paneIds();
  await wall.click(id);
  await wall.type('echo hello\n');
  await wall.waitText(id, /^hello$/m);
  // The title falls back to the command (or an OSC title the shell set) ...
  await expect(wall.pane(id).getByTestId('pane-title')).not.toHaveText('');
  // ... and follows OSC 0/2.
  await wall.type("printf '\\033]2;%s\\007' build-watch\n");
  await expect(wall.pane(id).getByTestId('pane-title')).toHaveText('build-watch');
});

test('a dropped connection reconnects and replays the scrollback once', async ({ wall, page }) => {
  const [id] = await wall.paneIds();
  await wall.click(id);
  await wall.type('echo before-drop-$((3*3))\n');
  await wall.waitText(id, /^before-drop-9$/m);
  // A new socket replaces the dropped one.
  await wall.dropConnection(id);
  await expect(wall.pane(id)).toHaveAttribute('data-status', 'open');
  await wall.waitText(id, /^before-drop-9$/m);
  await wall.type('echo after-drop\n');
  await wall.waitText(id, /^after-drop$/m);
  expect((await wall.text(id)).match(/^before-drop-9$/gm)).toHaveLength(1);
});

test('split right with the prefix, and with the header button', async ({ wall, page }) => {
  const [first] = await wall.paneIds();
  await wall.click(first);
  await wall.prefix('Shift+Digit5'); // %
  await wall.waitOpen(2);
  const second = await wall.focusedId();
  expect(second).not.toBe(first);
  const a = await wall.rect(first);
  const b = await wall.rect(second);
  expect(b.x).toBeGreaterThan(a.x + a.width - 1); // side by side
  expect(Math.abs(a.y - b.y)).toBeLessThan(1);
  await wall.type('echo "in-$((6*7))-second"\n');
  await wall.waitText(second, /^in-42-second$/m);
  expect(await wall.text(first)).not.toMatch(/in-42-second/);

  // The header button splits the pane it belongs to.
  await wall.pane(second).getByTestId('pane-split-down').click();
  await wall.waitOpen(3);
  const third = await wall.focusedId();
  const c = await wall.rect(third);
  const b2 = await wall.rect(second);
  expect(c.y).toBeGreaterThan(b2.y + b2.height - 1); // below
  await wall.type('echo third-$((1+2))\n');
  await wall.waitText(third, /^third-3$/m);

  await wall.pane(first).getByTestId('pane-split-right').click();
  await wall.waitOpen(4);
  await page.keyboard.type('echo fourth\n');
  await wall.waitText(await wall.focusedId(), /^fourth$/m);
});

test('dragging a gap resizes the panes and the PTY', async ({ wall, page }) => {
  const [first] = await wall.paneIds();
  await wall.click(first);
  await wall.prefix('Shift+Digit5');
  await wall.waitOpen(2);
  const second = await wall.focusedId();
  await wall.type('stty size\n');
  await wall.waitText(second, /^\d+ \d+$/m);
  const before = (await wall.text(second)).match(/^(\d+) (\d+)$/m)!;
  const colsBefore = Number(before[2]);
  const a0 = await wall.rect(first);

  const gap = page.getByTestId('gap').first();
  const g = (await gap.boundingBox())!;
  await page.mouse.move(g.x + g.width / 2, g.y + g.height / 2);
  await page.mouse.down();
  for (let i = 1; i <= 10; i++) await page.mouse.move(g.x + g.width / 2 - 25 * i, g.y + g.height / 2);
  await page.mouse.up();

  const a1 = await wall.rect(first);
  const b1 = await wall.rect(second);
  expect(a1.width).toBeLessThan(a0.width - 200);
  expect(b1.x).toBeLessThan(a0.x + a0.width - 200);
  // After the settle time the PTY has the new size.
  await expect.poll(async () => (await wall.size(second)).cols).toBeGreaterThan(colsBefore + 20);
  await wall.click(second);
  await wall.type('clear; stty size\n');
  await expect
    .poll(async () => Number(((await wall.text(second)).match(/^(\d+) (\d+)$/m) ?? [])[2] ?? 0))
    .toBe((await wall.size(second)).cols);

  // Minimize and restore put the pane back where it stood, with its dragged size.
  await wall.pane(first).getByTestId('pane-minimize').click();
  await expect(wall.visiblePanes()).toHaveCount(1);
  await page.getByTestId('baseboard-chip').click();
  await wall.waitOpen(2);
  expect(await wall.rect(first)).toEqual(a1);
  expect(await wall.rect(second)).toEqual(b1);
});

test('minimize keeps the terminal running and restore brings it back', async ({ wall, page }) => {
  const [first] = await wall.paneIds();
  await wall.click(first);
  await wall.prefix('Shift+Digit5');
  await wall.waitOpen(2);
  const second = await wall.focusedId();
  await wall.type('echo kept-content; for i in $(seq 1 600); do echo tick-$i; sleep 0.1; done\n');
  await wall.waitText(second, /^tick-3$/m);

  await wall.pane(second).getByTestId('pane-minimize').click();
  await expect(wall.visiblePanes()).toHaveCount(1);
  await expect(wall.pane(second)).toHaveAttribute('data-visible', 'false'); // still mounted
  const chip = page.getByTestId('baseboard-chip');
  await expect(chip).toHaveCount(1);
  const ticks = async () => Math.max(...[...(await wall.text(second)).matchAll(/^tick-(\d+)$/gm)].map((m) => Number(m[1])));
  const atMinimize = await ticks();
  // The program keeps running while the pane is minimized.
  await expect.poll(ticks, { timeout: 10_000 }).toBeGreaterThan(atMinimize + 10);

  await chip.click();
  await wall.waitOpen(2);
  await expect(chip).toHaveCount(0);
  expect(await wall.text(second)).toMatch(/^kept-content$/m);
  await expect.poll(ticks).toBeGreaterThan(atMinimize + 15);

  // And with the keyboard: Ctrl-b m minimizes the focused pane.
  await wall.click(first);
  await wall.prefix('m');
  await expect(page.getByTestId('baseboard-chip')).toHaveCount(1);
  await page.getByTestId('baseboard-chip').click();
  await wall.waitOpen(2);
  await wall.type('\x03'); // nothing bad happens to the other pane
});

test('a reload reattaches every pane with its scrollback', async ({ wall, page }) => {
  const [first] = await wall.paneIds();
  await wall.click(first);
  await wall.type('echo before-reload-$((40+2))\n');
  await wall.waitText(first, /^before-reload-42$/m);
  await wall.prefix('Shift+Quote'); // "
  await wall.waitOpen(2);
  const second = await wall.focusedId();
  await wall.type('echo second-pane-$((1+1))\n');
  await wall.waitText(second, /^second-pane-2$/m);
  const rects = [await wall.rect(first), await wall.rect(second)];
  await page.waitForTimeout(600); // the layout save is debounced

  await page.reload();
  await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
  await wall.waitOpen(2);
  expect((await wall.paneIds()).sort()).toEqual([first, second].sort());
  await wall.waitText(first, /^before-reload-42$/m);
  await wall.waitText(second, /^second-pane-2$/m);
  expect(await wall.rect(first)).toEqual(rects[0]);
  expect(await wall.rect(second)).toEqual(rects[1]);
  // Still interactive after the reattach, and the replay drew the output once.
  await wall.click(first);
  await wall.type('echo after-reload\n');
  await wall.waitText(first, /^after-reload$/m);
  expect((await wall.text(first)).match(/^before-reload-42$/gm)).toHaveLength(1);
});

/** Waits until the sidecar's saved workspace holds pane `id` (the layout save is debounced). */
async function waitSaved(id: string) {
  await expect.poll(async () => JSON.stringify((await api('GET', '/api/workspace')).workspace ?? null)).toContain(id);
}

/** The pane's text after its last line that is exactly `marker`. */
async function textAfter(wall: Wall, id: string, marker: string): Promise<string> {
  const lines = (await wall.text(id)).split('\n');
  return lines.slice(lines.lastIndexOf(marker) + 1).join('\n');
}

test('queries in the replayed scrollback are not answered again (reload, reconnect); keys typed then arrive', async ({ wall, page }) => {
  const [id] = await wall.paneIds();
  await wall.click(id);
  // DA1, DA2, CPR and an OSC 11 colour query; the live replies are read up to the OSC's
  // final "\", then `cat -v` shows whatever reaches the program afterwards.
  await wall.type(`printf 'Q\\033[cQ\\033[>cQ\\033[6nQ\\033]11;?\\033\\\\Q\\n'; IFS= read -rs -d '\\' got; echo READY-$((6*7)); cat -v\n`);
  await wall.waitText(id, /^READY-42$/m);
  await waitSaved(id);

  await page.reload();
  await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
  await wall.waitOpen(1);
  await wall.waitText(id, /^READY-42$/m); // the replay (with its queries) has been parsed
  await wall.click(id);
  await wall.type('typed-after-reload\n');
  // The tty's echo of the line, then cat's copy: nothing in front of what was typed.
  await expect.poll(() => textAfter(wall, id, 'READY-42')).toMatch(/typed-after-reload\n.*typed-after-reload/);
  expect(await textAfter(wall, id, 'READY-42')).toBe('typed-after-reload\ntyped-after-reload');

  // A dropped connection replays again: still no replies.
  await wall.dropConnection(id);
  await wall.waitText(id, /^READY-42$/m);
  await wall.type('typed-after-drop\n');
  await expect.poll(() => textAfter(wall, id, 'typed-after-reload')).toMatch(/typed-after-drop\n.*typed-after-drop/);
  expect(await textAfter(wall, id, 'typed-after-reload')).toBe('typed-after-drop\ntyped-after-drop');
});

/** Opens the wall, with its one terminal pane `id`, in a second window (page) of `context`. */
async function secondWindow(context: BrowserContext, id: string) {
  await waitSaved(id);
  const page2 = await context.newPage();
  await login(page2);
  const wall2 = new Wall(page2);
  await wall2.waitOpen(1);
  expect(await wall2.paneIds()).toEqual([id]);
  return { page2, wall2 };
}

test('a live query gets exactly one answer with the terminal open in two pages', async ({ wall, context }) => {
  const [id] = await wall.paneIds();
  const { page2, wall2 } = await secondWindow(context, id);

  // The program asks for DA1, prints a marker, then reports what it reads up to a "Z".
  const ask = (n: number) =>
    `printf '\\033[cMARK-%d\\n' $((${n}+1)); IFS= read -rs -d Z got; printf 'GOT-%d[%s]\\n' $((${n}+1)) "$(printf %s "$got" | cat -v)"\n`;
  for (const [n, w] of [[40, wall], [50, wall2]] as const) {
    // Typing in a page makes it the answerer.
    await w.click(id);
    await w.type(ask(n));
    // Both pages have parsed the query (and sent any reply) before the "Z" is typed.
    await wall.waitText(id, new RegExp(`^MARK-${n + 1}$`, 'm'));
    await wall2.waitText(id, new RegExp(`^MARK-${n + 1}$`, 'm'));
    await w.type('Z');
    await w.waitText(id, new RegExp(`^GOT-${n + 1}\\[`, 'm'));
    expect((await w.text(id)).match(new RegExp(`^GOT-${n + 1}\\[.*$`, 'm'))![0]).toBe(`GOT-${n + 1}[^[[?1;2c]`);
  }
  await page2.close();
});

test('exit shows the code and Enter starts a new shell in the same pane', async ({ wall }) => {
  const [id] = await wall.paneIds();
  await wall.click(id);
  const oldTerminal = await wall.pane(id).getAttribute('data-terminal-id');
  await wall.type('exit 3\n');
  await wall.waitText(id, /\[process exited with code 3\]/);
  await expect(wall.pane(id)).toHaveAttribute('data-status', 'exited');
  await wall.type('\n');
  await expect(wall.pane(id)).toHaveAttribute('data-status', 'open');
  await expect(wall.pane(id)).not.toHaveAttribute('data-terminal-id', oldTerminal!);
  await wall.type('echo reborn\n');
  await wall.waitText(id, /^reborn$/m);
});

test('zoom, focus by direction, swap and close', async ({ wall, page }) => {
  const [first] = await wall.paneIds();
  await wall.click(first);
  await wall.prefix('Shift+Digit5');
  await wall.waitOpen(2);
  const second = await wall.focusedId();
  await wall.prefix('ArrowLeft');
  await expect(wall.pane(first)).toHaveAttribute('data-focused', 'true');
  await wall.prefix('o');
  await expect(wall.pane(second)).toHaveAttribute('data-focused', 'true');

  await wall.prefix('z');
  await expect(wall.visiblePanes()).toHaveCount(1);
  const z = await wall.rect(second);
  const wallBox = (await page.getByTestId('wall').boundingBox())!;
  expect(z.width).toBeGreaterThan(wallBox.width - 2);
  await wall.pane(second).getByTestId('pane-zoom').click();
  await expect(wall.visiblePanes()).toHaveCount(2);

  const leftBefore = await wall.rect(first);
  await wall.prefix('Shift+BracketRight'); // } swap with next (wraps)
  await expect.poll(async () => (await wall.rect(second)).x).toBeLessThan(leftBefore.x + 1);

  await wall.prefix('x');
  await expect(wall.panes()).toHaveCount(1);
  await wall.pane(first).getByTestId('pane-close').click();
  // Closing the last pane opens a fresh one (closing first asks the sidecar whether the
  // pane is busy: wait for the old pane to go, not just for one pane).
  await expect(wall.pane(first)).toHaveCount(0);
  await expect(wall.panes()).toHaveCount(1);
  await wall.waitOpen(1);
  const [fresh] = await wall.paneIds();
  expect(fresh).not.toBe(first);
  await wall.click(fresh);
  await wall.type('echo fresh\n');
  await wall.waitText(fresh, /^fresh$/m);
});

test('Ctrl-b Ctrl-b sends a literal Ctrl-b', async ({ wall, page }) => {
  const [id] = await wall.paneIds();
  await wall.click(id);
  await wall.type('cat -v\n');
  await page.waitForTimeout(300);
  await page.keyboard.press('Control+b');
  await page.keyboard.press('Control+b');
  await wall.type('\n');
  await wall.waitText(id, /^\^B$/m);
  await page.keyboard.press('Control+c');
});

test('a flood of output completes at the program\'s pace; the pane skips ahead by state and says so', async ({ wall }) => {
  const [id] = await wall.paneIds();
  await wall.click(id);
  // ~6 MB: far more than xterm.js draws at once, so the pane falls behind and catches up by
  // state (protocol §5.4) instead of drawing every line.
  await wall.type('yes porthole-flow-control-line | head -n 200000; echo flood-$((1+1))-done\n');
  await wall.waitText(id, /^flood-2-done$/m, 45_000);
  const host = wall.pane(id).locator('.xterm-host');
  await expect(host).toHaveAttribute('data-caught-up-lines', /^[1-9]\d*$/);
  // The lines just above the end are in the scrollback, in order.
  expect(await wall.text(id)).toMatch(/(porthole-flow-control-line\n){50}flood-2-done/);
  await wall.type('echo still-responsive\n');
  await wall.waitText(id, /^still-responsive$/m);
});

test('yes, then Ctrl-C: the prompt comes at once, the scrollback holds the last lines, and a throttled second window slows nothing', async ({ wall, page, context }) => {
  const [id] = await wall.paneIds();
  // A second window on the same terminal, throttled to a trickle (its JS runs 50× slower).
  const { page2, wall2 } = await secondWindow(context, id);
  const cdp = await context.newCDPSession(page2);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: 50 });

  await page.bringToFront();
  await wall.click(id);
  await wall.type('PS1="ready> "; yes porthole-yes-line\n');
  await wall.waitText(id, /^porthole-yes-line$/m);
  await page.waitForTimeout(3000);
  await page.keyboard.press('Control+c');
  // The prompt is drawn by this window within a few seconds, the flood's end above it.
  await wall.waitText(id, /^ready> $/m, 8_000);
  const text = await wall.text(id);
  expect(text).toMatch(/(porthole-yes-line\n){100}[^\n]*\^C\nready> $/);
  await wall.type('echo after-flood\n');
  await wall.waitText(id, /^after-flood$/m);
  // The throttled window gets there too, in its own time.
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 });
  await wall2.waitText(id, /^after-flood$/m, 30_000);
  await page2.close();
});

test('copy and paste through the clipboard; a pasted ESC[201~ cannot end the paste', async ({ wall, page, context }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const [id] = await wall.paneIds();
  await wall.click(id);
  await wall.type('echo copy-me-please\n');
  await wall.waitText(id, /^copy-me-please$/m);

  // Paste: Ctrl+Shift+V pastes the clipboard at the prompt.
  await page.evaluate(() => navigator.clipboard.writeText('echo pasted-$((20+3))'));
  await page.keyboard.press('Control+Shift+V');
  await wall.type('\n');
  await wall.waitText(id, /^pasted-23$/m);

  // Injection: bash has bracketed paste on, so pasted newlines do not run anything. Without
  // sanitizing, the pasted ESC[201~ would end the paste early and the rest would run.
  await page.evaluate(() => navigator.clipboard.writeText('echo harmless\n\x1b[201~echo INJECTED\n'));
  await page.keyboard.press('Control+Shift+V');
  await page.waitForTimeout(800);
  expect(await wall.text(id)).not.toMatch(/^INJECTED$/m);
  await page.keyboard.press('Control+c');

  // Copy: select a word with a double click, Ctrl+Shift+C puts it on the clipboard.
  await wall.type('clear\n');
  await wall.type('echo zebra\n');
  await wall.waitText(id, /^zebra$/m);
  const body = wall.pane(id).getByTestId('terminal-body');
  const row = body.locator('.xterm-rows > div', { hasText: /^zebra\s*$/ });
  if ((await row.count()) > 0) {
    // DOM renderer: double-click the word on its row, where it is drawn (xterm's own layer
    // over the rows takes the mouse, as for a user).
    const box = (await row.first().boundingBox())!;
    await page.mouse.dblclick(box.x + 10, box.y + box.height / 2);
  } else {
    await page.evaluate((id) => (window as any).__porthole.store.runtime(id).host.term.selectAll(), id);
  }
  await page.keyboard.press('Control+Shift+C');
  await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toMatch(/zebra/);
});

test('the DOM renderer (the WebKitGTK default) draws output into .xterm-rows', async ({ wall, page }) => {
  await page.goto(new URL('/?renderer=dom', page.url()).toString());
  await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
  await wall.waitOpen(1);
  const [id] = await wall.paneIds();
  expect(await page.evaluate((id) => (window as any).__porthole.renderer(id), id)).toBe('dom');
  await wall.click(id);
  await wall.type('echo drawn-by-$((2+2))-dom\n');
  await expect(wall.pane(id).locator('.xterm-rows')).toContainText('drawn-by-4-dom');
});

test('the context menu splits, minimizes and closes; the prefix shows an indicator', async ({ wall, page }) => {
  const [first] = await wall.paneIds();
  await wall.click(first);
  await page.keyboard.press('Control+b');
  await expect(page.getByTestId('prefix-indicator')).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('prefix-indicator')).toBeHidden();

  await wall.pane(first).getByTestId('terminal-body').click({ button: 'right' });
  const menu = page.getByTestId('context-menu');
  await expect(menu).toBeVisible();
  await expect(menu.getByTestId('menu-minimize')).toBeDisabled(); // the only pane
  await menu.getByTestId('menu-split-right').click();
  await expect(menu).toBeHidden();
  await wall.waitOpen(2);
  const second = await wall.focusedId();
  await wall.type('echo from-menu-split\n');
  await wall.waitText(second, /^from-menu-split$/m);

  await wall.pane(second).getByTestId('terminal-body').click({ button: 'right' });
  await menu.getByTestId('menu-minimize').click();
  await expect(page.getByTestId('baseboard-chip')).toHaveCount(1);

  await wall.pane(first).getByTestId('terminal-body').click({ button: 'right' });
  await expect(menu).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(menu).toBeHidden();
  await wall.pane(first).getByTestId('terminal-body').click({ button: 'right' });
  await menu.getByTestId('menu-close').click();
  // The minimized pane comes back when the last visible one closes.
  await expect(wall.panes()).toHaveCount(1);
  await expect(wall.pane(second)).toHaveAttribute('data-visible', 'true');
  expect(await wall.text(second)).toMatch(/^from-menu-split$/m);
});

test('light and dark themes follow prefers-color-scheme live', async ({ wall, page }) => {
  const [id] = await wall.paneIds();
  const colors = () =>
    page.evaluate((id) => {
      const term = (window as any).__porthole.store.runtime(id).host.term;
      const header = document.querySelector('[data-testid=pane-header]')!;
      return { term: term.options.theme.background as string, header: getComputedStyle(header).backgroundColor };
    }, id);
  await page.emulateMedia({ colorScheme: 'dark' });
  const dark = await colors();
  await page.emulateMedia({ colorScheme: 'light' });
  await expect.poll(async () => (await colors()).term).not.toBe(dark.term);
  const light = await colors();
  expect(light.header).not.toBe(dark.header);
  await page.emulateMedia({ colorScheme: 'dark' });
  await expect.poll(async () => (await colors()).term).toBe(dark.term);
});

test('find in the scrollback with Ctrl+Shift+F', async ({ wall, page }) => {
  const [id] = await wall.paneIds();
  await wall.click(id);
  await wall.type('echo hay; echo needle-$((5*5)); echo hay\n');
  await wall.waitText(id, /^needle-25$/m);
  await page.keyboard.press('Control+Shift+F');
  const input = wall.pane(id).getByTestId('find-input');
  await expect(input).toBeFocused();
  await input.fill('needle-25');
  await expect
    .poll(() => page.evaluate((id) => (window as any).__porthole.store.runtime(id).host.term.getSelection(), id))
    .toBe('needle-25');
  await input.press('Escape');
  await expect(wall.pane(id).getByTestId('find-bar')).toHaveCount(0);
  await wall.type('echo back-in-terminal\n');
  await wall.waitText(id, /^back-in-terminal$/m);
});

test('a reload drops panes whose terminal is gone, and starts fresh when none is left', async ({ wall, page }) => {
  const [first] = await wall.paneIds();
  await wall.click(first);
  await wall.prefix('Shift+Digit5');
  await wall.waitOpen(2);
  const second = await wall.focusedId();
  const t2 = (await wall.pane(second).getAttribute('data-terminal-id'))!;
  // Deleted behind the UI's back: the attached pane sees the exit.
  await api('DELETE', `/api/terminals/${t2}`);
  await expect(wall.pane(second)).toHaveAttribute('data-status', /exited|gone/);
  await page.waitForTimeout(600);

  await page.reload();
  await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
  await wall.waitOpen(1);
  expect(await wall.paneIds()).toEqual([first]);

  const t1 = (await wall.pane(first).getAttribute('data-terminal-id'))!;
  await api('DELETE', `/api/terminals/${t1}`);
  await page.reload();
  await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
  await wall.waitOpen(1);
  const [fresh] = await wall.paneIds();
  await expect(wall.pane(fresh)).not.toHaveAttribute('data-terminal-id', t1);
  await wall.type('echo fresh-start\n');
  await wall.waitText(fresh, /^fresh-start$/m);
});
