import { describe, expect, it } from 'vitest';
import { type Grant, GrantRegistry, historyMessage, parseShimMessage, reloadMessage, routeShimMessage, toUpstream } from './shim';

const G1: Grant = { grant: 'g1', origin: 'http://127.0.0.1:41001', upstream: 'http://localhost:5173' };
const G2: Grant = { grant: 'g2', origin: 'http://127.0.0.1:41002', upstream: 'http://127.0.0.1:8000' };

describe('parseShimMessage', () => {
  const cases: Array<[string, unknown, unknown]> = [
    [
      'location',
      { porthole: 'shim', v: 1, kind: 'location', url: 'http://127.0.0.1:41001/a?b', title: 'T', loaded: true },
      { kind: 'location', url: 'http://127.0.0.1:41001/a?b', title: 'T', loaded: true },
    ],
    [
      'location without title',
      { porthole: 'shim', v: 1, kind: 'location', url: 'http://127.0.0.1:41001/', loaded: false },
      { kind: 'location', url: 'http://127.0.0.1:41001/', title: '', loaded: false },
    ],
    ['pointerdown', { porthole: 'shim', v: 1, kind: 'pointerdown' }, { kind: 'pointerdown' }],
    ['navigating', { porthole: 'shim', v: 1, kind: 'navigating' }, { kind: 'navigating' }],
    ['navigating, extra fields dropped', { porthole: 'shim', v: 1, kind: 'navigating', url: 'javascript:x' }, { kind: 'navigating' }],
    ['navigating, wrong version', { porthole: 'shim', v: 2, kind: 'navigating' }, null],
    ['navigating, version as text', { porthole: 'shim', v: '1', kind: 'navigating' }, null],
    ['navigating from the app', { porthole: 'app', v: 1, kind: 'navigating' }, null],
    ['navigating, other case', { porthole: 'shim', v: 1, kind: 'Navigating' }, null],
    ['navigating, no porthole', { v: 1, kind: 'navigating' }, null],
    ['open-window', { porthole: 'shim', v: 1, kind: 'open-window', url: 'http://127.0.0.1:41001/p' }, { kind: 'open-window', url: 'http://127.0.0.1:41001/p' }],
    ['open-window by window.open', { porthole: 'shim', v: 1, kind: 'open-window', url: 'http://127.0.0.1:41001/p', script: true }, { kind: 'open-window', url: 'http://127.0.0.1:41001/p', script: true }],
    ['open-window, script not true', { porthole: 'shim', v: 1, kind: 'open-window', url: 'http://127.0.0.1:41001/p', script: 'yes' }, { kind: 'open-window', url: 'http://127.0.0.1:41001/p' }],
    ['title', { porthole: 'shim', v: 1, kind: 'title', title: 'Route two' }, { kind: 'title', title: 'Route two' }],
    ['title, empty', { porthole: 'shim', v: 1, kind: 'title', title: '' }, { kind: 'title', title: '' }],
    ['title, not text', { porthole: 'shim', v: 1, kind: 'title', title: 5 }, null],
    [
      'blocked',
      { porthole: 'shim', v: 1, kind: 'blocked', url: 'http://localhost:5173/x.js', via: 'script' },
      { kind: 'blocked', url: 'http://localhost:5173/x.js', via: 'script' },
    ],
    ['blocked, unknown via', { porthole: 'shim', v: 1, kind: 'blocked', url: 'http://localhost:5173/x.js', via: 'img' }, null],
    ['blocked, not http', { porthole: 'shim', v: 1, kind: 'blocked', url: 'data:text/javascript,1', via: 'fetch' }, null],
    [
      'key',
      { porthole: 'shim', v: 1, kind: 'key', key: '%', ctrl: false, alt: false, meta: false, shift: true },
      { kind: 'key', key: { key: '%', ctrl: false, alt: false, meta: false, shift: true } },
    ],
    ['key, a flag missing', { porthole: 'shim', v: 1, kind: 'key', key: 'b', ctrl: true, alt: false, meta: false }, null],
    ['key, flag as text', { porthole: 'shim', v: 1, kind: 'key', key: 'b', ctrl: 'true', alt: false, meta: false, shift: false }, null],
    ['key, empty', { porthole: 'shim', v: 1, kind: 'key', key: '', ctrl: false, alt: false, meta: false, shift: false }, null],
    ['key, too long', { porthole: 'shim', v: 1, kind: 'key', key: 'x'.repeat(33), ctrl: false, alt: false, meta: false, shift: false }, null],
    ['unknown kind', { porthole: 'shim', v: 1, kind: 'leader' }, null],
    ['wrong version', { porthole: 'shim', v: 2, kind: 'pointerdown' }, null],
    ['not from the shim', { porthole: 'app', v: 1, kind: 'pointerdown' }, null],
    ['javascript url', { porthole: 'shim', v: 1, kind: 'open-window', url: 'javascript:alert(1)' }, null],
    ['file url', { porthole: 'shim', v: 1, kind: 'location', url: 'file:///etc/passwd', title: '', loaded: true }, null],
    ['relative url', { porthole: 'shim', v: 1, kind: 'open-window', url: '/p' }, null],
    ['loaded not boolean', { porthole: 'shim', v: 1, kind: 'location', url: 'http://127.0.0.1:41001/', title: '', loaded: 'yes' }, null],
    ['a string', 'porthole', null],
    ['null', null, null],
    ['an array', [1, 2], null],
  ];
  for (const [name, data, want] of cases) it(name, () => expect(parseShimMessage(data)).toEqual(want));

  it('caps the title', () => {
    const m = parseShimMessage({ porthole: 'shim', v: 1, kind: 'location', url: 'http://127.0.0.1:41001/', title: 'x'.repeat(5000), loaded: true });
    expect(m?.kind === 'location' && m.title.length).toBe(1024);
  });
});

