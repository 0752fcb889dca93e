// A remote workspace asked for at launch (`porthole --ssh HOST`, which loads the UI with
// `?ssh=HOST`; or `?ssh=HOST` on the web-mode URL): the UI opens "New remote workspace…" with
// HOST filled in and connecting. The host is checked by the dialog (bad_host) and the sidecar.

/** The longest `ssh` value taken, in characters (a host is at most 255 bytes; longer still shows as bad_host). */
const MAX_SSH_PARAM_CHARS = 1024;

/** The `ssh` parameter of `search` (a URL's query), trimmed; null when absent or empty. */
export function sshParam(search: string): string | null {
  const v = new URLSearchParams(search).get('ssh');
  if (v === null) return null;
  const t = v.trim().slice(0, MAX_SSH_PARAM_CHARS);
  return t === '' ? null : t;
}

let taken: { host: string | null } | null = null;

/**
 * The page's `?ssh=HOST` as the page loaded (the same on every call), removed from the
 * address bar on the first call so a reload does not connect again.
 */
export function takeLaunchSsh(): string | null {
  if (taken) return taken.host;
  if (typeof location === 'undefined') return null;
  const host = sshParam(location.search);
  taken = { host };
  if (host !== null && typeof history !== 'undefined') {
    const u = new URL(location.href);
    u.searchParams.delete('ssh');
    history.replaceState(history.state, '', u.pathname + u.search + u.hash);
  }
  return host;
}
