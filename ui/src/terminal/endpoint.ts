// Where a pane's terminal lives: the local sidecar's `/api/terminals…`, or a remote sidecar's
// through the local one's forward (`/api/remotes/{link}/api/terminals…`, protocol §11.5), the
// same protocol (§4, §5) either way. Every call for a pane's terminal goes through that
// pane's endpoint.
import { ApiError, call, socketUrl } from '../api/client';
import type { CreateTerminal, ListeningPort, ResolvedPath, TerminalInfo } from '../api/protocol';
import { type RemoteLinks, remoteLinks } from '../remote/links';

export interface TerminalEndpoint {
  /** the remote host, or null for the local sidecar */
  readonly host: string | null;
  create(req: CreateTerminal): Promise<string>;
  get(id: string): Promise<TerminalInfo>;
  delete(id: string): Promise<void>;
  /** Which of `paths` exist (protocol §4 `resolve`). */
  resolvePaths(id: string, paths: string[]): Promise<ResolvedPath[]>;
  ports(id: string): Promise<ListeningPort[]>;
  /** The terminal's socket URL; null while it cannot be known yet (a remote link not made yet: retry later). */
  socketUrl(id: string): string | null;
}

/** The paths of terminal requests under API prefix `base` (`/api` locally). */
export function terminalPaths(base: string) {
  const t = (id: string) => `${base}/terminals/${encodeURIComponent(id)}`;
  return {
    list: `${base}/terminals`,
    one: t,
    resolve: (id: string) => `${t(id)}/resolve`,
    ports: (id: string) => `${t(id)}/ports`,
    socket: (id: string) => `${t(id)}/socket`,
  };
}

/** The API prefix of link `linkId`'s remote sidecar. */
export function remoteBase(linkId: string): string {
  return `/api/remotes/${encodeURIComponent(linkId)}/api`;
}

function endpointAt(host: string | null, base: () => Promise<string>, syncBase: () => string | null, onError: (e: unknown) => Promise<never>): TerminalEndpoint {
  const at = async <T>(method: string, path: (p: ReturnType<typeof terminalPaths>) => string, body?: unknown): Promise<T> => {
    const b = await base();
    return call<T>(method, path(terminalPaths(b)), body).catch(onError);
  };
  return {
    host,
    create: (req) => at<{ id: string }>('POST', (p) => p.list, req).then((r) => r.id),
    get: (id) => at<TerminalInfo>('GET', (p) => p.one(id)),
    delete: (id) => at<void>('DELETE', (p) => p.one(id)),
    resolvePaths: (id, paths) => at<{ paths: ResolvedPath[] }>('POST', (p) => p.resolve(id), { paths }).then((r) => r.paths),
    ports: (id) => at<{ ports: ListeningPort[] }>('GET', (p) => p.ports(id)).then((r) => r.ports),
    socketUrl: (id) => {
      const b = syncBase();
      return b === null ? null : socketUrl(terminalPaths(b).socket(id));
    },
  };
}

/** The local sidecar's terminals (exactly the URLs of before remote workspaces). */
export const localEndpoint: TerminalEndpoint = endpointAt(
  null,
  async () => '/api',
  () => '/api',
  (e) => Promise.reject(e),
);

/**
 * The terminals of the remote sidecar at `host`, through its link (made on first use). A
 * `404` whose link is gone (the local sidecar restarted) is not the terminal's: the link is
 * forgotten and the call fails as `503 remote_disconnected`, which callers retry.
 */
export function remoteEndpoint(host: string, links: RemoteLinks = remoteLinks): TerminalEndpoint {
  let linkId: string | null = null;
  const onError = async (e: unknown): Promise<never> => {
    if (e instanceof ApiError && e.status === 404 && linkId && e.code === 'not_found') {
      const listed = await links.refresh().catch(() => null);
      if (listed && !listed.some((l) => l.id === linkId)) {
        links.forget(linkId);
        linkId = null;
        throw new ApiError(503, 'remote_disconnected', `the link to ${host} is gone; making a new one`);
      }
    }
    throw e;
  };
  return endpointAt(
    host,
    async () => {
      const l = await links.ensure(host);
      linkId = l.id;
      return remoteBase(l.id);
    },
    () => {
      const l = links.byHost(host);
      if (l) linkId = l.id;
      return l ? remoteBase(l.id) : null;
    },
    onError,
  );
}

const remotes = new Map<string, TerminalEndpoint>();

/** The endpoint of a pane whose terminal is on `remote` (null: local); one per host. */
export function endpointFor(remote: string | null | undefined): TerminalEndpoint {
  if (!remote) return localEndpoint;
  let e = remotes.get(remote);
  if (!e) remotes.set(remote, (e = remoteEndpoint(remote)));
  return e;
}
