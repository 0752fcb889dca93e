// The render modes a browser pane can use. The Display menu lists exactly these (DESIGN §4).

export type RenderMode = 'iframe' | 'screencast';

export interface RenderModeInfo {
  mode: RenderMode;
  /** the Display menu's label */
  label: string;
  /** one line under the label */
  detail: string;
}

export const RENDER_MODES: readonly RenderModeInfo[] = [
  { mode: 'iframe', label: 'Embedded (iframe)', detail: 'http:// pages through the local proxy; cookies kept by Porthole, per site' },
  { mode: 'screencast', label: 'Screencast', detail: 'a real headless Chromium, painted here; http:// and https://' },
];

/** The mode a URL opens in when the pane has none yet: https only renders as a screencast. */
export function modeForUrl(url: string, current: RenderMode = 'iframe'): RenderMode {
  return url.startsWith('https://') ? 'screencast' : current;
}

/** True iff `v` names a render mode that exists. */
export function isRenderMode(v: unknown): v is RenderMode {
  return RENDER_MODES.some((m) => m.mode === v);
}
