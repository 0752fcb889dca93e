// A project's `.porthole.toml` (DESIGN §14): "Start layout ▸ NAME" in a terminal's context
// menu asks the human to trust the file (it shows what would run), then starts its panes
// and opens its browser; starting it again reuses them. A changed file asks again.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Wall, api, expect, servePages, test } from './fixtures';

async function rightClick(wall: Wall, id: string) {
  await wall.pane(id).getByTestId('terminal-body').click({ button: 'right' });
  await expect(wall.page.getByTestId('context-menu')).toBeVisible();
}

/** Waits until the sidecar reports terminal pane `handle`'s cwd as `dir` (the shell said so with OSC 7). */
async function waitCwd(handle: string, dir: string) {
  await expect
    .poll(async () => ((await api('GET', '/api/control/panes')).panes as any[]).find((p) => p.handle === handle)?.cwd, { timeout: 15_000 })
    .toBe(dir);
}

async function kinds(wall: Wall): Promise<string[]> {
  return wall.panes().evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.kind!).sort());
}

test('Start layout from the context menu: trust prompt, then the panes start; a second start reuses them', async ({ wall, page }) => {
  test.setTimeout(120_000);
  const site = await servePages({ '/': '<!doctype html><title>layout site</title><h1 id="site">served for the layout</h1>' });
  const port = Number(new URL(site.origin).port);
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'porthole-project-')));
  fs.mkdirSync(path.join(dir, 'tools'));
  const file = path.join(dir, '.porthole.toml');
  const text = [
    '[[layouts]]',
    'name = "dev"',
    '[[layouts.panes]]',
    `command = "echo layout-pane-ready; exec sleep 600"`,
    'cwd = "tools"',
    'split = "down"',
    '[[layouts.browsers]]',
    `port = ${port}`,
    '',
  ].join('\n');
  fs.writeFileSync(file, text);
  try {
    const [term] = await wall.paneIds();
    await wall.click(term);
    const handle = (await wall.pane(term).getAttribute('data-terminal-id'))!;
    await wall.type(`cd ${dir}\n`);
    await waitCwd(handle, dir);

    // The menu offers the file's layout; picking it asks for trust first and starts nothing.
    await rightClick(wall, term);
    const item = page.locator('[data-testid=menu-start-layout][data-layout=dev]');
    await expect(item).toHaveText('Start layout ▸ dev');
    await item.click();
    const prompt = page.getByTestId('trust-prompt');
    await expect(prompt).toBeVisible();
    await expect(prompt.getByTestId('trust-file')).toHaveText(file);
    await expect(prompt.getByTestId('trust-command')).toHaveText(`echo layout-pane-ready; exec sleep 600 in ${path.join(dir, 'tools')}`);
    await expect(prompt.getByTestId('trust-browser')).toContainText(`http://localhost:${port}/`);
    expect(await kinds(wall)).toEqual(['terminal']);
    expect((await api('GET', '/api/terminals')).terminals).toHaveLength(1);

    // Trusted: a terminal running the command in its cwd, and the browser at the port.
    await prompt.getByTestId('trust-ok').click();
    await expect(prompt).toBeHidden();
    await expect.poll(() => kinds(wall), { timeout: 30_000 }).toEqual(['browser', 'terminal', 'terminal']);
    await expect(page.getByTestId('project-notice')).toHaveText(/Layout dev: 2 started, 0 reused/);
    const started = (await wall.paneIds()).filter((id) => id !== term);
    const newTerm = (await Promise.all(started.map(async (id) => ((await wall.pane(id).getAttribute('data-kind')) === 'terminal' ? id : null)))).find(Boolean)!;
    await wall.waitText(newTerm, /layout-pane-ready/, 15_000);
    const browser = started.find((id) => id !== newTerm)!;
    await expect(page.frameLocator(`[data-testid=pane][data-pane-id="${browser}"] iframe[data-testid=browser-frame]`).locator('#site')).toHaveText('served for the layout');
    const info = await api('GET', `/api/project?terminal=${handle}`);
    expect(info.trusted).toBe(true);

    // Again: no prompt, nothing new, the summary says so.
    await page.getByTestId('project-notice').getByRole('button', { name: 'Dismiss' }).click();
    await rightClick(wall, term);
    await item.click();
    await expect(page.getByTestId('project-notice')).toHaveText(/Layout dev: 0 started, 2 reused/);
    await expect(prompt).toBeHidden();
    expect(await kinds(wall)).toEqual(['browser', 'terminal', 'terminal']);
    expect((await api('GET', '/api/terminals')).terminals).toHaveLength(2);

    // A changed file asks again, showing the new command.
    fs.writeFileSync(file, text.replace('sleep 600', 'sleep 700'));
    await page.getByTestId('project-notice').getByRole('button', { name: 'Dismiss' }).click();
    await rightClick(wall, term);
    await item.click();
    await expect(prompt.getByTestId('trust-command')).toContainText('exec sleep 700');
    await prompt.getByTestId('trust-cancel').click();
    await expect(prompt).toBeHidden();
    expect((await api('GET', '/api/terminals')).terminals).toHaveLength(2);

    // A broken file: the menu names the file, line and column instead of offering layouts.
    fs.writeFileSync(file, '[[layouts]]\nname = "dev"\n[[layouts.panes]]\ncomand = "x"\n');
    await rightClick(wall, term);
    await expect(page.getByTestId('project-broken')).toContainText(`${file}:4:1: unknown field`);
    await expect(item).toHaveCount(0);
    await page.keyboard.press('Escape');
  } finally {
    await site.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('ph up on an untrusted file fails with exit 2 and the window shows the trust prompt', async ({ wall, page }) => {
  test.setTimeout(90_000);
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'porthole-project-')));
  const file = path.join(dir, '.porthole.toml');
  fs.writeFileSync(file, '[[layouts]]\nname = "default"\n[[layouts.panes]]\ncommand = ["sleep", "500"]\n');
  try {
    const [term] = await wall.paneIds();
    await wall.click(term);
    await wall.type(`cd ${dir}; ph up; echo "up=$?"\n`);
    await wall.waitText(term, /^up=\d+/m, 20_000);
    expect(await wall.text(term)).toMatch(/\[untrusted_project\][\s\S]*^up=2/m);
    const prompt = page.getByTestId('trust-prompt');
    await expect(prompt.getByTestId('trust-file')).toHaveText(file);
    await expect(prompt.getByTestId('trust-command')).toHaveText(`sleep 500 in ${dir}`);
    await expect(prompt.getByTestId('trust-ok')).toHaveText('Trust');
    await prompt.getByTestId('trust-ok').click();
    await expect(prompt).toBeHidden();
    expect(await kinds(wall)).toEqual(['terminal'], 'trusting from a ph prompt starts nothing by itself');
    await wall.click(term);
    await wall.type(`ph up; echo "up2=$?"\n`);
    await wall.waitText(term, /^up2=\d+/m, 30_000);
    expect(await wall.text(term)).toMatch(/^started\s+t\d+\s+sleep 500/m);
    expect(await wall.text(term)).toMatch(/^up2=0/m);
    await expect.poll(() => kinds(wall)).toEqual(['terminal', 'terminal']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
