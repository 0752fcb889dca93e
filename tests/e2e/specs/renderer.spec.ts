// Terminals that keep up, item 3 (issue 27): the renderer fits the machine. Headless Chromium
// draws WebGL with SwiftShader (a software GL), where the DOM renderer is many times faster,
// so "auto" picks the DOM renderer here and says why in the pane's menu; the menu's choice
// is written to config.toml and applied live to every terminal.
import fs from 'node:fs';
import { api, expect, test } from './fixtures';

test('auto picks the DOM renderer on a software GL, says so in the pane menu, and the menu switches it', async ({ wall, page }) => {
  const [id] = await wall.paneIds();
  const host = wall.pane(id).locator('.xterm-host');
  await expect(host).toHaveAttribute('data-renderer', 'dom');
  await expect(host).toHaveAttribute('data-renderer-why', /software GL/);
  const file = (await api('GET', '/api/config')).file as string;
  try {
    // The pane's menu names it and why, and offers the choice.
    await wall.pane(id).getByTestId('terminal-body').click({ button: 'right' });
    const menu = page.getByTestId('context-menu');
    await expect(menu.getByTestId('renderer-now')).toHaveText('Renderer: DOM');
    await expect(menu.getByTestId('renderer-why')).toContainText(/automatic: software GL/);
    await expect(menu.getByTestId('menu-renderer-auto')).toHaveAttribute('aria-checked', 'true');
    await menu.getByTestId('menu-renderer-webgl').click();
    await expect(menu).toBeHidden();
    // Written to the file, applied live: this terminal now draws with WebGL.
    expect(fs.readFileSync(file, 'utf8')).toMatch(/^renderer = "webgl"$/m);
    await expect(host).toHaveAttribute('data-renderer', 'webgl');
    await expect(host).toHaveAttribute('data-renderer-why', /chosen/);
    await wall.type('echo still-typing\n');
    await wall.waitText(id, /^still-typing$/m);
    // Back to automatic.
    await wall.pane(id).getByTestId('terminal-body').click({ button: 'right' });
    await expect(menu.getByTestId('menu-renderer-webgl')).toHaveAttribute('aria-checked', 'true');
    await menu.getByTestId('menu-renderer-auto').click();
    await expect(host).toHaveAttribute('data-renderer', 'dom');
  } finally {
    await api('PATCH', '/api/config/terminal', { renderer: 'auto' });
  }
});
