// Remote links (protocol §11): the local sidecar's ssh links to remote sidecars, as the UI
// knows them. `RemoteLinks` keeps the list (`GET /api/remotes`, polled while a remote
// workspace exists), makes a link for a host when none exists (`POST /api/remotes`, one
// request in flight per host) and asks a lost one to reconnect. React reads it with
// useSyncExternalStore.
import { ApiError, call } from '../api/client';

export type LinkState = 'connected' | 'reconnecting' | 'lost';

/** One link (protocol §11.5), field by field. */
export interface RemoteLink {
  /** `r1`, `r2`, … */
  id: string;
  host: string;
  state: LinkState;
  /** when the state began, Unix ms */
  since: number;
  /** the last round trip in ms; null before the first ping and while not connected */
  rttMs: number | null;
  /** the local ssh's pid while connected */
  sshPid: number | null;
  /** why the last reconnect attempt failed (`code: message`) */
  lastError: string | null;
  reconnects: number;
}

/** A link id: `r` and a number. */
export const LINK_ID_RE = /^r[0-9]{1,9}$/;

/**
 * A host as the sidecar accepts it (protocol §11.4): an ssh config alias or
 * `[user@]host[:port]`, at most 255 bytes, no leading `-`, only `[A-Za-z0-9._@:%-]` and
 * brackets around an IPv6 literal.
 */
export const HOST_RE = /^(?!-)[A-Za-z0-9._@:%[\]-]{1,255}$/;

/** True iff `v` is a host the sidecar would accept. */
export function isHost(v: unknown): v is string {
  return typeof v === 'string' && HOST_RE.test(v);
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** Reads one link; null when it is not one. */
export function parseLink(v: unknown): RemoteLink | null {
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  if (typeof o.id !== 'string' || !LINK_ID_RE.test(o.id)) return null;
  if (typeof o.host !== 'string' || o.host === '') return null;
  if (o.state !== 'connected' && o.state !== 'reconnecting' && o.state !== 'lost') return null;
  const pid = num(o.ssh_pid);
  return {
    id: o.id,
    host: o.host,
    state: o.state,
    since: num(o.since) ?? Date.now(),
    rttMs: num(o.rtt_ms),
    sshPid: pid !== null && Number.isInteger(pid) && pid > 0 ? pid : null,
    lastError: typeof o.last_error === 'string' ? o.last_error : null,
    reconnects: Math.max(0, Math.floor(num(o.reconnects) ?? 0)),
  };
}

/** Reads `GET /api/remotes`'s answer: the links that parse. */
export function parseLinks(v: unknown): RemoteLink[] {
  if (typeof v !== 'object' || v === null) return [];
  const list = (v as Record<string, unknown>).remotes;
  if (!Array.isArray(list)) return [];
  return list.map(parseLink).filter((l): l is RemoteLink => l !== null);
}

/** What the links store calls (the sidecar; a fake in tests). */
export interface LinksApi {
  list(): Promise<unknown>;
  create(host: string): Promise<unknown>;
  reconnect(id: string): Promise<unknown>;
}

const httpApi: LinksApi = {
  list: () => call<unknown>('GET', '/api/remotes'),
  create: (host) => call<unknown>('POST', '/api/remotes', { host }),
  reconnect: (id) => call<unknown>('POST', `/api/remotes/${encodeURIComponent(id)}/reconnect`),
};

/** How often the links are asked while a remote workspace exists. */
export const POLL_MS = 2000;

/** The links, as last heard. */
export class RemoteLinks {
  private links: readonly RemoteLink[] = [];
  private readonly listeners = new Set<() => void>();
  private readonly inflight = new Map<string, Promise<RemoteLink>>();
  private poll: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly api: LinksApi = httpApi) {}

  subscribe = (l: () => void) => {
    this.listeners.add(l);
    return () => {
      this.listeners.delete(l);
    };
  };
  getSnapshot = (): readonly RemoteLink[] => this.links;

  private setLinks(links: readonly RemoteLink[]) {
    this.links = links;
    for (const l of [...this.listeners]) l();
  }

  /** The link to `host` as last heard, if any. */
  byHost(host: string): RemoteLink | undefined {
    return this.links.find((l) => l.host === host);
  }

  /** Replaces (or adds) one link as the sidecar just described it. */
  private put(link: RemoteLink) {
    const rest = this.links.filter((l) => l.id !== link.id && l.host !== link.host);
    this.setLinks([...rest, link].sort((a, b) => Number(a.id.slice(1)) - Number(b.id.slice(1))));
  }

  /** Forgets link `id` (the sidecar no longer knows it: it restarted, or the link was dropped). */
  forget(id: string) {
    if (this.links.some((l) => l.id === id)) this.setLinks(this.links.filter((l) => l.id !== id));
  }

  /** Asks the sidecar for the links now. */
  async refresh(): Promise<readonly RemoteLink[]> {
    this.setLinks(parseLinks(await this.api.list()));
    return this.links;
  }

  /**
   * The link to `host`: the one known (or listed now), else a new one (`POST /api/remotes`,
   * which answers once the first connect succeeded). One POST per host at a time. Rejects with
   * the sidecar's `ApiError` (`host_key`, `remote_unreachable`, …).
   */
  ensure(host: string): Promise<RemoteLink> {
    const known = this.byHost(host);
    if (known) return Promise.resolve(known);
    const pending = this.inflight.get(host);
    if (pending) return pending;
    const p = (async () => {
      const listed = (await this.refresh().catch(() => this.links)).find((l) => l.host === host);
      if (listed) return listed;
      const link = parseLink(await this.api.create(host));
      if (!link) throw new ApiError(0, 'bad_answer', 'the sidecar answered with something that is not a link');
      this.put(link);
      return link;
    })().finally(() => this.inflight.delete(host));
    this.inflight.set(host, p);
    return p;
  }

  /** Asks the link to `host` to try again now (`POST /api/remotes/{id}/reconnect`); makes one when none exists. */
  async reconnect(host: string): Promise<void> {
    const link = this.byHost(host);
    if (!link) {
      await this.ensure(host);
      return;
    }
    try {
      const l = parseLink(await this.api.reconnect(link.id));
      if (l) this.put(l);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        this.forget(link.id);
        await this.ensure(host);
      } else throw e;
    }
  }

  /** Polls `GET /api/remotes` every POLL_MS while `on` (a remote workspace exists). Idempotent. */
  setPolling(on: boolean) {
    if (on && !this.poll) {
      this.poll = setInterval(() => void this.refresh().catch(() => undefined), POLL_MS);
      void this.refresh().catch(() => undefined);
    } else if (!on && this.poll) {
      clearInterval(this.poll);
      this.poll = null;
    }
  }
}

/** The app's links. */
export const remoteLinks = new RemoteLinks();
