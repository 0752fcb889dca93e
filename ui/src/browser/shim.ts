// Messages between the app and the shim the proxy injects into framed pages, and the grants
// that make a message's origin trustworthy.
//
// Pure: no DOM access beyond the types. Every message from a frame is untrusted: it is
// accepted only when its origin is a live grant origin this app obtained, its source is a
// pane's own iframe window, and every field is one of the fixed shapes below.
import type { Keystroke } from '../keys/prefix';
import { isHttpUrl } from './url';

/** A proxy grant as `POST /api/proxy/grants` returned it. */
export interface Grant {
  /** e.g. `g1` */
  grant: string;
  /** the proxy's origin, e.g. `http://127.0.0.1:41001` */
  origin: string;
  /** the upstream origin it stands for, e.g. `http://localhost:5173` */
  upstream: string;
}

/** Shim → app. */
export type ShimMessage =
  | { kind: 'location'; url: string; title: string; loaded: boolean }
  /** the top proxied document is being left: a navigation away from it started (protocol §6.5) */
  | { kind: 'navigating' }
  | { kind: 'pointerdown' }
  /** `script`: asked by `window.open`, which gets `null` back (no handle to the new pane) */
  | { kind: 'open-window'; url: string; script?: true }
  /** the top document's title changed (after its first `location`) */
  | { kind: 'title'; title: string }
  /** a load from the upstream's own origin (not through the proxy) failed: CORS, most likely (protocol §6.5) */
  | { kind: 'blocked'; url: string; via: BlockedVia }
  /** the prefix key, or the key after it, pressed inside the frame (swallowed there) */
  | { kind: 'key'; key: Keystroke };

/** What failed to load in a `blocked` report: a module (or `crossorigin`) script, a `fetch`, an XHR. */
export type BlockedVia = 'script' | 'fetch' | 'xhr';

/** App → shim. */
export type AppMessage =
  | { porthole: 'app'; v: 1; kind: 'history'; delta: -1 | 1 }
  | { porthole: 'app'; v: 1; kind: 'reload' }
  | { porthole: 'app'; v: 1; kind: 'prefix'; letter: string };

const MAX_TITLE_CHARS = 1024;
/** `KeyboardEvent.key` values are short ("ArrowLeft", "%"): anything longer is not one. */
const MAX_KEY_CHARS = 32;

/** Validates a shim message's data; returns null for anything that is not exactly one of ours. */
export function parseShimMessage(data: unknown): ShimMessage | null {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return null;
  const o = data as Record<string, unknown>;
  if (o.porthole !== 'shim' || o.v !== 1) return null;
  switch (o.kind) {
    case 'location': {
      if (!isHttpUrl(o.url) || typeof o.loaded !== 'boolean') return null;
      const title = typeof o.title === 'string' ? o.title.slice(0, MAX_TITLE_CHARS) : '';
      return { kind: 'location', url: o.url, title, loaded: o.loaded };
    }
    case 'navigating':
      return { kind: 'navigating' };
    case 'pointerdown':
      return { kind: 'pointerdown' };
    case 'open-window':
      return isHttpUrl(o.url) ? { kind: 'open-window', url: o.url, ...(o.script === true ? { script: true as const } : {}) } : null;
    case 'title':
      return typeof o.title === 'string' ? { kind: 'title', title: o.title.slice(0, MAX_TITLE_CHARS) } : null;
    case 'blocked':
      return isHttpUrl(o.url) && (o.via === 'script' || o.via === 'fetch' || o.via === 'xhr') ? { kind: 'blocked', url: o.url, via: o.via } : null;
    case 'key': {
      const flags = [o.ctrl, o.alt, o.meta, o.shift];
      if (typeof o.key !== 'string' || o.key.length === 0 || o.key.length > MAX_KEY_CHARS || flags.some((f) => typeof f !== 'boolean')) return null;
      return { kind: 'key', key: { key: o.key, ctrl: o.ctrl as boolean, alt: o.alt as boolean, meta: o.meta as boolean, shift: o.shift as boolean } };
    }
    default:
      return null;
  }
}

