// The desktop app's native file picker and "reveal in folder" (Tauri dialog and opener
// plugins); in web mode neither exists and callers use the page's own means.

interface TauriGlobal {
  core?: { invoke: (cmd: string, args?: Record<string, unknown>) => Promise<unknown> };
}

function invoke(): TauriGlobal['core'] | undefined {
  return (window as unknown as { __TAURI__?: TauriGlobal }).__TAURI__?.core;
}

/** true iff running in the desktop app (Tauri's IPC is there). */
export function isDesktop(): boolean {
  return !!invoke();
}

/**
 * Dialog filters for an `accept` attribute: one filter of its file extensions when every
 * token is an extension (`.png,.jpg`), else none (MIME types such as `image/*` cannot be
 * spelled as extensions: the user sees every file, as the page's own chooser would let them).
 */
export function acceptFilters(accept: string): { name: string; extensions: string[] }[] {
  const tokens = accept.split(',').map((t) => t.trim()).filter(Boolean);
  if (!tokens.length || !tokens.every((t) => /^\.[\w-]+$/.test(t))) return [];
  return [{ name: tokens.join(', '), extensions: tokens.map((t) => t.slice(1)) }];
}

/** The desktop dialog's file picker → absolute paths (`[]` when cancelled). Throws outside the desktop app. */
export async function pickFilesNative(multiple: boolean, accept: string): Promise<string[]> {
  const core = invoke();
  if (!core) throw new Error('no native file picker in web mode');
  const r = await core.invoke('plugin:dialog|open', { options: { multiple, directory: false, filters: acceptFilters(accept) } });
  if (r === null || r === undefined) return [];
  return (Array.isArray(r) ? r : [r]).filter((p): p is string => typeof p === 'string');
}

/** Shows `path` in the system's file manager (desktop app only). */
export async function revealInFolder(path: string): Promise<void> {
  const core = invoke();
  if (!core) throw new Error('no file manager in web mode');
  await core.invoke('plugin:opener|reveal_item_in_dir', { paths: [path] });
}

/** `n` bytes for people: `512 B`, `1.5 KB`, `12 MB` (powers of 1024). */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}
