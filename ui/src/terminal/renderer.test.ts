import { describe, expect, it } from 'vitest';
import { preferredRenderer } from './renderer';

const WEBKITGTK = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';
const CHROMIUM_LINUX = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const HEADLESS = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36';
const SAFARI_MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';

describe('preferredRenderer', () => {
  const cases: Array<[string, string, string, 'dom' | 'webgl']> = [
    ['WebKitGTK gets the DOM renderer', WEBKITGTK, '', 'dom'],
    ['Chromium on Linux tries WebGL', CHROMIUM_LINUX, '', 'webgl'],
    ['headless Chromium tries WebGL', HEADLESS, '', 'webgl'],
    ['Safari/WKWebView on macOS tries WebGL', SAFARI_MAC, '', 'webgl'],
    ['Firefox tries WebGL', FIREFOX, '', 'webgl'],
    ['?renderer=dom forces DOM', CHROMIUM_LINUX, '?renderer=dom', 'dom'],
    ['?renderer=webgl forces WebGL', WEBKITGTK, '?renderer=webgl', 'webgl'],
    ['junk is ignored', WEBKITGTK, '?renderer=canvas', 'dom'],
  ];
  for (const [name, ua, search, expected] of cases) it(name, () => expect(preferredRenderer(ua, search)).toBe(expected));
});
