import { describe, expect, it } from 'vitest';
import type { ListeningPort } from '../api/protocol';
import { isPortOrigin, loopbackTarget, portRows, portUrl, sameOrigin, servesHost, servingPane } from './ports';

const lp = (port: number, address: string, process = 'python3', pid = 10): ListeningPort => ({ port, address, pid, process });

describe('portUrl', () => {
  const check = (address: string, want: string) => it(`${address} → ${want}`, () => expect(portUrl({ port: 8000, address })).toBe(want));
  check('127.0.0.1', 'http://localhost:8000/');
  check('0.0.0.0', 'http://localhost:8000/');
  check('::', 'http://localhost:8000/');
  check('::1', 'http://[::1]:8000/');
  check('127.0.0.2', 'http://127.0.0.2:8000/');
});

describe('portRows', () => {
  it('groups one port on several addresses, prefers a localhost-reachable bind, sorts by port', () => {
    const rows = portRows([lp(9000, '::1', 'a', 3), lp(5173, '::', 'node', 2), lp(5173, '0.0.0.0', 'node', 1)]);
    expect(rows.map((r) => [r.port, r.addresses, r.url, r.process])).toEqual([
      [5173, ['::', '0.0.0.0'], 'http://localhost:5173/', 'node'],
      [9000, ['::1'], 'http://[::1]:9000/', 'a'],
    ]);
    expect(portRows([])).toEqual([]);
  });
});

describe('loopbackTarget', () => {
  const cases: [string, { host: string; port: number } | null][] = [
    ['http://localhost:5173/', { host: 'localhost', port: 5173 }],
    ['http://127.0.0.1:8000/x?y', { host: '127.0.0.1', port: 8000 }],
    ['http://[::1]:3000/', { host: '[::1]', port: 3000 }],
    ['http://app.localhost:4000/', { host: 'app.localhost', port: 4000 }],
    ['http://localhost/', { host: 'localhost', port: 80 }],
    ['https://example.com:8000/', null],
    ['http://192.168.1.4:8000/', null],
    ['not a url', null],
    ['', null],
  ];
  for (const [url, want] of cases) it(`${url || '(empty)'}`, () => expect(loopbackTarget(url)).toEqual(want));
});

describe('servesHost', () => {
  const cases: [string, string, boolean][] = [
    ['127.0.0.1', 'localhost', true],
    ['0.0.0.0', 'localhost', true],
    ['::', 'localhost', true],
    ['::1', 'localhost', true],
    ['127.0.0.2', 'localhost', false],
    ['::1', '[::1]', true],
    ['::', '[::1]', true],
    ['127.0.0.1', '[::1]', false],
    ['127.0.0.2', '127.0.0.2', true],
    ['0.0.0.0', '127.0.0.2', true],
    ['127.0.0.1', '127.0.0.2', false],
  ];
  for (const [a, h, want] of cases) it(`${a} serves ${h}: ${want}`, () => expect(servesHost(a, h)).toBe(want));
});

describe('servingPane', () => {
  const scans = [
    { paneId: 'p1', ports: [lp(8000, '127.0.0.1')] },
    { paneId: 'p2', ports: [lp(9000, '0.0.0.0')] },
    { paneId: 'p3', ports: [lp(9000, '::')] },
  ];
  it('exactly one owner settles', () => expect(servingPane('http://localhost:8000/a', scans)).toBe('p1'));
  it('two owners leave it unsettled', () => expect(servingPane('http://localhost:9000/', scans)).toBeNull());
  it('no owner', () => expect(servingPane('http://localhost:7000/', scans)).toBeNull());
  it('not loopback', () => expect(servingPane('https://example.com:8000/', scans)).toBeNull());
  it('a bind the host does not reach', () => expect(servingPane('http://[::1]:8000/', scans)).toBeNull());
});

describe('port origins', () => {
  it('validates saved origins', () => {
    expect(isPortOrigin({ pane: 'p1', port: 8000, mode: 'iframe' })).toBe(true);
    expect(isPortOrigin({ pane: 'p1', port: 0, mode: 'iframe' })).toBe(false);
    expect(isPortOrigin({ pane: 'p1', port: 8000, mode: 'system' })).toBe(false);
    expect(isPortOrigin({ pane: 1, port: 8000, mode: 'iframe' })).toBe(false);
    expect(isPortOrigin(null)).toBe(false);
  });
  it('matches on pane, port and mode', () => {
    const o = { pane: 'p1', port: 8000, mode: 'iframe' as const };
    expect(sameOrigin(o, { ...o })).toBe(true);
    expect(sameOrigin(o, { ...o, port: 8001 })).toBe(false);
    expect(sameOrigin(o, { ...o, mode: 'screencast' })).toBe(false);
    expect(sameOrigin(undefined, o)).toBe(false);
  });
});
