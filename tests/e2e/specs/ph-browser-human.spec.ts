// The human watches the agent act (issue #10 item 7, and its "Done when"): `ph browser` run
// from a terminal pane drives the screencast pane beside it; the pane names the verb in its
// header and marks where the agent acts over the canvas (never in the page), mapped through
// the canvas fit at window DPR 1 and 2.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { expect, test, type Wall } from './fixtures';

/** The form page: a name field and a button; submitting shows "Thanks" on green. */
const FORM =
  '<!doctype html><title>Form</title><body style="margin:0;background:#fff">' +
  '<form style="padding:40px" onsubmit="document.body.style.background=\'rgb(0,160,80)\';document.body.innerHTML=\'<h1>Thanks, \'+this.n.value+\'</h1>\';return false">' +
  '<label>Name <input name=n></label> <button>Send</button></form>\n';

/** A TCP port nothing listens on now. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** Types `cmd; echo "TAG rc=$?"` into terminal pane `id` and waits for the rc line; returns it. */
async function run(wall: Wall, id: string, tag: string, cmd: string, timeout = 40_000): Promise<number> {
  await wall.type(`${cmd}; echo "${tag} rc=$?"\n`);
  const re = new RegExp(`^${tag} rc=(\\d+)$`, 'm');
  await wall.waitText(id, re, timeout);
  return Number(re.exec(await wall.text(id))![1]);
}

/** The ref on the outline line matching `line`. */
function refOf(snapshot: string, line: RegExp): string {
  const l = snapshot.split('\n').find((x) => line.test(x));
  expect(l, `${line} in\n${snapshot}`).toBeTruthy();
  return /\[ref=(e\d+)\]/.exec(l!)![1];
}

/** The RGBA of the screencast canvas at the centre of the page as drawn (frame fit). */
async function canvasCenter(page: Page): Promise<number[]> {
  return page.locator('[data-testid=pane][data-kind=browser] canvas').first().evaluate((c: HTMLCanvasElement) => {
    const [x] = (c.dataset.fit ?? '0,0,1').split(',').map(Number);
    // The canvas holds the frame's own pixels, letterboxed by CSS: canvas px per body CSS px.
    const k = c.width / (c.getBoundingClientRect().width - 2 * x);
    const ctx = new OffscreenCanvas(c.width, c.height).getContext('2d')!;
    ctx.drawImage(c, 0, 0);
    // Just inside the frame's top-left corner: page background, away from the text.
    const d = ctx.getImageData(Math.round(8 * k), Math.round(8 * k), 1, 1).data;
    return [d[0], d[1], d[2], d[3]];
  });
}

/** Starts `python3 -m http.server PORT` beside terminal `id` (in `dir`) and waits for it. */
async function startServer(wall: Wall, id: string, dir: string): Promise<number> {
  const port = await freePort();
  await wall.click(id);
  expect(await run(wall, id, 'split', `cd ${dir} && srv=$(ph split -- python3 -m http.server ${port} --bind 127.0.0.1) && ph wait "$srv" --until 'text=Serving HTTP' >/dev/null`)).toBe(0);
  return port;
}

