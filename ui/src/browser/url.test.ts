import { describe, expect, it } from 'vitest';
import { blockedAddress, displayUrl, iframeRefusal, isHttpUrl, isLoopbackHost, normalizeUrl } from './url';

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
    ['http://localhost:5173/about.html?x=1#top', 'localhost:5173/about.html?x=1#top'],
    ['http://127.0.0.1:4000/final?popup=5', '127.0.0.1:4000/final?popup=5'],
    ['http://localhost:5173/?q=a%20b', 'localhost:5173/?q=a%20b'],
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

describe('blockedAddress', () => {
  // The spellings of protocol §6.1, through normalizeUrl as the URL field reads them.
  const field = (typed: string) => {
    const r = normalizeUrl(typed);
    if (!r.ok) throw new Error(r.message);
    return blockedAddress(r.url);
  };
  it.each([
    ['169.254.169.254', '169.254.169.254'],
    ['http://169.254.169.254/latest/meta-data', '169.254.169.254'],
    ['2852039166', '169.254.169.254'],
    ['0251.0376.0251.0376', '169.254.169.254'],
    ['0xa9fea9fe', '169.254.169.254'],
    ['169.254.43518', '169.254.169.254'],
    ['169.254.169.254.', '169.254.169.254'],
    ['169.254.0.1:8080', '169.254.0.1'],
    ['[::ffff:169.254.169.254]', '[::ffff:a9fe:a9fe]'],
    ['http://[::169.254.169.254]/', '[::a9fe:a9fe]'],
    ['[fe80::1]', '[fe80::1]'],
    ['[febf:ffff::1]', '[febf:ffff::1]'],
    ['[fd00:ec2::254]', '[fd00:ec2::254]'],
    ['100.100.100.200', '100.100.100.200'],
    // IPv4 embedded in IPv6: NAT64 (64:ff9b::/96, and 64:ff9b:1::/48 at every RFC 6052 offset
    // it allows), 6to4 (2002::/16), SIIT (::ffff:0:0:0/96).
    ['[64:ff9b::169.254.169.254]', '[64:ff9b::a9fe:a9fe]'],
    ['[64:ff9b::100.100.100.200]', '[64:ff9b::6464:64c8]'],
    ['[64:ff9b:1::a9fe:a9fe]', '[64:ff9b:1::a9fe:a9fe]'],
    ['[64:ff9b:1:a9fe:a9:fe00::]', '[64:ff9b:1:a9fe:a9:fe00::]'],
    ['[64:ff9b:1:0:a9:fea9:fe00:0]', '[64:ff9b:1:0:a9:fea9:fe00:0]'],
    ['[2002:a9fe:a9fe::1]', '[2002:a9fe:a9fe::1]'],
    ['[::ffff:0:169.254.169.254]', '[::ffff:0:a9fe:a9fe]'],
  ])('refuses %s (as %s)', (typed, shown) => {
    expect(field(typed)).toBe(`${shown} is a link-local or cloud-metadata address: Porthole doesn't open those`);
  });
  it.each([
    ['metadata.google.internal', 'metadata.google.internal'],
    ['http://METADATA.Google.Internal./computeMetadata/v1/', 'metadata.google.internal.'],
    ['http://metadata/', 'metadata'],
    ['http://metadata./', 'metadata.'],
    ['http://instance-data/latest/meta-data/', 'instance-data'],
    ['instance-data.', 'instance-data.'],
  ])('refuses the metadata name %s (as %s)', (typed, shown) => {
    expect(field(typed)).toBe(`${shown} is a cloud-metadata host name: Porthole doesn't open those`);
  });
  it.each([
    'localhost:5173',
    '127.0.0.1:8000',
    '[::1]:3000',
    '10.0.0.5',
    '192.168.1.2',
    '169.255.0.1',
    '168.254.169.254',
    '100.100.100.201',
    '[fec0::1]',
    '[::ffff:10.0.0.1]',
    '[fd00:ec2::255]',
    'example.com',
    '169.254.169.254.example.com',
    '[64:ff9b::a00:5]',
    '[64:ff9b:1::a00:5]',
    '[2002:a00:5::1]',
    '[::ffff:0:a00:5]',
    'metadata.example.com',
    'instance-data.example.com',
  ])('lets %s through', (typed) => {
    expect(field(typed)).toBeNull();
  });
});
