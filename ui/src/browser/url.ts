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

/** The header's text for a URL: host (with port) and path, without query or fragment. */
export function displayUrl(url: string): string {
  const u = parse(url);
  if (!u) return url;
  const path = u.pathname === '/' ? '' : u.pathname;
  return `${u.host}${path}`;
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