test('Done when: a form checked from a terminal pane with ph browser, step by step, while the pane shows it', async ({ wall, page }) => {
  test.setTimeout(150_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'porthole-done-'));
  fs.writeFileSync(path.join(dir, 'index.html'), FORM);
  const shot = path.join(dir, 's.png');
  try {
    const [id] = await wall.paneIds();
    const port = await startServer(wall, id, dir);
    expect(await run(wall, id, 'open', `ph browser open :${port}`)).toBe(0);
    const host = page.locator('[data-testid=pane][data-kind=browser] .screencast-host');
    await expect(page.locator('[data-testid=pane][data-kind=browser]')).toHaveAttribute('data-view', 'ready');
    expect(await run(wall, id, 'snap', 'ph browser snapshot -i > snap.txt')).toBe(0);
    const snap = fs.readFileSync(path.join(dir, 'snap.txt'), 'utf8');
    expect(snap).toMatch(/^page http:\/\/(localhost|127\.0\.0\.1):\d+\/ "Form"/m);
    const name = refOf(snap, /textbox "Name"/);
    const send = refOf(snap, /button "Send"/);

    expect(await run(wall, id, 'fill', `ph browser fill ${name} hello`)).toBe(0);
    expect(await wall.text(id)).toContain(`fill ${name}: "hello"`);
    // The fill was shown: its verb, and a box over the field.
    await expect(host).toHaveAttribute('data-agent-marks', /^[1-9]/);
    const marksBefore = Number(await host.getAttribute('data-agent-marks'));

    expect(await run(wall, id, 'click', `ph browser click ${send}`)).toBe(0);
    await expect(host).toHaveAttribute('data-agent-marks', String(marksBefore + 1));
    expect(await run(wall, id, 'wait', 'ph browser wait --text Thanks')).toBe(0);
    expect(await run(wall, id, 'shot', `ph browser screenshot -o ${shot}`)).toBe(0);
    expect(fs.readFileSync(shot).subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');

    // The pane shows the result the agent got: the page's green "Thanks" background is painted.
    // (Frames are JPEG: each channel within a few levels.)
    const green = [0, 160, 80, 255];
    await expect
      .poll(async () => (await canvasCenter(page)).every((v, i) => Math.abs(v - green[i]) <= 12), { timeout: 20_000 })
      .toBe(true);
    await page.screenshot({ path: test.info().outputPath('done-when.png') });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

for (const dpr of [1, 2]) {
  test.describe(`window DPR ${dpr}`, () => {
    test.use({ deviceScaleFactor: dpr });

    test(`ph browser click shows its verb and a mark at the clicked point over the canvas (window DPR ${dpr})`, async ({ wall, page }) => {
      test.setTimeout(120_000);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'porthole-mark-'));
      fs.writeFileSync(path.join(dir, 'index.html'), FORM);
      try {
        const [id] = await wall.paneIds();
        const port = await startServer(wall, id, dir);
        expect(await run(wall, id, 'open', `ph browser open :${port}`)).toBe(0);
        // A fixed page viewport at DPR 2 that the pane must scale down (letterboxed): the mark
        // has to follow the same fit as the frame.
        expect(await run(wall, id, 'vp', 'ph browser viewport 1000 700 --dpr 2')).toBe(0);
        const pane = page.locator('[data-testid=pane][data-kind=browser]');
        const host = pane.locator('.screencast-host');
        const canvas = pane.locator('canvas');
        // The pane shows the 1000×700 page letterboxed (a frame of the new size has come).
        const fitted = () =>
          host.evaluate((h) => {
            const r = h.getBoundingClientRect();
            const scale = Number((h.querySelector('canvas')?.dataset.fit ?? '0,0,0').split(',')[2]);
            return Math.abs(scale - Math.min(r.width / 1000, r.height / 700)) < 0.001;
          });
        await expect.poll(fitted, { timeout: 20_000 }).toBe(true);
        expect(await run(wall, id, 'snap', 'ph browser snapshot -i > snap.txt')).toBe(0);
        const send = refOf(fs.readFileSync(path.join(dir, 'snap.txt'), 'utf8'), /button "Send"/);

        // Watch for the mark and the verb before the click: both are brief.
        // (Read where it is drawn while it is there: it goes after a second.)
        const mark = page.waitForFunction(
          () => {
            const e = document.querySelector<HTMLElement>('[data-testid=pane][data-kind=browser] [data-testid=agent-mark][data-verb=click]');
            if (!e) return null;
            const n = (v: string) => parseFloat(v);
            const host = e.parentElement!;
            const r = host.getBoundingClientRect();
            // The fit of the frame shown when the mark was drawn, and the host's size.
            const fit = host.querySelector('canvas')?.dataset.fit ?? '';
            return { kind: e.dataset.kind, host: host.classList.contains('screencast-host'), fit, hostW: r.width, hostH: r.height, l: n(e.style.left), t: n(e.style.top), w: n(e.style.width), h: n(e.style.height) };
          },
          null,
          { polling: 'raf', timeout: 40_000 },
        );
        const chip = page.waitForSelector('[data-testid=agent-chip]:text-matches("^t[0-9]+: click$")', { state: 'attached', timeout: 40_000 });
        expect(await run(wall, id, 'click', `ph --json browser click ${send} > click.json`)).toBe(0);
        const box = await (await mark).jsonValue();
        await chip;
        await page.screenshot({ path: test.info().outputPath(`agent-mark-dpr${dpr}.png`) });

        // Where the agent clicked (page CSS px) → where the pane drew it (host CSS px).
        const out = JSON.parse(fs.readFileSync(path.join(dir, 'click.json'), 'utf8'));
        const [fx, fy, scale] = box!.fit.split(',').map(Number);
        // The frame shown was the 1000×700 CSS px page, letterboxed into the host.
        expect(scale).toBeCloseTo(Math.min(box!.hostW / 1000, box!.hostH / 700), 3);
        expect(scale).toBeLessThan(1);
        expect(box!.kind).toBe('point');
        expect(Math.abs(box!.l + box!.w / 2 - (fx + out.point.x * scale))).toBeLessThan(0.5);
        expect(Math.abs(box!.t + box!.h / 2 - (fy + out.point.y * scale))).toBeLessThan(0.5);
        // Over the canvas, not in the page: the mark is an element of the host, the page never saw one.
        expect(box!.host).toBe(true);
        expect(await run(wall, id, 'marks', `ph browser eval --allow-eval 'document.querySelectorAll("[data-testid=agent-mark]").length'`)).toBe(0);
        expect(await wall.text(id)).toMatch(/^0$/m);
        // The mark fades and goes; the verb leaves the header after the action.
        await expect(pane.locator('[data-testid=agent-mark]')).toHaveCount(0);
        await expect(pane.locator('[data-testid=agent-chip]')).toHaveCount(0);
        await expect(host).toHaveAttribute('data-agent-marks', /^[1-9]/);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
