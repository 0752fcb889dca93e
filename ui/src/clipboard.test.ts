import { afterEach, describe, expect, it, vi } from 'vitest';
import { readClipboard, writeClipboard } from './clipboard';

afterEach(() => vi.unstubAllGlobals());

describe('clipboard', () => {
  it('uses the Tauri clipboard plugin when present', async () => {
    const invoke = vi.fn(async (cmd: string) => (cmd.endsWith('read_text') ? 'from-tauri' : null));
    const writeText = vi.fn();
    vi.stubGlobal('window', { __TAURI__: { core: { invoke } } });
    vi.stubGlobal('navigator', { clipboard: { writeText, readText: vi.fn() } });
    await writeClipboard('hi');
    expect(invoke).toHaveBeenCalledWith('plugin:clipboard-manager|write_text', { text: 'hi' });
    expect(writeText).not.toHaveBeenCalled();
    expect(await readClipboard()).toBe('from-tauri');
    expect(invoke).toHaveBeenLastCalledWith('plugin:clipboard-manager|read_text');
  });

  it('falls back to navigator.clipboard in a browser', async () => {
    const writeText = vi.fn(async () => undefined);
    vi.stubGlobal('window', {});
    vi.stubGlobal('navigator', { clipboard: { writeText, readText: async () => 'from-browser' } });
    await writeClipboard('hi');
    expect(writeText).toHaveBeenCalledWith('hi');
    expect(await readClipboard()).toBe('from-browser');
  });

  it('reading never throws: a refused read is empty', async () => {
    vi.stubGlobal('window', {});
    vi.stubGlobal('navigator', { clipboard: { readText: async () => Promise.reject(new Error('denied')) } });
    expect(await readClipboard()).toBe('');
  });
});
