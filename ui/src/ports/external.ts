// Opens a URL in the system browser: the Tauri opener plugin in the desktop app when it is
// there, else `window.open` (web mode: a new tab of the browser the UI runs in).

interface TauriGlobal {
  opener?: { openUrl?: (url: string) => Promise<void> };
  core?: { invoke?: (cmd: string, args?: Record<string, unknown>) => Promise<unknown> };
}

/** Resolves once the URL was handed over; rejects when the opener refused it. */
export async function openExternal(url: string): Promise<void> {
  const tauri = (window as unknown as { __TAURI__?: TauriGlobal }).__TAURI__;
  if (tauri?.opener?.openUrl) {
    await tauri.opener.openUrl(url);
    return;
  }
  // noopener: the new tab gets no handle on the app (window.open then returns null by design).
  window.open(url, '_blank', 'noopener');
}
