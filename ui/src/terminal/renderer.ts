// Which xterm renderer to use (issue 27 item 3): WebGL only where the GPU draws it. With a
// software GL (SwiftShader in headless Chromium, llvmpipe on a machine without a GPU driver)
// WebGL is many times slower than the DOM renderer for a flood of output, and WebKitGTK loses
// its WebGL contexts in loops (DESIGN §8). The choice is pure; the GL probe is separate.

export type RendererKind = 'dom' | 'webgl';

/** `terminal.renderer` in config.toml: `auto` lets the machine decide. */
export type RendererSetting = 'auto' | 'webgl' | 'dom';

/** What the browser's WebGL reports: its renderer string, and whether that is a software GL. */
export interface GlInfo {
  renderer: string;
  software: boolean;
}

/** A renderer choice and why it was made (one clause, shown in the pane's menu). */
export interface RendererChoice {
  kind: RendererKind;
  why: string;
}

/**
 * True iff `ua` is WebKitGTK (the Linux desktop webview), where WebGL has context-loss
 * loops and glyph glitches (DESIGN §8). Chromium and Safari on macOS are not WebKitGTK.
 */
export function isWebKitGtk(ua: string): boolean {
  return /AppleWebKit/.test(ua) && !/Chrome|Chromium|Edg\//.test(ua) && /Linux|X11/.test(ua) && !/Android/.test(ua);
}

/** True iff a WebGL renderer string names a software rasterizer (SwiftShader, llvmpipe, softpipe, Microsoft Basic Render, "Software"). */
export function isSoftwareGl(renderer: string): boolean {
  return /swiftshader|llvmpipe|softpipe|software|basic render/i.test(renderer);
}

let probed: GlInfo | null | undefined;

/**
 * Asks the browser once (then cached) which GL draws WebGL: a throwaway WebGL2 context's
 * `UNMASKED_RENDERER_WEBGL` (WEBGL_debug_renderer_info), else its `RENDERER`. Null when
 * WebGL2 is not available (the WebGL addon needs it).
 */
export function glInfo(): GlInfo | null {
  if (probed !== undefined) return probed;
  probed = null;
  try {
    const c = document.createElement('canvas');
    const gl = c.getContext('webgl2');
    if (gl) {
      const ext = gl.getExtension('WEBGL_debug_renderer_info');
      const renderer = String(gl.getParameter(ext ? ext.UNMASKED_RENDERER_WEBGL : gl.RENDERER) ?? '');
      probed = { renderer, software: isSoftwareGl(renderer) };
      gl.getExtension('WEBGL_lose_context')?.loseContext();
    }
  } catch {
    probed = null;
  }
  return probed;
}

/** A renderer string cut to what a menu line can show ("ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device…" → "SwiftShader"). */
function shortGl(renderer: string): string {
  const known = /swiftshader|llvmpipe|softpipe|basic render|nvidia|geforce|radeon|amd|intel|apple m\d|mali|adreno/i.exec(renderer);
  return known ? known[0] : renderer.slice(0, 40);
}

/**
 * The renderer a new terminal uses, and why: `?renderer=dom|webgl` in the page's URL wins
 * (tests, bug reports); then the setting (`webgl`, `dom`); then, for `auto`: the DOM renderer
 * in WebKitGTK, without WebGL2, and with a software GL; WebGL with a hardware one.
 */
export function chooseRenderer(ua: string, search: string, setting: RendererSetting, gl: GlInfo | null): RendererChoice {
  const forced = new URLSearchParams(search).get('renderer');
  if (forced === 'dom' || forced === 'webgl') return { kind: forced, why: `forced by ?renderer=${forced}` };
  if (setting === 'dom') return { kind: 'dom', why: 'chosen (terminal.renderer = "dom")' };
  if (setting === 'webgl') return { kind: 'webgl', why: 'chosen (terminal.renderer = "webgl")' };
  if (isWebKitGtk(ua)) return { kind: 'dom', why: 'automatic: WebKitGTK loses WebGL contexts' };
  if (!gl) return { kind: 'dom', why: 'automatic: no WebGL2 here' };
  if (gl.software) return { kind: 'dom', why: `automatic: software GL (${shortGl(gl.renderer)}) draws slower than the DOM` };
  return { kind: 'webgl', why: `automatic: hardware GL (${shortGl(gl.renderer)})` };
}
