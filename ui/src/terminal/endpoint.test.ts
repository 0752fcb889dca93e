import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RemoteLinks } from '../remote/links';
import { endpointFor, localEndpoint, remoteBase, remoteEndpoint, terminalPaths } from './endpoint';

const link = (id: string) => ({ id, host: 'dev', state: 'connected', since: 1, rtt_ms: 1, ssh_pid: 9, last_error: null, reconnects: 0 });

let calls: Array<{ method: string; url: string; body: unknown }> = [];
function answer(fn: (method: string, url: string) => { status: number; body: unknown }) {
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit) => {
      calls.push({ method: init.method ?? 'GET', url, body: init.body ? JSON.parse(init.body as string) : undefined });
      const { status, body } = fn(init.method ?? 'GET', url);
      return new Response(status === 204 ? null : JSON.stringify(body), { status });
    }),
  );
}

beforeEach(() => {
  calls = [];
  vi.stubGlobal('location', { protocol: 'http:', host: '127.0.0.1:9999' });
});
afterEach(() => vi.unstubAllGlobals());

describe('terminal endpoint URLs', () => {
  it('local: exactly the URLs of before', () => {
    const p = terminalPaths('/api');
    expect([p.list, p.one('t3'), p.resolve('t3'), p.ports('t3'), p.socket('t3')]).toEqual([
      '/api/terminals',
      '/api/terminals/t3',
      '/api/terminals/t3/resolve',
      '/api/terminals/t3/ports',
      '/api/terminals/t3/socket',
    ]);
    expect(localEndpoint.socketUrl('t3')).toBe('ws://127.0.0.1:9999/api/terminals/t3/socket');
    expect(localEndpoint.host).toBeNull();
    expect(endpointFor(null)).toBe(localEndpoint);
    expect(endpointFor('dev')).toBe(endpointFor('dev'));
  });

  it('remote: through the link forward, the link made on first use', async () => {
    expect(remoteBase('r1')).toBe('/api/remotes/r1/api');
    answer((method, url) => {
      if (url === '/api/remotes' && method === 'GET') return { status: 200, body: { remotes: [] } };
      if (url === '/api/remotes') return { status: 201, body: link('r2') };
      if (url.endsWith('/ports')) return { status: 200, body: { ports: [] } };
      return { status: 201, body: { id: 't3' } };
    });
    const ep = remoteEndpoint('dev', new RemoteLinks());
    expect(ep.host).toBe('dev');
    expect(ep.socketUrl('t3')).toBeNull(); // no link yet: the session retries
    expect(await ep.create({ cols: 80, rows: 24 })).toBe('t3');
    expect(calls.map((c) => `${c.method} ${c.url}`)).toEqual(['GET /api/remotes', 'POST /api/remotes', 'POST /api/remotes/r2/api/terminals']);
    expect(calls[1].body).toEqual({ host: 'dev' });
    expect(ep.socketUrl('t3')).toBe('ws://127.0.0.1:9999/api/remotes/r2/api/terminals/t3/socket');
    await ep.ports('t3');
    expect(calls.at(-1)!.url).toBe('/api/remotes/r2/api/terminals/t3/ports');
  });

  it('remote: a 404 of the terminal stays a 404; one of a forgotten link is a 503 to retry', async () => {
    let linkKnown = true;
    answer((_method, url) => {
      if (url === '/api/remotes') return { status: 200, body: { remotes: linkKnown ? [link('r1')] : [] } };
      return { status: 404, body: { error: { code: 'not_found', message: 'no such terminal' } } };
    });
    const links = new RemoteLinks();
    const ep = remoteEndpoint('dev', links);
    await expect(ep.get('t9')).rejects.toMatchObject({ status: 404 });
    linkKnown = false;
    await expect(ep.get('t9')).rejects.toMatchObject({ status: 503, code: 'remote_disconnected' });
    expect(links.byHost('dev')).toBeUndefined();
  });
});
