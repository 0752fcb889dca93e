import { describe, expect, it } from 'vitest';
import * as L from '../layout/engine';
import { restoreDoc, toDoc } from './persist';
import type { Snapshot } from './model';
import { parseDoc } from './doc';
import { RestorePlan, cwdGoneNotice, parseProblem, problemText, restoredPrelude } from './restore';

const rec = { cwd: '/tmp', command: ['-bash'], running: null, scrollback: '$ echo hi\nhi\n$ ' };

describe('restore', () => {
  it('plans only the document the sidecar restored (revision 0 with restore)', () => {
    const restore = { saved_at: 0, terminals: { t1: rec, bogus: rec, t2: { cwd: 1 } } };
    const later = RestorePlan.from({ revision: 1, restore })!;
    expect(later.has('t1')).toBe(false);
    expect(later.terminal('t1')).toBeNull();
    expect(later.shown('t1')!.prelude).toContain('restored');
    expect(RestorePlan.from({ revision: 0, restore: null })).toBeNull();
    expect(RestorePlan.from(null)).toBeNull();
    const plan = RestorePlan.from({ revision: 0, restore })!;
    expect(plan.has('t1')).toBe(true);
    expect(plan.has('bogus')).toBe(false);
    expect(plan.has('t2')).toBe(false);
    expect(plan.terminal('t1')!.cwd).toBe('/tmp');
    expect(plan.terminal('t9')).toBeNull();
  });

  it('writes the saved output above a divider, controls removed, CR LF line ends', () => {
    const p = restoredPrelude({ ...rec, scrollback: 'a\x1b[31mred\x07\nb', running: 'npm run dev' }, new Date(2026, 11, 1, 21, 5).getTime());
    expect(p.startsWith('a[31mred\r\nb\r\n')).toBe(true);
    expect(p).toContain('restored 2026-12-01 21:05');
    expect(p).toContain('was running: npm run dev');
    expect(p.indexOf('b\r\n')).toBeLessThan(p.indexOf('restored'));
    expect(restoredPrelude({ ...rec, scrollback: '' }, 0).startsWith('\x1b[2m')).toBe(true);
    expect(cwdGoneNotice('/gone\x1b')).toContain('/gone is gone');
  });

  it('drops a browser pane’s browser id and handle: no Chromium survives a restart', () => {
    const plan = RestorePlan.from({ revision: 0, restore: { saved_at: 1, terminals: {} } })!;
    const saved = { kind: 'browser' as const, url: 'http://x/', mode: 'screencast' as const, title: '', browser: 'b3', handle: 'b3' };
    expect(plan.browser(saved)).toEqual({ kind: 'browser', url: 'http://x/', mode: 'screencast', title: '' });
  });

  it('names the moved-aside file in the banner text', () => {
    const p = parseProblem({ file: '/s/session.json', moved_to: '/s/session.json.corrupt-9', message: 'not a session file: EOF' })!;
    expect(problemText(p)).toContain('/s/session.json.corrupt-9');
    expect(problemText(p)).toContain('EOF');
    expect(parseProblem(null)).toBeNull();
    expect(problemText({ ...p, movedTo: null })).toContain('stays at /s/session.json');
  });
});

