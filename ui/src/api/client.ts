// HTTP calls to the sidecar. Same-origin relative URLs: the page was loaded from the
// sidecar after its login URL set the session cookie (web mode and desktop alike).
import type { ApiErrorBody, BrowserInfo, CreateTerminal, ListeningPort, ProxyGrant, ProxyGrantRequest, ResolvedPath, ScreenRect, TerminalInfo, ViewportBody } from './protocol';
import { parseCapabilities } from './capabilities';

/** An HTTP error from the sidecar: `status` and its stable `code` (`network` when no answer came). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** the ssh errors of a remote link (protocol §11.5): ssh's stderr tail */
    readonly stderr: string | null = null,
  ) {
    super(message);
  }
}

/** One call to the sidecar at `path` (same origin): the answer's JSON, or an `ApiError`. */
export async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    const raw = body instanceof Blob;
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: body === undefined || raw ? undefined : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : raw ? body : JSON.stringify(body),
    });
  } catch (e) {
    // The user never sees "sidecar": this is the message panes and menus show.
    throw new ApiError(0, 'network', `Porthole isn't answering (it may have stopped): ${String(e)}`);
  }
  if (!res.ok) {
    let code = 'http';
    let message = `${method} ${path} failed with ${res.status}`;
    let stderr: string | null = null;
    try {
      const j = (await res.json()) as ApiErrorBody;
      code = j.error.code;
      message = j.error.message;
      const tail = (j.error as { stderr?: unknown }).stderr;
      if (typeof tail === 'string') stderr = tail;
    } catch {
      /* not JSON: keep the generic message */
    }
    throw new ApiError(res.status, code, message, stderr);
  }
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

