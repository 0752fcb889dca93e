import { afterEach, describe, expect, it, vi } from 'vitest';
import { openExternal } from './external';

afterEach(() => vi.unstubAllGlobals());

describe('openExternal', () => {
  it('uses the Tauri opener plugin in the desktop app, not window.open', async () => {
    const invoke = vi.fn(async () => null);
    const open = vi.fn();
    vi.stubGlobal('window', { __TAURI__: { core: { invoke } }, open });
    await openExternal('http://localhost:5173/');
    expect(invoke).toHaveBeenCalledWith('plugin:opener|open_url', { url: 'http://localhost:5173/' });
    expect(open).not.toHaveBeenCalled();
  });

  it("rejects with the opener's own message when it refuses", async () => {
    const invoke = vi.fn(async () => Promise.reject('Not allowed to open url http://example.com/'));
    const open = vi.fn();
    vi.stubGlobal('window', { __TAURI__: { core: { invoke } }, open });
    await expect(openExternal('http://example.com/')).rejects.toThrow(/^Not allowed to open url http:\/\/example.com\/$/);
    expect(open).not.toHaveBeenCalled();
  });

  it('opens a new tab with noopener in web mode', async () => {
    const open = vi.fn(() => null);
    vi.stubGlobal('window', { open });
    await openExternal('http://localhost:5173/');
    expect(open).toHaveBeenCalledWith('http://localhost:5173/', '_blank', 'noopener');
  });
});
