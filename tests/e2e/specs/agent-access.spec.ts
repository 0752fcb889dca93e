// The "Agent access" panel (issue 24): opened from the baseboard, a lever toggled there is
// written into config.toml; force-open is armed only through its confirm dialog, then every
// screencast pane shows the red chip; the detectability check reports what the page sees.
// Writes docs/screenshot-agent-access.png. A sidecar of its own, so the shared one's config
// stays untouched.
import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { type Sidecar, startSidecar } from '../sidecar';
import { openScreencast, withServedPage } from './fixtures';

const repo = path.resolve(import.meta.dirname, '../../..');

let s: Sidecar;
test.beforeEach(async () => {
  s = await startSidecar({ name: 'agent-access' });
});
test.afterEach(async () => {
  await s?.stop();
});

/** The config file's text ('' while it does not exist). */
function configText(): string {
  try {
    return fs.readFileSync(path.join(s.config, 'config.toml'), 'utf8');
  } catch {
    return '';
  }
}

test('a lever written from the panel, force-open armed through its confirm, the red chip on the screencast pane', async ({ page }) => {
  test.setTimeout(120_000);
  // A comment of the user's, which the panel's writes keep.
  fs.mkdirSync(s.config, { recursive: true });
  fs.writeFileSync(path.join(s.config, 'config.toml'), '# my settings\n[font]\nsize = 13\n');
  const closedRoot = `<!doctype html><title>Closed root</title><body style="font:20px sans-serif"><h1>A page with a closed root</h1><script>
const h = document.createElement('div'); h.attachShadow({ mode: 'closed' });
document.body.append(h.shadowRoot === null ? 'sealed' : 'opened');</script></body>`;
  await withServedPage(page, s, closedRoot, async (wall, port) => {
    const { id, browser } = await openScreencast(wall, `127.0.0.1:${port}/`);
    const pane = wall.pane(id);
    await expect(pane.getByTestId('force-open-chip')).toHaveCount(0);

    await page.getByTestId('open-agent-access').click();
    const panel = page.getByTestId('agent-access');
    await expect(panel).toBeVisible();
    await expect(panel.getByTestId('lever-force_open').getByTestId('tier-badge')).toHaveText('RISKY');
    await expect(panel.getByTestId('lever-discovery').getByTestId('tier-badge')).toHaveText('SAFE');
    await expect(panel.getByTestId('lever-part_highlight').getByTestId('tier-badge')).toHaveText('VISIBLE');
    await expect(panel.getByTestId('lever-focus_walk').getByTestId('tier-badge')).toHaveText('VISIBLE');

    // A lever: the file changes, the user's comment stays.
    await expect(panel.getByTestId('sealed-focus_walk')).toBeChecked();
    await panel.getByTestId('sealed-focus_walk').click();
    await expect.poll(configText, { timeout: 15_000 }).toContain('focus_walk = false');
    expect(configText()).toMatch(/^# my settings\n\[font\]\nsize = 13\n/);
    await expect(panel.getByTestId('sealed-focus_walk')).not.toBeChecked();

    // A limit: typed, written on Enter; one out of bounds is refused in the panel.
    await panel.getByTestId('sealed-max_frames').fill('99');
    await panel.getByTestId('sealed-max_frames').press('Enter');
    await expect(panel.getByTestId('agent-access-error')).toContainText('from 1 to 64');
    expect(configText()).not.toContain('max_frames');
    await panel.getByTestId('sealed-max_frames').fill('12');
    await panel.getByTestId('sealed-max_frames').press('Enter');
    await expect.poll(configText, { timeout: 15_000 }).toContain('max_frames = 12');

    // Force-open: Cancel leaves it off; Arm writes it and the chip appears.
    await panel.getByTestId('sealed-force_open').click();
    const confirm = page.getByTestId('force-open-confirm');
    await expect(confirm).toBeVisible();
    await confirm.getByTestId('force-open-cancel').click();
    await expect(confirm).toHaveCount(0);
    await expect(panel.getByTestId('sealed-force_open')).not.toBeChecked();
    expect(configText()).not.toContain('force_open');
    await panel.getByTestId('sealed-force_open').click();
    await confirm.getByTestId('force-open-arm').click();
    await expect.poll(configText, { timeout: 15_000 }).toContain('force_open = true');
    await expect(panel.getByTestId('sealed-force_open')).toBeChecked();
    await expect(pane.getByTestId('force-open-chip')).toBeVisible();

    // The check runs in the page as loaded before arming: still sealed, force-open armed.
    await panel.getByTestId('sealed-probe').click();
    const result = panel.getByTestId('sealed-probe-result');
    await expect(result).toContainText('null (sealed)');
    await expect(result).toContainText('force-open armed');
    await page.screenshot({ path: path.join(repo, 'docs/screenshot-agent-access.png') });

    // After a reload the page's own probe sees its closed root opened, and the check says so.
    // (Through the API: the panel covers the pane's own Reload.)
    await s.call('POST', `/api/browsers/${browser}/reload`);
    await expect.poll(async () => (await s.call('POST', `/api/browsers/${browser}/sealed-probe`)).shadow_root_null, { timeout: 20_000 }).toBe(false);
    await panel.getByTestId('sealed-probe').click();
    await expect(result).toContainText('the root (opened)');

    // Credentials in network details: off by default; the human turns them on here.
    await expect(panel.getByTestId('lever-show_secrets').getByTestId('tier-badge')).toHaveText('RISKY');
    await expect(panel.getByTestId('agent-show_secrets')).not.toBeChecked();
    await panel.getByTestId('agent-show_secrets').click();
    await expect.poll(configText, { timeout: 15_000 }).toContain('show_secrets = true');
    await expect(panel.getByTestId('agent-show_secrets')).toBeChecked();
    expect(configText()).toMatch(/^# my settings\n/);

    await panel.getByTestId('agent-access-close').click();
    await expect(panel).toHaveCount(0);
    await expect(pane.getByTestId('force-open-chip')).toBeVisible();
  });
});
