// The UI channel's inbound messages (protocol §10), parsed field by field into typed values.
//
// Pure: no DOM, no socket. Everything the sidecar sends is checked here before the store
// sees it; unknown message types are ignored, malformed messages dropped.
import {
  BROWSER_HANDLE_RE,
  TERMINAL_HANDLE_RE,
  UI_MESSAGE_MAX_BYTES,
  type UiOpenMode,
  type UiPaneAction,
  type UiReplyMessage,
  type UiRequest,
} from '../api/protocol';
import { isHttpUrl } from '../browser/url';
import { parseTrustMessage, type TrustQuestion } from '../project/project';
import { ApiError } from '../api/client';
import { HOST_RE } from '../remote/links';
import { WORKSPACE_NAME_MAX } from '../workspace/workspaces';

/** A UI pane id as the store makes them (`p1`, `p2`, …). */
export const PANE_ID_RE = /^p[0-9]{1,18}$/;
/** The longest URL a request may carry, in characters. */
const MAX_URL_CHARS = 8192;

const OPEN_MODES: readonly UiOpenMode[] = ['iframe', 'screencast', 'popout', 'system'];
const PANE_ACTIONS: readonly UiPaneAction[] = ['focus', 'zoom', 'unzoom', 'minimize', 'restore', 'close'];

/** A parsed inbound message. */
export type Inbound =
  /** handles the sidecar gave browser panes reported with `handle: null`: UI pane id → `bN` */
  | { type: 'handles'; assign: Record<string, string> }
  /** which terminal drives each browser pane (control/drivers.ts parses the map) */
  | { type: 'drivers'; drivers: unknown; handoffs: unknown }
  /** the configuration snapshot (parsed by config/config.ts, its owner) */
  | { type: 'config'; snapshot: unknown }
  | { type: 'request'; request: UiRequest }
  /** ask the human to trust a project file (`ph up` was refused on it; project/project.ts parses it) */
  | { type: 'project_trust'; question: TrustQuestion }
  /**
   * a request whose `id` is readable but whose verb is unknown or whose fields are not
   * what the protocol says: the UI refuses it at once with `message` rather than leave
   * the caller waiting for the sidecar's bound
   */
  | { type: 'unusable'; id: number; message: string };

/**
 * Parses one text message from `/api/ui/socket`. Returns null for anything to ignore: text
 * over `UI_MESSAGE_MAX_BYTES` (in UTF-16 units, a lower bound of its bytes), text that is
 * not a JSON object, an unknown `type`, or a `handles`/`request` message whose fields are
 * malformed (a request with a readable `id` comes back as `unusable` instead).
 */
export function parseInbound(text: string): Inbound | null {
  if (text.length > UI_MESSAGE_MAX_BYTES) return null;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(v)) return null;
  if (v.type === 'handles') return parseHandles(v);
  if (v.type === 'config') return { type: 'config', snapshot: v };
  if (v.type === 'drivers') return { type: 'drivers', drivers: v.drivers, handoffs: v.handoffs };
  if (v.type === 'request') return parseRequest(v);
  if (v.type === 'project_trust') {
    const question = parseTrustMessage(v);
    return question ? { type: 'project_trust', question } : null;
  }
  return null;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseHandles(o: Record<string, unknown>): Inbound | null {
  if (!isObject(o.assign)) return null;
  const assign: Record<string, string> = {};
  for (const [pane, handle] of Object.entries(o.assign)) {
    if (!PANE_ID_RE.test(pane) || typeof handle !== 'string' || !BROWSER_HANDLE_RE.test(handle)) return null;
    assign[pane] = handle;
  }
  return { type: 'handles', assign };
}

/** A pane id, null, or (returned as undefined) neither. A missing field counts as null. */
function nearField(v: unknown): string | null | undefined {
  if (v === undefined || v === null) return null;
  return typeof v === 'string' && PANE_ID_RE.test(v) ? v : undefined;
}