/** A message event reduced to what routing needs (a `MessageEvent` fits). */
export interface IncomingMessage {
  origin: string;
  source: unknown;
  data: unknown;
}

/** A pane's frame, as routing sees it. */
export interface FrameEntry {
  paneId: string;
  /** the iframe's `contentWindow` (null while it has none) */
  window: unknown;
}

/**
 * Decides which pane a message belongs to: the pane whose iframe window is the message's
 * source, when the origin is a live grant origin and the data is a valid shim message.
 * Returns null when any check fails (the message is then ignored).
 */
export function routeShimMessage(
  e: IncomingMessage,
  frames: Iterable<FrameEntry>,
  isLiveOrigin: (origin: string) => boolean,
): { paneId: string; message: ShimMessage } | null {
  if (typeof e.origin !== 'string' || !isLiveOrigin(e.origin)) return null;
  if (e.source === null || e.source === undefined) return null;
  let paneId: string | null = null;
  for (const f of frames) {
    if (f.window !== null && f.window === e.source) {
      paneId = f.paneId;
      break;
    }
  }
  if (paneId === null) return null;
  const message = parseShimMessage(e.data);
  return message ? { paneId, message } : null;
}

/**
 * Maps a URL on a grant's proxy origin back to the upstream URL it stands for (same path,
 * query and fragment). Returns null when `url` is not on one of `grants`' proxy origins.
 */
export function toUpstream(url: string, grants: Iterable<Grant>): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  for (const g of grants) {
    if (u.origin === g.origin) {
      const up = new URL(g.upstream);
      // Concatenate (never resolve): a path such as `//evil.example/` must stay a path.
      return new URL(`${up.origin}${u.pathname}${u.search}${u.hash}`).href;
    }
  }
  return null;
}

/**
 * The grants open panes hold, by pane: the only origins shim messages are accepted from
 * (DESIGN §4.1: "the app checks the message origin against live grants"). A pane holds at
 * most one grant (the one its frame is on); an origin stays live while at least one pane
 * holds a grant on it and is forgotten when the last one lets go.
 */
export class GrantRegistry {
  private byPane = new Map<string, Grant>();

  /** `paneId` now holds `g` (replacing the grant it held before, if any). */
  hold(paneId: string, g: Grant): void {
    this.byPane.set(paneId, { grant: g.grant, origin: g.origin, upstream: g.upstream });
  }

  /** `paneId` holds no grant any more (its frame shows no proxied page, or the pane closed). Idempotent. */
  release(paneId: string): void {
    this.byPane.delete(paneId);
  }

  /** True iff some open pane holds a grant whose proxy origin is `origin`. */
  isLive = (origin: string): boolean => this.get(origin) !== undefined;

  /** A held grant on proxy origin `origin`, if any. */
  get(origin: string): Grant | undefined {
    for (const g of this.byPane.values()) if (g.origin === origin) return g;
    return undefined;
  }

  /** `toUpstream` over every held grant. */
  toUpstream(url: string): string | null {
    return toUpstream(url, this.byPane.values());
  }
}

/** Builds the app → shim history message. */
export function historyMessage(delta: -1 | 1): AppMessage {
  return { porthole: 'app', v: 1, kind: 'history', delta };
}

/** Builds the app → shim reload message. */
export function reloadMessage(): AppMessage {
  return { porthole: 'app', v: 1, kind: 'reload' };
}

/**
 * Builds the app → shim prefix message: the app's prefix key is now Ctrl plus `letter`
 * (`a`..`z`, as `config.toml`'s `keys.prefix`); the page guards that one from then on
 * (protocol §6.5).
 */
export function prefixMessage(letter: string): AppMessage {
  return { porthole: 'app', v: 1, kind: 'prefix', letter };
}
