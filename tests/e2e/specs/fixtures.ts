// Shared fixtures: a clean wall per test (all terminals deleted, workspace cleared) and a
// page logged in through a fresh one-time login URL.
import { type Locator, type Page, test as base, expect } from '@playwright/test';

export const BASE = () => process.env.PORTHOLE_E2E_URL!;
const TOKEN = () => process.env.PORTHOLE_E2E_TOKEN!;

/** Calls the sidecar API with the bearer token. */
export async function api(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(new URL(path, BASE()), {
    method,
    headers: { authorization: `Bearer ${TOKEN()}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${await res.text()}`);
  return res.status === 204 ? null : res.json();
}

async function resetSidecar() {
  await api('PUT', '/api/workspace', { workspace: null });
  const { terminals } = await api('GET', '/api/terminals');
  for (const t of terminals) await api('DELETE', `/api/terminals/${t.id}`).catch(() => undefined);
}

export async function login(page: Page) {
  const { url } = await api('POST', '/api/login-codes');
  await page.goto(url);
  await expect(page.getByTestId('app')).toHaveAttribute('data-ready', 'true');
}

export const test = base.extend<{ wall: Wall }>({
  wall: async ({ page }, use) => {
    await resetSidecar();
    page.on('pageerror', (e) => console.log(`[pageerror] ${e.message}`));
    await login(page);
    const wall = new Wall(page);
    await wall.waitOpen(1);
    await use(wall);
  },
});
export { expect };

/** Page helpers for the wall. */
export class Wall {
  constructor(readonly page: Page) {}

  panes(): Locator {
    return this.page.locator('[data-testid=pane]');
  }
  visiblePanes(): Locator {
    return this.page.locator('[data-testid=pane][data-visible=true]');
  }
  pane(id: string): Locator {
    return this.page.locator(`[data-testid=pane][data-pane-id="${id}"]`);
  }

  async paneIds(): Promise<string[]> {
    return this.panes().evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.paneId!));
  }

  async focusedId(): Promise<string> {
    return (await this.page.locator('[data-testid=pane][data-focused=true]').getAttribute('data-pane-id'))!;
  }

  /** Waits until `n` panes are visible and every visible pane is connected. */
  async waitOpen(n: number) {
    await expect(this.visiblePanes()).toHaveCount(n);
    await expect(this.page.locator('[data-testid=pane][data-visible=true]:not([data-status=open])')).toHaveCount(0);
    await this.waitKeyboardFocus();
  }

  /** The pane's terminal text (scrollback + screen), via xterm's buffer. */
  async text(id: string): Promise<string> {
    return this.page.evaluate((id) => (window as any).__porthole.paneText(id) ?? '', id);
  }

  async size(id: string): Promise<{ cols: number; rows: number }> {
    return this.page.evaluate((id) => (window as any).__porthole.paneSize(id), id);
  }

  async waitText(id: string, re: RegExp, timeout = 10_000) {
    await expect.poll(() => this.text(id), { timeout }).toMatch(re);
  }

  /** Clicks into a pane's terminal (focuses it). */
  async click(id: string) {
    await this.pane(id).getByTestId('terminal-body').click();
    await expect(this.pane(id)).toHaveAttribute('data-focused', 'true');
  }

  /** Types into the focused terminal; `\n` is Enter. */
  async type(text: string) {
    await this.page.keyboard.type(text, { delay: 5 });
  }

  /** Presses the prefix (Ctrl-b) and then `key` (a Playwright key name). */
  async prefix(key: string) {
    await this.page.keyboard.press('Control+b');
    await this.page.keyboard.press(key);
    await this.waitKeyboardFocus();
  }

  /** Waits until the keyboard focus is inside the focused pane (it follows a focus change). */
  async waitKeyboardFocus() {
    await this.page.waitForFunction(() => {
      const p = document.querySelector('[data-testid=pane][data-focused=true]');
      return !!p && p.contains(document.activeElement);
    });
  }

  async rect(id: string) {
    return (await this.pane(id).boundingBox())!;
  }
}
