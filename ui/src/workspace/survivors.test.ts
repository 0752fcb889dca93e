import { describe, expect, it } from 'vitest';
import type { TerminalInfo } from '../api/protocol';
import { closeReasons, findOrphans, orphanText, survivorBanner, survivorText } from './survivors';

const term = (id: string, over: Partial<TerminalInfo> = {}): TerminalInfo => ({
  id,
  pid: 100,
  cwd: '/home/me',
  command: ['-bash'],
  cols: 80,
  rows: 24,
  alive: true,
  exit_code: null,
  busy: false,
  foreground: 'bash',
  survivors: [],
  ...over,
});
const py = { pid: 1234, name: 'python3' };

describe('survivors', () => {
  it('names up to three, then counts', () => {
    expect(survivorText([])).toBe('');
    expect(survivorText([py])).toBe('python3 (pid 1234)');
    const many = [1, 2, 3, 4, 5].map((pid) => ({ pid, name: `p${pid}` }));
    expect(survivorText(many)).toBe('p1 (pid 1), p2 (pid 2), p3 (pid 3) and 2 more');
  });

  it('the exited pane says what still runs and that Enter keeps it', () => {
    expect(survivorBanner(0, [py])).toBe('exited 0 · python3 (pid 1234) still runs from this session · Enter restarts (keeps it)');
    expect(survivorBanner(3, [py, { pid: 9, name: 'node' }])).toMatch(/still run from this session · Enter restarts \(keeps them\)$/);
  });
});

describe('closeReasons', () => {
  it('asks for a busy program, survivors of the session and of kept sessions; not for an idle shell', () => {
    expect(closeReasons(term('t1'), [])).toEqual([]);
    expect(closeReasons(null, [])).toEqual([]);
    expect(closeReasons(term('t1', { busy: true, foreground: 'vim' }), [])).toEqual(['vim is running in this pane']);
    expect(closeReasons(term('t1', { alive: false, exit_code: 0, survivors: [py] }), [])).toEqual(["python3 (pid 1234) still runs from this pane's session"]);
    expect(closeReasons(term('t2'), [term('t1', { alive: false, survivors: [py] }), term('t0', { alive: false })])).toEqual([
      'python3 (pid 1234) still runs from an earlier session in this pane',
    ]);
  });
});

describe('findOrphans', () => {
  it('offers running terminals no pane shows: live ones by their foreground, exited ones by their survivors', () => {
    const terms = [
      term('t1'),
      term('t3', { foreground: 'npm' }),
      term('t4', { alive: false, exit_code: 0 }),
      term('t5', { alive: false, exit_code: 0, survivors: [py] }),
      term('t6', { foreground: null, command: ['/usr/bin/htop'], pane: 't2' }),
    ];
    const orphans = findOrphans(terms, new Set(['t1']));
    expect(orphans.map((o) => [o.id, o.name, o.handle])).toEqual([
      ['t3', 'npm', 't3'],
      ['t5', 'python3', 't5'],
      ['t6', 'htop', 't2'],
    ]);
    expect(orphanText(orphans.slice(0, 2))).toBe('2 terminals running without a pane: npm (t3), python3 (t5)');
    expect(orphanText(orphans.slice(0, 1))).toBe('1 terminal running without a pane: npm (t3)');
  });
});
