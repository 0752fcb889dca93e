// Pure rules for a terminal pane's listening ports (protocol §7): the URL a port opens, which
// ports a browser URL could be served by, and which terminal pane serves a browser pane.
//
// Pure: no DOM, no timers, no requests. Table-driven tests in ports.test.ts.
import type { ListeningPort } from '../api/protocol';
import { isLoopbackHost } from '../browser/url';

/** The ways a port can be opened from the context menu. */
export type PortOpenMode = 'iframe' | 'screencast' | 'popout' | 'system';

/**
 * The URL a listener is opened at: `http://localhost:P/` for 127.0.0.1, 0.0.0.0 and `::`
 * (localhost reaches all three), `http://[::1]:P/` for a `::1`-only bind, and the literal
 * address for another 127.0.0.0/8 bind (`localhost` does not reach 127.0.0.2).
 */
export function portUrl(p: Pick<ListeningPort, 'port' | 'address'>): string {
  switch (p.address) {
    case '127.0.0.1':
    case '0.0.0.0':
    case '::':
      return `http://localhost:${p.port}/`;
    case '::1':
      return `http://[::1]:${p.port}/`;
    default:
      return p.address.includes(':') ? `http://[${p.address}]:${p.port}/` : `http://${p.address}:${p.port}/`;
  }
}

/** The ports one scan offers, one row per port number (its addresses joined), in port order. */
export interface PortRow {
  port: number;
  /** every address the port is bound to, as the scan reported them */
  addresses: string[];
  process: string;
  pid: number;
  /** what the row opens */
  url: string;
}

/** The address a row opens prefers a bind `localhost` reaches (127.0.0.1, 0.0.0.0, ::), then ::1, then the rest. */
function rank(address: string): number {
  if (address === '127.0.0.1' || address === '0.0.0.0' || address === '::') return 0;
  if (address === '::1') return 1;
  return 2;
}

/** Groups a scan's listeners by port (a server on both 0.0.0.0 and :: is one row). */
export function portRows(list: readonly ListeningPort[]): PortRow[] {
  const by = new Map<number, ListeningPort[]>();
  for (const p of list) by.set(p.port, [...(by.get(p.port) ?? []), p]);
  return [...by.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([port, ps]) => {
      const best = [...ps].sort((a, b) => rank(a.address) - rank(b.address))[0];
      return { port, addresses: ps.map((p) => p.address), process: best.process, pid: best.pid, url: portUrl(best) };
    });
}

/** The loopback port a browser URL points at (`{host, port}`), or null for anything else. */
export function loopbackTarget(url: string): { host: string; port: number } | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  if (!isLoopbackHost(u.hostname)) return null;
  const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  return { host: u.hostname.toLowerCase().replace(/\.$/, ''), port };
}

/**
 * True iff a listener bound to `address` answers a request to `host` (a loopback hostname
 * as `URL.hostname` spells it): `localhost` names (and 127.0.0.1) reach 127.0.0.1, 0.0.0.0,
 * `::` and `::1`; `[::1]` reaches `::1` and `::`; another 127.x address reaches itself and
 * 0.0.0.0.
 */
export function servesHost(address: string, host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost') || host === '127.0.0.1') {
    return address === '127.0.0.1' || address === '0.0.0.0' || address === '::' || address === '::1';
  }
  if (host === '[::1]' || host === '::1') return address === '::1' || address === '::';
  return address === host || address === '0.0.0.0';
}

/**
 * The one terminal pane that serves `url`, given each terminal pane's scan; null when the
 * URL is not loopback or when zero or two-plus panes serve its port (unsettled).
 */
export function servingPane(url: string, scans: ReadonlyArray<{ paneId: string; ports: readonly ListeningPort[] }>): string | null {
  const t = loopbackTarget(url);
  if (!t) return null;
  const owners = scans.filter((s) => s.ports.some((p) => p.port === t.port && servesHost(p.address, t.host)));
  return owners.length === 1 ? owners[0].paneId : null;
}

/** What a browser pane opened from a terminal's port remembers (persisted): reuse looks it up. */
export interface PortOrigin {
  /** the terminal pane the menu was opened on */
  pane: string;
  port: number;
  mode: PortOpenMode;
}

/** True iff `v` is a well-formed `PortOrigin` (for reading a saved workspace). */
export function isPortOrigin(v: unknown): v is PortOrigin {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return (
    typeof o.pane === 'string' &&
    Number.isInteger(o.port) &&
    (o.port as number) >= 1 &&
    (o.port as number) <= 65535 &&
    (o.mode === 'iframe' || o.mode === 'screencast' || o.mode === 'popout')
  );
}

export function sameOrigin(a: PortOrigin | undefined, b: PortOrigin): boolean {
  return !!a && a.pane === b.pane && a.port === b.port && a.mode === b.mode;
}