describe('routeShimMessage', () => {
  const w1 = { name: 'frame1' };
  const w2 = { name: 'frame2' };
  const frames = [
    { paneId: 'p1', window: w1 },
    { paneId: 'p2', window: w2 },
    { paneId: 'p3', window: null },
  ];
  const reg = new GrantRegistry();
  reg.hold('p1', G1);
  const ok = { porthole: 'shim', v: 1, kind: 'pointerdown' };
  const cases: Array<[string, { origin: string; source: unknown; data: unknown }, unknown]> = [
    ['routes by source', { origin: G1.origin, source: w2, data: ok }, { paneId: 'p2', message: { kind: 'pointerdown' } }],
    ['unknown origin', { origin: 'http://127.0.0.1:9', source: w1, data: ok }, null],
    ['the app origin is not a grant', { origin: 'http://127.0.0.1:3000', source: w1, data: ok }, null],
    ['unknown source', { origin: G1.origin, source: { name: 'other' }, data: ok }, null],
    ['null source never matches a frame without a window', { origin: G1.origin, source: null, data: ok }, null],
    ['invalid data', { origin: G1.origin, source: w1, data: { porthole: 'shim', v: 1, kind: 'evil' } }, null],
  ];
  for (const [name, e, want] of cases) it(name, () => expect(routeShimMessage(e, frames, reg.isLive)).toEqual(want));
});

describe('toUpstream', () => {
  const cases: Array<[string, string | null]> = [
    ['http://127.0.0.1:41001/', 'http://localhost:5173/'],
    ['http://127.0.0.1:41001/about.html?x=1#h', 'http://localhost:5173/about.html?x=1#h'],
    ['http://127.0.0.1:41002/index.html', 'http://127.0.0.1:8000/index.html'],
    ['http://127.0.0.1:41003/', null],
    ['http://localhost:5173/', null],
    ['garbage', null],
    ['http://127.0.0.1:41001//evil.example/x', 'http://localhost:5173//evil.example/x'],
  ];
  for (const [url, want] of cases) it(`${url} → ${want}`, () => expect(toUpstream(url, [G1, G2])).toBe(want));

  it('keeps a default-port upstream default', () => {
    expect(toUpstream('http://127.0.0.1:41004/x', [{ grant: 'g4', origin: 'http://127.0.0.1:41004', upstream: 'http://devbox' }])).toBe('http://devbox/x');
  });
});

describe('GrantRegistry', () => {
  it('knows only the origins open panes hold', () => {
    const r = new GrantRegistry();
    expect(r.isLive(G1.origin)).toBe(false);
    r.hold('p1', G1);
    expect(r.isLive(G1.origin)).toBe(true);
    expect(r.isLive(G1.upstream)).toBe(false);
    expect(r.toUpstream('http://127.0.0.1:41001/q')).toBe('http://localhost:5173/q');
  });

  it('drops an origin when the last pane holding it lets go', () => {
    const r = new GrantRegistry();
    r.hold('p1', G1);
    r.hold('p2', G1);
    r.release('p1');
    expect(r.isLive(G1.origin)).toBe(true);
    r.release('p2');
    expect(r.isLive(G1.origin)).toBe(false);
    expect(r.toUpstream('http://127.0.0.1:41001/q')).toBeNull();
    r.release('p2'); // idempotent
    expect(r.isLive(G1.origin)).toBe(false);
  });

  it('a pane moving to another grant lets go of its old one', () => {
    const r = new GrantRegistry();
    r.hold('p1', G1);
    r.hold('p1', G2);
    expect(r.isLive(G1.origin)).toBe(false);
    expect(r.isLive(G2.origin)).toBe(true);
    expect(r.get(G2.origin)).toEqual(G2);
  });
});

describe('app messages', () => {
  it('history', () => expect(historyMessage(-1)).toEqual({ porthole: 'app', v: 1, kind: 'history', delta: -1 }));
  it('reload', () => expect(reloadMessage()).toEqual({ porthole: 'app', v: 1, kind: 'reload' }));
});
