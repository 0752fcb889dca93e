import { describe, expect, it } from 'vitest';
import { displayUrl, iframeRefusal, isHttpUrl, isLoopbackHost, normalizeUrl } from './url';

describe('normalizeUrl', () => {
  const ok: Array<[string, string]> = [
    ['localhost:5173', 'http://localhost:5173/'],
    ['localhost', 'http://localhost/'],
    ['localhost:5173/path?q=1#h', 'http://localhost:5173/path?q=1#h'],
    ['127.0.0.1:8000', 'http://127.0.0.1:8000/'],
    ['127.1.2.3', 'http://127.1.2.3/'],
    [':8000', 'http://localhost:8000/'],
    [':8000/docs', 'http://localhost:8000/docs'],
    ['[::1]:3000', 'http://[::1]:3000/'],
    ['app.localhost:3000', 'http://app.localhost:3000/'],
    ['  localhost:5173  ', 'http://localhost:5173/'],
    ['example.com', 'https://example.com/'],
    ['example.com/a/b?x=1', 'https://example.com/a/b?x=1'],
    ['example.com:8080', 'https://example.com:8080/'],
    ['192.168.1.10:3000', 'https://192.168.1.10:3000/'],
    ['http://example.com', 'http://example.com/'],
    ['https://localhost:5173/x', 'https://localhost:5173/x'],
    ['HTTP://LOCALHOST:5173', 'http://localhost:5173/'],
    ['http://localhost:5173/?q', 'http://localhost:5173/?q'],
    // Scheme-relative: a bare host like any other (DESIGN §4: https except loopback).
    ['//example.com', 'https://example.com/'],
    ['//example.com:8080/x', 'https://example.com:8080/x'],
    ['//localhost:5173/a', 'http://localhost:5173/a'],
    ['//127.0.0.1:8000', 'http://127.0.0.1:8000/'],
  ];
  for (const [input, want] of ok) {
    it(`accepts ${JSON.stringify(input)} as ${want}`, () => {
      expect(normalizeUrl(input)).toEqual({ ok: true, url: want });
    });
  }

  const refused: Array<[string, RegExp]> = [
    ['file:///etc/passwd', /^file: URLs can't be opened/],
    ['javascript:alert(1)', /^javascript: URLs/],
    ['data:text/html,<b>x</b>', /^data: URLs/],
    ['ftp://example.com', /^ftp: URLs/],
    ['chrome://settings', /^chrome: URLs/],
    ['about:blank', /^about: URLs/],
    ['mailto:a@example.com', /^mailto: URLs/],
    ['ws://localhost:5173', /^ws: URLs/],
    ['', /^Type a URL/],
    ['   ', /^Type a URL/],
    ['local host', /spaces/],
    ['http:nohost', /Not a valid URL/],
    ['http://user:pw@localhost:5173', /user name or password/],
    ['//', /Type a URL/],
    ['////x', /Not a valid/],
  ];
  for (const [input, want] of refused) {
    it(`refuses ${JSON.stringify(input)}`, () => {
      const r = normalizeUrl(input);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.message).toMatch(want);
    });
  }
});

describe('isLoopbackHost', () => {
  const cases: Array<[string, boolean]> = [
    ['localhost', true],
    ['LOCALHOST', true],
    ['foo.localhost', true],
    ['127.0.0.1', true],
    ['127.255.0.9', true],
    ['[::1]', true],
    ['::1', true],
    ['0.0.0.0', false],
    ['example.com', false],
    ['localhost.example.com', false],
    ['128.0.0.1', false],
  ];
  for (const [host, want] of cases) it(`${host} → ${want}`, () => expect(isLoopbackHost(host)).toBe(want));
});

describe('displayUrl', () => {
  const cases: Array<[string, string]> = [
    ['http://localhost:5173/', 'localhost:5173'],
    ['http://localhost:5173/about.html?x=1#top', 'localhost:5173/about.html'],
    ['https://example.com/a/b/', 'example.com/a/b/'],
    ['not a url', 'not a url'],
  ];
  for (const [url, want] of cases) it(`${url} → ${want}`, () => expect(displayUrl(url)).toBe(want));
});

describe('isHttpUrl', () => {
  const cases: Array<[unknown, boolean]> = [
    ['http://127.0.0.1:4000/x', true],
    ['https://example.com', true],
    ['javascript:alert(1)', false],
    ['file:///etc/passwd', false],
    ['/relative', false],
    [42, false],
    [null, false],
  ];
  for (const [v, want] of cases) it(`${String(v)} → ${want}`, () => expect(isHttpUrl(v)).toBe(want));
});

describe('iframeRefusal', () => {
  it('refuses https', () => expect(iframeRefusal('https://example.com/')).toMatch(/http:\/\/ pages only/));
  it('accepts http', () => expect(iframeRefusal('http://localhost:5173/')).toBeNull());
  it('refuses other schemes', () => expect(iframeRefusal('ftp://x/')).not.toBeNull());
});
