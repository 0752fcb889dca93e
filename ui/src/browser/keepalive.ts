// How often an iframe pane re-asks for its proxy grant, so that a page left open without
// making requests keeps its grant (protocol §6.3: a 5 min sliding idle TTL, refreshed by a
// repeat `POST /api/proxy/grants` for the same upstream origin, which returns the same grant).
//
// Pure: the query string is passed in.

/** The grant's idle TTL (protocol §6.3, DESIGN §7), in milliseconds. */
export const GRANT_IDLE_TTL_MS = 5 * 60 * 1000;
/** Interval between keep-alive requests, in milliseconds: a fifth of the TTL, so a few missed ones (busy machine, a slow answer) still keep it. */
export const GRANT_KEEPALIVE_MS = 60 * 1000;
/** Lowest interval the test override accepts, in milliseconds. */
export const MIN_GRANT_KEEPALIVE_MS = 100;

/**
 * The keep-alive interval in milliseconds: `GRANT_KEEPALIVE_MS`, or the `grantKeepaliveMs`
 * query parameter (for tests that start a sidecar with a short `PORTHOLE_PROXY_GRANT_TTL_MS`)
 * when it is an integer from `MIN_GRANT_KEEPALIVE_MS` to `GRANT_KEEPALIVE_MS`; anything else
 * is ignored (never a longer interval than the default).
 */
export function grantKeepaliveMs(search: string): number {
  const raw = new URLSearchParams(search).get('grantKeepaliveMs');
  if (raw === null || !/^\d{1,9}$/.test(raw)) return GRANT_KEEPALIVE_MS;
  const n = Number(raw);
  return n >= MIN_GRANT_KEEPALIVE_MS && n <= GRANT_KEEPALIVE_MS ? n : GRANT_KEEPALIVE_MS;
}
