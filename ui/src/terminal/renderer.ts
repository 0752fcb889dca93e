// Which xterm renderer to use (pure; the user agent and query string are passed in).

export type RendererKind = 'dom' | 'webgl';

/**
 * True iff `ua` is WebKitGTK (the Linux desktop webview), where WebGL has context-loss
 * loops and glyph glitches (DESIGN §8). Chromium and Safari on macOS are not WebKitGTK.
 */
export function isWebKitGtk(ua: string): boolean {
  return /AppleWebKit/.test(ua) && !/Chrome|Chromium|Edg\//.test(ua) && /Linux|X11/.test(ua) && !/Android/.test(ua);
}

/** The renderer to try first: `?renderer=dom|webgl` wins; else WebGL except in WebKitGTK. */
export function preferredRenderer(ua: string, search: string): RendererKind {
  const forced = new URLSearchParams(search).get('renderer');
  if (forced === 'dom' || forced === 'webgl') return forced;
  return isWebKitGtk(ua) ? 'dom' : 'webgl';
}
