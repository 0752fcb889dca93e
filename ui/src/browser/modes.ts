// The render modes a browser pane can use. The Display menu lists exactly these: add the
// screencast renderer here when it exists (DESIGN §4).

export type RenderMode = 'iframe';

export interface RenderModeInfo {
  mode: RenderMode;
  /** the Display menu's label */
  label: string;
  /** one line under the label */
  detail: string;
}

export const RENDER_MODES: readonly RenderModeInfo[] = [
  { mode: 'iframe', label: 'Embedded (iframe)', detail: 'http:// pages through the local proxy; keeps no logins or cookies' },
];

/** True iff `v` names a render mode that exists. */
export function isRenderMode(v: unknown): v is RenderMode {
  return RENDER_MODES.some((m) => m.mode === v);
}
