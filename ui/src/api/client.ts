// HTTP calls to the sidecar. Same-origin relative URLs: the page was loaded from the
// sidecar after its login URL set the session cookie (web mode and desktop alike).
import type { ApiErrorBody, CreateTerminal, ListeningPort, ProxyGrant, ProxyGrantRequest, TerminalInfo } from './protocol';

/** An HTTP error from the sidecar: `status` and its stable `code` (`network` when no answer came). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? undefined : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw new ApiError(0, 'network', `sidecar unreachable: ${String(e)}`);
  }
  if (!res.ok) {
    let code = 'http';
    let message = `${method} ${path} failed with ${res.status}`;
    try {
      const j = (await res.json()) as ApiErrorBody;
      code = j.error.code;
      message = j.error.message;
    } catch {
      /* not JSON: keep the generic message */
    }
    throw new ApiError(res.status, code, message);
  }
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

export const api = {
  listTerminals: () => call<{ terminals: TerminalInfo[] }>('GET', '/api/terminals').then((r) => r.terminals),
  getTerminal: (id: string) => call<TerminalInfo>('GET', `/api/terminals/${encodeURIComponent(id)}`),
  createTerminal: (req: CreateTerminal) => call<{ id: string }>('POST', '/api/terminals', req).then((r) => r.id),
  deleteTerminal: (id: string) => call<void>('DELETE', `/api/terminals/${encodeURIComponent(id)}`),
  getWorkspace: () => call<{ workspace: unknown; revision: number }>('GET', '/api/workspace'),
  putWorkspace: (workspace: unknown) => call<{ revision: number }>('PUT', '/api/workspace', { workspace }),
  terminalPorts: (id: string) =>
    call<{ ports: ListeningPort[] }>('GET', `/api/terminals/${encodeURIComponent(id)}/ports`).then((r) => r.ports),
  createProxyGrant: (req: ProxyGrantRequest) => call<ProxyGrant>('POST', '/api/proxy/grants', req),
};

/** The URL of a terminal's socket on the page's own origin. */
export function terminalSocketUrl(id: string): string {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  return `${scheme}://${location.host}/api/terminals/${encodeURIComponent(id)}/socket`;
}
