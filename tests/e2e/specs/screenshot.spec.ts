// Takes docs/screenshot.png: two split terminals running real programs.
import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from './fixtures';

test('screenshot of two split terminals', async ({ wall, page }) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  const [first] = await wall.paneIds();
  await wall.click(first);
  await wall.prefix('Shift+Digit5');
  await wall.waitOpen(2);
  const second = await wall.focusedId();
  const top = fs.existsSync('/usr/bin/htop') ? 'htop' : 'top';
  await wall.type(`${top}\n`);
  await wall.waitText(second, /Tasks:|PID/);

  await wall.prefix('ArrowLeft');
  await expect(wall.pane(first)).toHaveAttribute('data-focused', 'true');
  const repo = path.resolve(import.meta.dirname, '../../..');
  const prompt = "export PS1='\\[\\e[1;32m\\]dev@porthole\\[\\e[0m\\]:\\[\\e[1;34m\\]\\w\\[\\e[0m\\]\\$ '";
  await wall.type(`${prompt}; cd ${repo} && clear\n`);
  await wall.type("ls --color=auto -F && git log --color --format='%C(auto)%h%d %<(44,trunc)%s' -16\n");
  await wall.waitText(first, /git log[^]*dev@porthole:\S*[$#] ?$/m);
  await page.waitForTimeout(1200);
  const out = path.resolve(repo, 'docs/screenshot.png');
  await page.screenshot({ path: out });
  expect(fs.statSync(out).size).toBeGreaterThan(10_000);
  await wall.click(second);
  await wall.type('q');
});