function parseRequest(o: Record<string, unknown>): Inbound | null {
  const id = o.id;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) return null;
  const bad = (message: string): Inbound => ({ type: 'unusable', id, message });
  switch (o.verb) {
    case 'split': {
      const near = nearField(o.near);
      if (near === undefined) return bad('malformed split request: near is not a pane id');
      const side = o.side ?? null;
      if (side !== null && side !== 'right' && side !== 'down') return bad('malformed split request: side is not right, down or null');
      if (typeof o.terminal !== 'string' || !TERMINAL_HANDLE_RE.test(o.terminal)) return bad('malformed split request: terminal is not a terminal id');
      const balance = o.balance ?? false;
      if (typeof balance !== 'boolean') return bad('malformed split request: balance is not a boolean');
      return { type: 'request', request: { verb: 'split', id, near, side, terminal: o.terminal, balance } };
    }
    case 'open': {
      const near = nearField(o.near);
      if (near === undefined) return bad('malformed open request: near is not a pane id');
      if (typeof o.url !== 'string' || o.url.length > MAX_URL_CHARS || !isHttpUrl(o.url)) return bad('malformed open request: url is not an http(s) URL');
      const mode = OPEN_MODES.find((m) => m === o.mode);
      if (!mode) return bad('malformed open request: mode is not iframe, screencast, popout or system');
      const handle = o.handle ?? null;
      if (handle !== null && (typeof handle !== 'string' || !BROWSER_HANDLE_RE.test(handle))) return bad('malformed open request: handle is not a browser pane handle');
      const balance = o.balance ?? false;
      if (typeof balance !== 'boolean') return bad('malformed open request: balance is not a boolean');
      const isolated = o.isolated ?? false;
      if (typeof isolated !== 'boolean') return bad('malformed open request: isolated is not a boolean');
      return { type: 'request', request: { verb: 'open', id, near, url: o.url, mode, handle, balance, isolated } };
    }
    case 'pane': {
      if (typeof o.pane !== 'string' || !PANE_ID_RE.test(o.pane)) return bad('malformed pane request: pane is not a pane id');
      const action = PANE_ACTIONS.find((a) => a === o.action);
      if (!action) return bad('malformed pane request: unknown action');
      return { type: 'request', request: { verb: 'pane', id, pane: o.pane, action } };
    }
    case 'workspace': {
      const host = o.host ?? null;
      if (host !== null && (typeof host !== 'string' || !HOST_RE.test(host))) return bad('malformed workspace request: host is not an ssh host');
      const name = o.name ?? null;
      if (name !== null && (typeof name !== 'string' || name.trim() === '' || [...name].length > WORKSPACE_NAME_MAX)) return bad(`malformed workspace request: name is not 1..=${WORKSPACE_NAME_MAX} characters`);
      return { type: 'request', request: { verb: 'workspace', id, host, name } };
    }
    default:
      return bad(`this window does not know the verb ${JSON.stringify(String(o.verb)).slice(0, 64)}`);
  }
}

/**
 * Why a relayed request was not carried out: the store throws this (before changing
 * anything) and the channel answers `{"ok":false,"code":"refused","message":…}`.
 */
export class Refused extends Error {}

/**
 * The `reply` to request `id`: `pane` (the new or acted-on pane's id) on success, else
 * `refused` with `error`'s message; a sidecar's `ApiError` (a remote connect's `host_key`, …)
 * keeps its code, and its message gets ssh's stderr tail when that adds anything.
 */
export function replyTo(id: number, outcome: { pane: string | null } | { error: unknown }): UiReplyMessage {
  if ('pane' in outcome) return { type: 'reply', id, ok: true, pane: outcome.pane };
  const e = outcome.error;
  if (e instanceof ApiError && /^[a-z_]{1,64}$/.test(e.code)) {
    const tail = e.stderr?.trim() ?? '';
    const message = (tail && !e.message.includes(tail) ? `${e.message}\n${tail.slice(-2048)}` : e.message) || 'the window could not do it';
    return { type: 'reply', id, ok: false, code: e.code, message };
  }
  const message = (e instanceof Error ? e.message : String(e)) || 'the window could not do it';
  return { type: 'reply', id, ok: false, code: 'refused', message };
}
