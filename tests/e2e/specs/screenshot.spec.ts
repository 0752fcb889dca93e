// Takes docs/screenshot.png: two split terminals running real programs.
import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from './fixtures';

test('screenshot of two split terminals', async ({ wall, page }) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  const [first] = await wall.paneIds();
  await wall.click(first);
  await wall.type('cd /usr && clear && ls --color=auto -F && ls -l --color=always /usr/share | head -28\n');
  await wall.waitText(first, /\$ $/m);
  await wall.prefix('Shift+Digit5');
  await wall.waitOpen(2);
  const second = await wall.focusedId();
  const top = fs.existsSync('/usr/bin/htop') ? 'htop' : 'top';
  await wall.type(`${top}\n`);
  await wall.waitText(second, /Tasks:|PID/);
  await page.waitForTimeout(1500);
  const out = path.resolve(import.meta.dirname, '../../../docs/screenshot.png');
  await page.screenshot({ path: out });
  expect(fs.statSync(out).size).toBeGreaterThan(10_000);
  await wall.type('q');
});
