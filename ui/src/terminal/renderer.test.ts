import { describe, expect, it } from 'vitest';
import { chooseRenderer, isSoftwareGl } from './renderer';

const CHROMIUM_LINUX = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const WEBKITGTK = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';
const SWIFTSHADER = { renderer: 'ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device (Subzero) (0x0000C0DE)), SwiftShader driver)', software: true };
const NVIDIA = { renderer: 'ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 (0x00002503) Direct3D11 vs_5_0 ps_5_0, D3D11)', software: false };

describe('chooseRenderer', () => {
  it.each([
    ['a hardware GL gets WebGL', CHROMIUM_LINUX, '', 'auto', NVIDIA, 'webgl', /hardware GL \(NVIDIA\)/],
    ['a software GL gets the DOM renderer', CHROMIUM_LINUX, '', 'auto', SWIFTSHADER, 'dom', /software GL \(SwiftShader\)/],
    ['no WebGL2 gets the DOM renderer', CHROMIUM_LINUX, '', 'auto', null, 'dom', /no WebGL2/],
    ['WebKitGTK gets the DOM renderer', WEBKITGTK, '', 'auto', NVIDIA, 'dom', /WebKitGTK/],
    ['the setting wins over the machine', CHROMIUM_LINUX, '', 'webgl', SWIFTSHADER, 'webgl', /chosen/],
    ['dom by setting', CHROMIUM_LINUX, '', 'dom', NVIDIA, 'dom', /chosen/],
    ['?renderer=dom wins over all', CHROMIUM_LINUX, '?renderer=dom', 'webgl', NVIDIA, 'dom', /forced/],
    ['?renderer=webgl wins over all', WEBKITGTK, '?renderer=webgl', 'dom', null, 'webgl', /forced/],
    ['junk in the query is ignored', CHROMIUM_LINUX, '?renderer=canvas', 'auto', NVIDIA, 'webgl', /hardware/],
  ] as const)('%s', (_name, ua, search, setting, gl, kind, why) => {
    const c = chooseRenderer(ua, search, setting, gl);
    expect(c.kind).toBe(kind);
    expect(c.why).toMatch(why);
  });

  it('knows the software rasterizers by name', () => {
    for (const s of ['SwiftShader', 'llvmpipe (LLVM 15.0.6, 256 bits)', 'softpipe', 'Microsoft Basic Render Driver', 'Software Rasterizer']) expect(isSoftwareGl(s)).toBe(true);
    for (const s of ['Mesa Intel(R) UHD Graphics 620', 'AMD Radeon Pro 5500M', 'Apple M2']) expect(isSoftwareGl(s)).toBe(false);
  });
});
