// Opens a URL in the system browser. In the desktop app that is the Tauri opener plugin
// (the OS opener, e.g. xdg-open): the webview's own `window.open` would open the page
// inside the app. In web mode it is `window.open`: a new tab of the browser the UI runs in.

interface TauriGlobal {
  core?: { invoke?: (cmd: string, args?: Record<string, unknown>) => Promise<unknown> };
}

/**
 * Hands `url` to the system browser. Resolves once it was handed over. Rejects with an
 * `Error` whose message is the opener's own when the desktop app refuses it: the shell
 * grants `plugin:opener|open_url` only to the sidecar's origin and only for
 * `http://127.0.0.1|localhost|[::1]:PORT/…` (see `src-tauri/src/main.rs`).
 */
export async function openExternal(url: string): Promise<void> {
  const invoke = (window as unknown as { __TAURI__?: TauriGlobal }).__TAURI__?.core?.invoke;
  if (invoke) {
    try {
      await invoke('plugin:opener|open_url', { url });
    } catch (e) {
      // Tauri rejects with the command's error as a plain string.
      throw e instanceof Error ? e : new Error(String(e));
    }
    return;
  }
  // noopener: the new tab gets no handle on the app (window.open then returns null by design).
  window.open(url, '_blank', 'noopener');
}