describe('restoreDoc with a plan', () => {
  const doc = {
    version: 1 as const,
    layout: L.split(L.split(L.single('p1'), 'p1', 'right', 'p2'), 'p2', 'right', 'p3'),
    panes: {
      p1: { terminalId: 't1', title: 'bash', command: null, handle: 't1' },
      p2: { kind: 'browser' as const, url: 'http://127.0.0.1:5173/', mode: 'screencast' as const, title: 'app', browser: 'b1', handle: 'b1' },
      p3: { terminalId: 't2', title: 'gone', command: null },
    },
    order: ['p1', 'p2', 'p3'],
  };

  it('keeps the panes the session describes, with a new terminal to start, and drops the rest', () => {
    const parsed = parseDoc(doc);
    expect(parsed).not.toBeNull();
    const plan = RestorePlan.from({ revision: 0, restore: { saved_at: 0, terminals: { t1: rec } } });
    const wall = restoreDoc(parsed!, new Set(), plan);
    expect(wall.order).toEqual(['p1', 'p2']);
    expect(wall.panes.p1.terminalId).toBeNull();
    expect(wall.panes.p1.handle).toBeNull();
    expect(wall.restored.p1.cwd).toBe('/tmp');
    expect(wall.panes.p1.restoredFrom).toBe('t1');
    expect(wall.panes.p2.browser?.browserId).toBeNull();
    expect(wall.panes.p2.browser?.mode).toBe('screencast');
    expect(wall.panes.p2.handle).toBeNull();
    // Saved before its new terminal exists, the pane still names the old one.
    const snap = { layout: wall.workspaces[0].layout, workspaces: wall.workspaces, active: wall.active, panes: wall.panes, order: wall.order } as unknown as Snapshot;
    expect(toDoc(snap).panes.p1).toMatchObject({ terminalId: 't1', restoredFrom: 't1' });
    // Without a plan (no restart): panes whose terminal is gone are dropped as before.
    const plain = restoreDoc(parsed!, new Set(), null);
    expect(plain.order).toEqual(['p2']);
    expect(plain.panes.p2.browser?.browserId).toBe('b1');
    // A reload after the restore: p1 now runs t5 and shows t1's output again; browsers stay.
    const again = parseDoc({ ...doc, panes: { ...doc.panes, p1: { terminalId: 't5', title: 'bash', command: null, restoredFrom: 't1' } } })!;
    const later = RestorePlan.from({ revision: 3, restore: { saved_at: 0, terminals: { t1: rec } } });
    const reloaded = restoreDoc(again, new Set(['t5']), later);
    expect(reloaded.order).toEqual(['p1', 'p2']);
    expect(reloaded.panes.p1.terminalId).toBe('t5');
    expect(reloaded.panes.p1.restoredFrom).toBe('t1');
    expect(reloaded.restored.p1.prelude).toContain('restored');
    expect(reloaded.panes.p2.browser?.browserId).toBe('b1');
  });
});

describe('a screencast pane\'s tabs across a restart (issue 22 item 5)', () => {
  const tabs = ['http://127.0.0.1:5173/a', 'http://127.0.0.1:5173/b', 'http://127.0.0.1:5173/c'];
  const doc = {
    version: 1 as const,
    layout: L.single('p1'),
    panes: { p1: { kind: 'browser' as const, url: tabs[1], mode: 'screencast' as const, title: 'app', browser: 'b1', tabs, activeTab: 1 } },
    order: ['p1'],
  };

  it('brings the tabs back to be reopened, and saves them again until the browser exists', () => {
    const plan = RestorePlan.from({ revision: 0, restore: { saved_at: 0, terminals: {} } });
    const wall = restoreDoc(parseDoc(doc)!, new Set(), plan);
    expect(wall.panes.p1.browser?.restoreTabs).toEqual({ tabs, active: 1 });
    const snap = { layout: wall.workspaces[0].layout, workspaces: wall.workspaces, active: wall.active, panes: wall.panes, order: wall.order } as unknown as Snapshot;
    expect(toDoc(snap).panes.p1).toMatchObject({ tabs, activeTab: 1 });
  });

  it('saves a live browser\'s http(s) tabs in order with the active one', () => {
    const wall = restoreDoc(parseDoc(doc)!, new Set(), null);
    const b = wall.panes.p1.browser!;
    const live = [
      { id: 'T1', url: tabs[0], title: '' },
      { id: 'T2', url: 'about:blank', title: '' },
      { id: 'T3', url: tabs[2], title: '' },
    ];
    const panes = { p1: { ...wall.panes.p1, browser: { ...b, restoreTabs: null, screencast: { ...b.screencast!, tabs: live, activeTab: 'T3' } } } };
    const snap = { layout: wall.workspaces[0].layout, workspaces: wall.workspaces, active: wall.active, panes, order: wall.order } as unknown as Snapshot;
    expect(toDoc(snap).panes.p1).toMatchObject({ tabs: [tabs[0], tabs[2]], activeTab: 1 });
  });
});
