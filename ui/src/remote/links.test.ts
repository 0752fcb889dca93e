import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '../api/client';
import { RemoteLinks, isHost, parseLink, parseLinks } from './links';

const wire = {
  id: 'r1',
  host: 'porthole-test',
  state: 'connected',
  since: 1765000000000,
  rtt_ms: 3.2,
  ssh_pid: 4711,
  remote: { porthole: 'remote', version: '0.1.0', protocol: 1, os: 'linux', arch: 'x86_64', daemon_pid: 4242 },
  last_error: null,
  reconnects: 0,
};

describe('parseLink', () => {
  it('reads a link field by field', () => {
    expect(parseLink(wire)).toEqual({ id: 'r1', host: 'porthole-test', state: 'connected', since: 1765000000000, rttMs: 3.2, sshPid: 4711, lastError: null, reconnects: 0 });
  });

  it('reads a lost link: no round trip, no ssh, the last error', () => {
    const l = parseLink({ ...wire, state: 'lost', rtt_ms: null, ssh_pid: null, last_error: 'remote_unreachable: ssh exited', reconnects: 3 });
    expect(l).toMatchObject({ state: 'lost', rttMs: null, sshPid: null, lastError: 'remote_unreachable: ssh exited', reconnects: 3 });
  });

  it('refuses what is not a link, and bad fields fall back', () => {
    expect(parseLink(null)).toBeNull();
    expect(parseLink({ ...wire, id: 'x1' })).toBeNull();
    expect(parseLink({ ...wire, host: '' })).toBeNull();
    expect(parseLink({ ...wire, state: 'up' })).toBeNull();
    expect(parseLink({ ...wire, rtt_ms: 'fast', ssh_pid: -1, reconnects: 'many' })).toMatchObject({ rttMs: null, sshPid: null, reconnects: 0 });
  });

  it('reads the list, leaving out what does not parse', () => {
    expect(parseLinks({ remotes: [wire, { id: 'r2' }, { ...wire, id: 'r3', host: 'b' }] }).map((l) => l.id)).toEqual(['r1', 'r3']);
    expect(parseLinks({})).toEqual([]);
    expect(parseLinks('no')).toEqual([]);
  });
});

describe('isHost', () => {
  it('accepts aliases, user@host[:port] and bracketed IPv6; refuses the rest', () => {
    for (const h of ['porthole-test', 'me@dev.example.com', 'me@10.0.0.2:2222', '[::1]:22', 'me@[fe80::1%eth0]']) expect(isHost(h)).toBe(true);
    for (const h of ['', '-oProxyCommand=x', 'a b', 'a;b', 'x'.repeat(256), 7, null]) expect(isHost(h)).toBe(false);
  });
});

function fakeApi() {
  let resolve: (v: unknown) => void = () => undefined;
  const api = {
    creates: [] as string[],
    resolveCreate: (v: unknown) => resolve(v),
    list: vi.fn(async (): Promise<unknown> => ({ remotes: [] })),
    create: vi.fn((host: string): Promise<unknown> => {
      api.creates.push(host);
      return new Promise<unknown>((r) => (resolve = r));
    }),
    reconnect: vi.fn(async (id: string): Promise<unknown> => ({ ...wire, id, state: 'reconnecting' })),
  };
  return api;
}

describe('RemoteLinks', () => {
  it('makes one link per host however many ask at once, and reuses it after', async () => {
    const api = fakeApi();
    const links = new RemoteLinks(api);
    const seen: number[] = [];
    links.subscribe(() => seen.push(links.getSnapshot().length));
    const a = links.ensure('porthole-test');
    const b = links.ensure('porthole-test');
    await vi.waitFor(() => expect(api.creates).toEqual(['porthole-test']));
    api.resolveCreate(wire);
    expect((await a).id).toBe('r1');
    expect(await b).toBe(await a);
    expect((await links.ensure('porthole-test')).id).toBe('r1');
    expect(api.create).toHaveBeenCalledTimes(1);
    expect(links.byHost('porthole-test')?.id).toBe('r1');
    expect(seen.at(-1)).toBe(1);
  });

  it('reuses a link the sidecar already has for the host', async () => {
    const api = fakeApi();
    api.list.mockResolvedValueOnce({ remotes: [{ ...wire, id: 'r4' }] });
    const links = new RemoteLinks(api);
    expect((await links.ensure('porthole-test')).id).toBe('r4');
    expect(api.create).not.toHaveBeenCalled();
  });

  it('a failed POST creates nothing and the next ensure tries again', async () => {
    const api = fakeApi();
    api.create.mockRejectedValueOnce(new ApiError(409, 'host_key', 'Host key verification failed', 'fingerprint SHA256:abc'));
    const links = new RemoteLinks(api);
    await expect(links.ensure('porthole-test')).rejects.toMatchObject({ code: 'host_key', stderr: 'fingerprint SHA256:abc' });
    expect(links.getSnapshot()).toEqual([]);
    const again = links.ensure('porthole-test');
    await vi.waitFor(() => expect(api.create).toHaveBeenCalledTimes(2));
    api.resolveCreate(wire);
    expect((await again).id).toBe('r1');
  });

  it('reconnect asks the known link, and makes one when the sidecar forgot it', async () => {
    const api = fakeApi();
    api.list.mockResolvedValueOnce({ remotes: [wire] });
    const links = new RemoteLinks(api);
    await links.refresh();
    await links.reconnect('porthole-test');
    expect(api.reconnect).toHaveBeenCalledWith('r1');
    expect(links.byHost('porthole-test')?.state).toBe('reconnecting');
    api.reconnect.mockRejectedValueOnce(new ApiError(404, 'not_found', 'no such remote'));
    const p = links.reconnect('porthole-test');
    await vi.waitFor(() => expect(api.create).toHaveBeenCalledTimes(1));
    api.resolveCreate({ ...wire, id: 'r2' });
    await p;
    expect(links.byHost('porthole-test')?.id).toBe('r2');
  });

  it('polls only while asked to', async () => {
    vi.useFakeTimers();
    try {
      const api = fakeApi();
      const links = new RemoteLinks(api);
      links.setPolling(true);
      links.setPolling(true);
      await vi.advanceTimersByTimeAsync(4100);
      expect(api.list).toHaveBeenCalledTimes(3);
      links.setPolling(false);
      await vi.advanceTimersByTimeAsync(10_000);
      expect(api.list).toHaveBeenCalledTimes(3);
    } finally {
      vi.useRealTimers();
    }
  });
});