export const api = {
  listTerminals: () => call<{ terminals: TerminalInfo[] }>('GET', '/api/terminals').then((r) => r.terminals),
  getTerminal: (id: string) => call<TerminalInfo>('GET', `/api/terminals/${encodeURIComponent(id)}`),
  createTerminal: (req: CreateTerminal) => call<{ id: string }>('POST', '/api/terminals', req).then((r) => r.id),
  /** Which of `paths` (relative to the terminal's cwd, or absolute) exist (protocol §4 `resolve`). */
  resolvePaths: (id: string, paths: string[]) =>
    call<{ paths: ResolvedPath[] }>('POST', `/api/terminals/${encodeURIComponent(id)}/resolve`, { paths }).then((r) => r.paths),
  deleteTerminal: (id: string) => call<void>('DELETE', `/api/terminals/${encodeURIComponent(id)}`),
  /** The workspace document, and the restored session's terminals or its file's problem (protocol §4; read by workspace/restore.ts). */
  getWorkspace: () => call<{ workspace: unknown; revision: number; restore?: unknown; problem?: unknown }>('GET', '/api/workspace'),
  putWorkspace: (workspace: unknown) => call<{ revision: number }>('PUT', '/api/workspace', { workspace }),
  terminalPorts: (id: string) =>
    call<{ ports: ListeningPort[] }>('GET', `/api/terminals/${encodeURIComponent(id)}/ports`).then((r) => r.ports),
  createProxyGrant: (req: ProxyGrantRequest) => call<ProxyGrant>('POST', '/api/proxy/grants', req),
  /** `profile`: the kept profile's key (the pane id); `isolated`: cookies of its own, not the shared login; `tabs`/`active`: a restored pane's further tabs and active one (protocol §8.2); `remote`: a link id, the browser's traffic goes through that remote (no profile key then). */
  createBrowser: (url: string, viewport: ViewportBody, more: { profile?: string; isolated?: boolean; tabs?: string[]; active?: number; remote?: string } = {}) =>
    call<{ id: string }>('POST', '/api/browsers', { url, viewport, ...more }).then((r) => r.id),
  getBrowser: (id: string) => call<BrowserInfo>('GET', `/api/browsers/${encodeURIComponent(id)}`),
  deleteBrowser: (id: string) => call<void>('DELETE', `/api/browsers/${encodeURIComponent(id)}`),
  browserNavigate: (id: string, url: string) => call<unknown>('POST', `/api/browsers/${encodeURIComponent(id)}/navigate`, { url }),
  browserHistory: (id: string, delta: -1 | 1) => call<unknown>('POST', `/api/browsers/${encodeURIComponent(id)}/history`, { delta }),
  browserReload: (id: string) => call<unknown>('POST', `/api/browsers/${encodeURIComponent(id)}/reload`),
  /** Asks every tab's page to leave (beforeunload); `closed` false: a dialog holds a tab. */
  browserUnload: (id: string) => call<{ closed: boolean }>('POST', `/api/browsers/${encodeURIComponent(id)}/unload`),
  browserViewport: (id: string, v: ViewportBody) => call<unknown>('POST', `/api/browsers/${encodeURIComponent(id)}/viewport`, v),
  browserSelectTab: (id: string, tab: string) => call<unknown>('POST', `/api/browsers/${encodeURIComponent(id)}/tabs/select`, { tab }),
  browserCloseTab: (id: string, tab: string) => call<unknown>('POST', `/api/browsers/${encodeURIComponent(id)}/tabs/close`, { tab }),
  /** A new Chromium on the same profile, at `url` when given (else the last URL). */
  browserRelaunch: (id: string, url?: string) =>
    call<unknown>('POST', `/api/browsers/${encodeURIComponent(id)}/relaunch`, url === undefined ? undefined : { url }),
  /**
   * Pops the browser out to a headed window; resolves once its Chromium is up. `beside`, the
   * app's window in screen px, has it open beside the app (protocol §8.5).
   */
  browserPopout: (id: string, beside: ScreenRect | null) =>
    call<unknown>('POST', `/api/browsers/${encodeURIComponent(id)}/popout`, beside ? { beside } : undefined),
  /** Pops the browser back in (headless); resolves once its Chromium is up. */
  browserPopin: (id: string) => call<unknown>('POST', `/api/browsers/${encodeURIComponent(id)}/popin`),
  /** What this sidecar can do (protocol §8.5); the answer is parsed and checked. */
  /** `GET /api/config`: the configuration snapshot, unparsed (config/config.ts parses it). */
  config: () => call<unknown>('GET', '/api/config'),
  /** `PUT /api/drivers`: the human hands browser pane `pane` to terminal `terminal` → the drivers after it (unparsed map). */
  handOver: (pane: string, terminal: string) => call<{ drivers: unknown }>('PUT', '/api/drivers', { pane, terminal }),
  /** `POST /api/handoffs/{pane}`: the human's answer to an agent's handoff. */
  answerHandoff: (pane: string, answer: 'done' | 'decline') => call<unknown>('POST', `/api/handoffs/${encodeURIComponent(pane)}`, { answer }),
  /** `PATCH /api/config/agent-sealed`: writes these `[agent.sealed]` keys into config.toml → the new snapshot, unparsed. */
  patchAgentSealed: (patch: Record<string, boolean | number>) => call<unknown>('PATCH', '/api/config/agent-sealed', patch),
  /** `PATCH /api/config/agent`: writes `agent.show_secrets` into config.toml → the new snapshot, unparsed. */
  patchAgent: (patch: { show_secrets: boolean }) => call<unknown>('PATCH', '/api/config/agent', patch),
  /** `PATCH /api/config/terminal`: writes `terminal.renderer` into config.toml → the new snapshot, unparsed. */
  patchTerminal: (patch: { renderer: 'auto' | 'webgl' | 'dom' }) => call<unknown>('PATCH', '/api/config/terminal', patch),
  /** `POST /api/browsers/{id}/sealed-probe`: what a page script in the active tab sees of closed roots now (unparsed). */
  sealedProbe: (id: string) => call<unknown>('POST', `/api/browsers/${encodeURIComponent(id)}/sealed-probe`),
  capabilities: () => call<unknown>('GET', '/api/capabilities').then(parseCapabilities),
  /** A single-use viewer grant: the viewer socket's `ws://` URL (valid 60 s). */
  /** Sets the files the user picked on the page's file input (`[]` cancels); paths are absolute. */
  browserAnswerChooser: (id: string, chooser: number, paths: string[]) =>
    call<unknown>('POST', `/api/browsers/${encodeURIComponent(id)}/file-chooser/${chooser}`, { paths }),
  /** Hands one picked file's bytes to the sidecar for `chooser` (web mode) → the path to answer with. */
  browserUploadFile: (id: string, chooser: number, file: File) =>
    call<{ path: string }>('POST', `/api/browsers/${encodeURIComponent(id)}/file-chooser/${chooser}/files?name=${encodeURIComponent(file.name)}`, file).then((r) => r.path),
  /** `GET /api/project?terminal=tN`: the project file nearest the terminal's cwd (unparsed; project/project.ts parses it). */
  project: (terminal: string) => call<unknown>('GET', `/api/project?terminal=${encodeURIComponent(terminal)}`),
  /** `GET /api/project?port=N`: the project of the terminal listening on loopback port N (unparsed). */
  projectForPort: (port: number) => call<unknown>('GET', `/api/project?port=${port}`),
  /** `POST /api/project/trust`: the human trusts this version (`sha256`) of a project file. */
  trustProject: (file: string, sha256: string) => call<unknown>('POST', '/api/project/trust', { file, sha256 }),
  /** `POST /api/control/up`: starts a project layout beside pane `near` (its handle), ensure semantics. */
  startLayout: (near: string, layout: string) => call<unknown>('POST', '/api/control/up', { near, layout }),
  browserViewer: (id: string) => call<{ url: string }>('POST', `/api/browsers/${encodeURIComponent(id)}/viewer`).then((r) => r.url),
};

/** The URL of a terminal's socket on the page's own origin. */
export function terminalSocketUrl(id: string): string {
  return socketUrl(`/api/terminals/${encodeURIComponent(id)}/socket`);
}

/** The `ws(s)://` URL of `path` on the page's own origin. */
export function socketUrl(path: string): string {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  return `${scheme}://${location.host}${path}`;
}

/** The URL of the UI channel (protocol §10) on the page's own origin (the session cookie authorizes it). */
export function uiSocketUrl(): string {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  return `${scheme}://${location.host}/api/ui/socket`;
}
