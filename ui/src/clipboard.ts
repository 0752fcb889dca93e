// The one place that touches the clipboard. In the desktop app (WebKitGTK, where
// navigator.clipboard is unreliable) it goes through the Tauri clipboard plugin.

interface TauriGlobal {
  core?: { invoke: (cmd: string, args?: Record<string, unknown>) => Promise<unknown> };
}

function tauri(): TauriGlobal | undefined {
  return (window as unknown as { __TAURI__?: TauriGlobal }).__TAURI__;
}

export async function writeClipboard(text: string): Promise<void> {
  const t = tauri();
  if (t?.core) {
    await t.core.invoke('plugin:clipboard-manager|write_text', { text });
    return;
  }
  await navigator.clipboard.writeText(text);
}

/** Returns the clipboard's text, or '' when it holds none or cannot be read. */
export async function readClipboard(): Promise<string> {
  try {
    const t = tauri();
    if (t?.core) {
      const v = await t.core.invoke('plugin:clipboard-manager|read_text');
      return typeof v === 'string' ? v : '';
    }
    return await navigator.clipboard.readText();
  } catch {
    return '';
  }
}
