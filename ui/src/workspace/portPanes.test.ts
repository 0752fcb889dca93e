// Opening a remote pane's port (issue 28 item 4): the ports come from the pane's endpoint,
// the iframe grant names the pane's link, the browser pane carries the host, and the system
// browser (this machine's network only) is refused.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { api } from '../api/client';
import * as L from '../layout/engine';
import type { Snapshot } from './model';
import { type PortHost, PortPanes } from './portPanes';

function host(remote: string | null) {
  const opened: { url: string; opts: unknown }[] = [];
  const snap = {
    layout: L.single('p1'),
    order: ['p1'],
    panes: { p1: { id: 'p1', kind: 'terminal', terminalId: 't4', title: '', command: null, status: 'open', exitCode: null, handle: null, ...(remote ? { remote } : {}) } },
    popout: { available: true, reason: null },
  } as unknown as Snapshot;
  const h: PortHost = {
    snap,
    openBrowser: (_ref, url, opts) => {
      opened.push({ url, opts });
      return 'p2';
    },
    popOut: () => {},
    showPane: () => {},
  };
  return { h, opened };
}

const row = { port: 8000, url: 'http://localhost:8000/' } as unknown as Parameters<PortPanes['openPort']>[1];

describe('PortPanes for a remote pane', () => {
  afterEach(() => vi.restoreAllMocks());

  it("asks the iframe grant through the pane's link and opens the pane on its host", async () => {
    vi.stubGlobal('location', { origin: 'http://127.0.0.1:4000', ancestorOrigins: [] });
    const grant = vi.spyOn(api, 'createProxyGrant').mockResolvedValue({ grant: 'g1', origin: 'http://127.0.0.1:5000', upstream: 'http://localhost:8000', url: 'http://127.0.0.1:5000/' });
    const { h, opened } = host('me@dev');
    const links: string[] = [];
    await new PortPanes(h, async (hostName) => (links.push(hostName), 'r2')).openPort('p1', row, 'iframe');
    expect(links).toEqual(['me@dev']);
    expect(grant).toHaveBeenCalledWith({ url: 'http://localhost:8000/', embedders: ['http://127.0.0.1:4000'], remote: 'r2' });
    expect(opened).toEqual([{ url: 'http://localhost:8000/', opts: { keepSource: true, origin: { pane: 'p1', port: 8000, mode: 'iframe' }, remote: 'me@dev' } }]);
    vi.unstubAllGlobals();
  });

  it('a local pane asks a local grant, as before', async () => {
    vi.stubGlobal('location', { origin: 'http://127.0.0.1:4000', ancestorOrigins: [] });
    const grant = vi.spyOn(api, 'createProxyGrant').mockResolvedValue({ grant: 'g1', origin: 'http://127.0.0.1:5000', upstream: 'http://localhost:8000', url: 'http://127.0.0.1:5000/' });
    const { h, opened } = host(null);
    await new PortPanes(h, () => Promise.reject(new Error('no link for a local pane'))).openPort('p1', row, 'iframe');
    expect(grant).toHaveBeenCalledWith({ url: 'http://localhost:8000/', embedders: ['http://127.0.0.1:4000'] });
    expect(opened[0].opts).toMatchObject({ remote: null });
    vi.unstubAllGlobals();
  });

  it('opens a screencast on the host, and refuses the system browser', async () => {
    const { h, opened } = host('me@dev');
    const ports = new PortPanes(h, () => Promise.resolve('r2'));
    await ports.openPort('p1', row, 'screencast');
    expect(opened[0].opts).toMatchObject({ mode: 'screencast', remote: 'me@dev' });
    await expect(ports.openPort('p1', row, 'system')).rejects.toThrow(/on me@dev/);
  });
});
