// `ph browser` from a terminal pane against the real UI: `open` answers once the pane's
// Chromium is up (the UI creates it when the pane mounts), so the next verb can act at once,
// and the screencast pane shows the page change the agent made.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from './fixtures';

test('ph browser open, snapshot, fill, click and wait work back to back from a pane', async ({ wall }) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'porthole-phb-'));
  fs.writeFileSync(
    path.join(dir, 'index.html'),
    '<!doctype html><title>Form</title><form onsubmit="document.body.textContent=\'Thanks, \'+this.n.value;return false">' +
      '<label>Name <input name=n></label><button>Send</button></form>\n',
  );
  const [id] = await wall.paneIds();
  await wall.click(id);
  await wall.type(`cd ${dir} && srv=$(ph split -- python3 -m http.server 0 --bind 127.0.0.1) && ph wait "$srv" --until 'text=Serving HTTP' >/dev/null && port=$(ph ports "$srv" | awk 'NR==2{print $1}') && echo "port=$port"\n`);
  await wall.waitText(id, /^port=\d+$/m, 20_000);
  await wall.type('ph browser open ":$port" >/dev/null && ph browser snapshot -i > snap.txt; echo "snap rc=$?"\n');
  await wall.waitText(id, /^snap rc=\d+$/m, 40_000);
  expect(await wall.text(id)).toMatch(/^snap rc=0$/m);
  const snap = fs.readFileSync(path.join(dir, 'snap.txt'), 'utf8');
  expect(snap).toMatch(/textbox "Name" \[ref=e\d+\]/);
  expect(snap).toMatch(/button "Send" \[ref=e\d+\]/);
  const name = /textbox "Name" \[ref=(e\d+)\]/.exec(snap)![1];
  const send = /button "Send" \[ref=(e\d+)\]/.exec(snap)![1];
  await wall.type(`ph browser fill ${name} hello && ph browser click ${send} && ph browser wait --text Thanks; echo "act rc=$?"\n`);
  await wall.waitText(id, /^act rc=\d+$/m, 40_000);
  expect(await wall.text(id)).toMatch(/^act rc=0$/m);
  // The human sees it: the screencast pane's canvas is live and the sidecar's page says Thanks.
  await expect(wall.page.locator('[data-testid=pane][data-kind=browser] canvas').first()).toBeVisible();
  fs.rmSync(dir, { recursive: true, force: true });
});
