// Agents side by side (issue 26): two terminal panes, each with its own browser pane. The
// pane header names the terminal driving it; another terminal's changing verbs are refused
// `pane_in_use` until the human hands the pane over from its menu ("Let t… drive this").
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test, type Wall } from './fixtures';

/** Types `cmd; echo "TAG rc=$?"` into terminal pane `id` and waits for the rc line; returns it. */
async function run(wall: Wall, id: string, tag: string, cmd: string, timeout = 40_000): Promise<number> {
  await wall.click(id);
  await wall.type(`${cmd}; echo "${tag} rc=$?"\n`);
  const re = new RegExp(`^${tag} rc=(\\d+)$`, 'm');
  await wall.waitText(id, re, timeout);
  return Number(re.exec(await wall.text(id))![1]);
}

test('two terminals, one browser pane each; the human hands one over from the pane menu', async ({ wall, page }) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'porthole-agents-'));
  fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>Counter</title><button onclick="this.textContent=\'Clicked\'">Press</button>\n');
  const [t1id] = await wall.paneIds();
  await wall.click(t1id);
  await wall.type(`cd ${dir} && srv=$(ph split -- python3 -m http.server 0 --bind 127.0.0.1) && ph wait "$srv" --until 'text=Serving HTTP' >/dev/null && port=$(ph ports "$srv" | awk 'NR==2{print $1}') && echo "port=$port"\n`);
  await wall.waitText(t1id, /^port=\d+$/m, 20_000);
  const port = /^port=(\d+)$/m.exec(await wall.text(t1id))![1];
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
