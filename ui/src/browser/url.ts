// URL rules for browser panes: what the URL field accepts, how a URL is shown in the header,
// and which URLs the iframe renderer refuses.
//
// Pure: no DOM, no timers. Table-driven tests in url.test.ts.

/** The result of reading what the user typed in the URL field. */
export type Normalized = { ok: true; url: string } | { ok: false; message: string };

/** True iff `hostname` (as `URL.hostname` spells it) is a loopback name or address. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (h === '[::1]' || h === '::1') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

const SCHEME_RE = /^([a-zA-Z][a-zA-Z0-9+.-]*):/;

/**
 * Turns what the user typed into an absolute http(s) URL, or refuses it with a message.
 *
 * - `http://` and `https://` URLs are kept;
 * - a bare loopback host (`localhost:5173`, `127.0.0.1:8000`, `[::1]:3000`, `localhost`) or a
 *   bare port (`:8000`, meaning localhost) gets `http://`;
 * - any other bare host gets `https://`; a scheme-relative `//host…` counts as bare;
 * - any other scheme (`file:`, `javascript:`, `data:`, `ftp:`, `chrome:` …) is refused.
 */
export function normalizeUrl(input: string): Normalized {
  const text = input.trim();
  if (!text) return { ok: false, message: 'Type a URL, such as localhost:5173' };
  if (/\s/.test(text)) return { ok: false, message: 'A URL cannot contain spaces' };

  let candidate: string;
  if (/^:\d+([/?#].*)?$/.test(text)) {
    candidate = `http://localhost${text}`;
  } else {
    // A scheme-relative `//host/…` is a bare host like any other (DESIGN §4).
    if (text.startsWith('//')) {
      if (text.startsWith('///')) return { ok: false, message: `Not a valid URL: ${text}` };
      return normalizeUrl(text.slice(2));
    }
    const m = SCHEME_RE.exec(text);
    // `localhost:5173` and `example.com:8080/x` look like a scheme followed by a port: a
    // "scheme" followed by digits (and then the end or a path) is a host with a port.
    const hostWithPort = m && /^[^:/?#]+:\d+([/?#].*)?$/.test(text);
    if (m && !hostWithPort) {
      const scheme = m[1].toLowerCase();
      if (scheme !== 'http' && scheme !== 'https') {
        return { ok: false, message: `${scheme}: URLs can't be opened in a browser pane; only http:// and https://` };
      }
      if (!/^https?:\/\//i.test(text)) return { ok: false, message: `Not a valid URL: ${text}` };
      return finish(text, false);
    }
    // Bare host: decide the scheme by the host.
    const probe = parse(`http://${text}`);
    if (!probe || !probe.hostname) return { ok: false, message: `Not a valid URL: ${text}` };
    candidate = `${isLoopbackHost(probe.hostname) ? 'http' : 'https'}://${text}`;
  }
  return finish(candidate, true);
}

function finish(candidate: string, bare: boolean): Normalized {
  const u = parse(candidate);
  if (!u || !u.hostname || (u.protocol !== 'http:' && u.protocol !== 'https:')) {
    return { ok: false, message: `Not a valid URL: ${candidate}` };
  }
  if (u.username || u.password) return { ok: false, message: 'URLs with a user name or password are not supported' };
  if (bare && !/^[a-z0-9.[\]:-]+$/i.test(u.hostname)) return { ok: false, message: `Not a valid host name: ${u.hostname}` };
  return { ok: true, url: u.href };
}

function parse(s: string): URL | null {
  try {
    return new URL(s);
  } catch {
    return null;
  }
}

/** True iff `s` parses as an absolute http: or https: URL. */
export function isHttpUrl(s: unknown): s is string {
  if (typeof s !== 'string' || s.length > 8192) return false;
  const u = parse(s);
  return !!u && (u.protocol === 'http:' || u.protocol === 'https:') && !!u.hostname;
}

/**
 * The header's text for a URL: host (with port), path, query and fragment; the scheme and a
 * bare `/` path are left out. The query stays: `/final?popup=5` and `/final` are different
 * pages (issue 22 item 9).
 */
export function displayUrl(url: string): string {
  const u = parse(url);
  if (!u) return url;
  const path = u.pathname === '/' && !u.search && !u.hash ? '' : u.pathname;
  return `${u.host}${path}${u.search}${u.hash}`;
}

/** The message shown when the iframe renderer is asked for a URL it cannot embed, or null. */
export function iframeRefusal(url: string): string | null {
  const u = parse(url);
  if (!u) return 'Not a valid URL';
  if (u.protocol === 'https:') {
    return 'The embedded (iframe) view shows http:// pages only: it loads them through Porthole\'s local proxy, which cannot instrument https:// pages.';
  }
  if (u.protocol !== 'http:') return `${u.protocol} URLs can't be embedded`;
  return null;
}

/** Cloud metadata host names (Google Cloud's two, AWS's `instance-data`), as the sidecar's. */
const METADATA_NAMES = ['metadata.google.internal', 'metadata', 'instance-data'];

/**
 * The reason a URL is refused because its host is a link-local or cloud-metadata address
 * literal (169.254.0.0/16, fe80::/10, 100.100.100.200, fd00:ec2::254, also IPv4-mapped,
 * IPv4-compatible, SIIT, 6to4 or NAT64 IPv6 embedding one of those IPv4 addresses) or a cloud
 * metadata host name (`metadata.google.internal`, `metadata`, `instance-data`, with or without
 * a trailing dot), or null. The sidecar enforces this (protocol §6.1, §8.2: `403
 * blocked_address`); the URL field asks first so that a refused address leaves the pane as it
 * was (an iframe pane would otherwise switch to a screencast only to be refused). `URL` has
 * already canonicalized every spelling (decimal, octal, hex, short IPv4 forms; IPv6 in hex
 * groups; names lower-cased), as the sidecar's parser does. Names are not resolved here (the
 * proxy checks what a name resolves to when it dials).
 */
export function blockedAddress(url: string): string | null {
  const u = parse(url);
  if (!u) return null;
  const h = u.hostname;
  if (METADATA_NAMES.includes(h.replace(/\.$/, ''))) {
    return `${h} is a cloud-metadata host name: Porthole doesn't open those`;
  }
  const blocked = h.startsWith('[') ? blockedV6(h.slice(1, -1)) : blockedV4(h);
  return blocked ? `${h} is a link-local or cloud-metadata address: Porthole doesn't open those` : null;
}

function blockedV4(h: string): boolean {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(h);
  if (!m) return false;
  return (m[1] === '169' && m[2] === '254') || h === '100.100.100.200';
}

/** `h` as `URL` serializes IPv6 (lowercase hex groups, one `::` at most, no dotted tail). */
function blockedV6(h: string): boolean {
  const [head, tail] = h.includes('::') ? h.split('::') : [h, null];
  const groups = (s: string) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const a = groups(head);
  const b = tail === null ? [] : groups(tail);
  const seg = tail === null ? a : [...a, ...new Array(8 - a.length - b.length).fill(0), ...b];
  if (seg.length !== 8 || seg.some((g) => Number.isNaN(g))) return false;
  if (embeddedV4(seg).some(blockedV4)) return true;
  const metadata = [0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254];
  return (seg[0] & 0xffc0) === 0xfe80 || seg.every((g, i) => g === metadata[i]);
}

/**
 * The IPv4 addresses (dotted) an IPv6 address can stand for, as the sidecar's `embedded_v4`:
 * IPv4-mapped `::ffff:0:0/96`, IPv4-compatible `::/96`, SIIT `::ffff:0:0:0/96`, 6to4
 * `2002::/16`, NAT64 `64:ff9b::/96`, and inside the local-use `64:ff9b:1::/48` every RFC 6052
 * position (prefix lengths 48, 56, 64, 96; byte 8 skipped).
 */
function embeddedV4(seg: number[]): string[] {
  const o = seg.flatMap((g) => [g >> 8, g & 0xff]);
  const at = (i: number[]) => i.map((k) => o[k]).join('.');
  const last = at([12, 13, 14, 15]);
  const starts = (p: number[]) => p.every((g, i) => seg[i] === g);
  if (starts([0, 0, 0, 0, 0]) && (seg[5] === 0xffff || seg[5] === 0)) return [last];
  if (starts([0, 0, 0, 0, 0xffff, 0]) || starts([0x64, 0xff9b, 0, 0, 0, 0])) return [last];
  if (seg[0] === 0x2002) return [at([2, 3, 4, 5])];
  if (starts([0x64, 0xff9b, 1])) return [at([6, 7, 9, 10]), at([7, 9, 10, 11]), at([9, 10, 11, 12]), last];
  return [];
}
