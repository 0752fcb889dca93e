import { describe, expect, it } from 'vitest';
import * as L from '../layout/engine';
import { parseDoc } from './doc';

const layout = L.split(L.single('p1'), 'p1', 'right', 'p2');
const doc = (panes: Record<string, unknown>) => ({ version: 1, layout, panes, order: Object.keys(panes) });

describe('parseDoc: pane handles', () => {
  it('keeps the handles of a document that has them', () => {
    const d = parseDoc(doc({ p1: { terminalId: 't5', title: '', command: 'bash', handle: 't1' }, p2: { kind: 'browser', url: 'http://localhost:8000/', mode: 'iframe', title: '', handle: 'b2' } }));
    expect(d?.panes.p1).toEqual({ terminalId: 't5', title: '', command: 'bash', handle: 't1' });
    expect(d?.panes.p2).toMatchObject({ kind: 'browser', handle: 'b2' });
  });

  it('accepts a document from before handles', () => {
    const d = parseDoc(doc({ p1: { terminalId: 't1', title: 'x', command: null }, p2: { kind: 'browser', url: '', mode: 'screencast', title: '' } }));
    expect(d?.panes.p1).toEqual({ terminalId: 't1', title: 'x', command: null });
    expect(d?.panes.p2).not.toHaveProperty('handle');
  });

  it('drops a handle of the wrong kind or shape, keeping the pane', () => {
    const d = parseDoc(
      doc({ p1: { terminalId: 't1', title: '', command: null, handle: 'b1' }, p2: { kind: 'browser', url: 'http://a/', mode: 'iframe', title: '', handle: 't2' } }),
    );
    expect(d?.panes.p1).not.toHaveProperty('handle');
    expect(d?.panes.p2).not.toHaveProperty('handle');
    expect(parseDoc(doc({ p1: { terminalId: 't1', title: '', command: null, handle: 7 } }))?.panes.p1).not.toHaveProperty('handle');
  });

  it('keeps the terminals a pane kept for their survivors, dropping what is not a terminal id', () => {
    const d = parseDoc(doc({ p1: { terminalId: 't5', title: '', command: null, handle: 't1', kept: ['t1', 'b2', 7, 't3'] } }));
    expect(d?.panes.p1).toEqual({ terminalId: 't5', title: '', command: null, handle: 't1', kept: ['t1', 't3'] });
    expect(parseDoc(doc({ p1: { terminalId: 't5', title: '', command: null } }))?.panes.p1).not.toHaveProperty('kept');
  });

  it('is null for a document that is not one', () => {
    expect(parseDoc(null)).toBeNull();
    expect(parseDoc({ version: 2, layout, panes: {} })).toBeNull();
  });
});

describe('parseDoc: a screencast pane\'s tabs (issue 22 item 5)', () => {
  const pane = (tabs: unknown, activeTab?: unknown) => parseDoc(doc({ p1: { terminalId: 't1', title: '', command: null }, p2: { kind: 'browser', url: 'http://a/2', mode: 'screencast', title: '', tabs, activeTab } }))?.panes.p2;
  it('keeps two or more http(s) tabs and the active index', () => {
    expect(pane(['http://a/1', 'https://b/2'], 1)).toMatchObject({ tabs: ['http://a/1', 'https://b/2'], activeTab: 1 });
  });
  it('reads an active index out of range as the first tab', () => {
    expect(pane(['http://a/1', 'http://a/2'], 7)).toMatchObject({ activeTab: 0 });
  });
  it('drops tabs that are not a list of http(s) URLs, or a single one, keeping the pane', () => {
    for (const bad of [['http://a/1'], ['http://a/1', 'file:///etc/passwd'], 'http://a/1', Array(40).fill('http://a/')]) {
      const p = pane(bad, 0);
      expect(p).toMatchObject({ kind: 'browser', url: 'http://a/2' });
      expect(p).not.toHaveProperty('tabs');
    }
  });
});

describe('an isolated screencast pane', () => {
  it('is saved isolated and restored isolated; anything but true is not isolated', async () => {
    const { restoreDoc, toDoc } = await import('./persist');
    const d = parseDoc(doc({ p1: { terminalId: 't1', title: '', command: null }, p2: { kind: 'browser', url: 'http://a/', mode: 'screencast', title: '', isolated: true } }));
    expect(d?.panes.p2).toMatchObject({ isolated: true });
    const wall = restoreDoc(d!, new Set(['t1']));
    expect(wall.panes.p2?.browser?.isolated).toBe(true);
    const snap = { layout: wall.workspaces[0]!.layout, workspaces: wall.workspaces, active: wall.workspaces[0]!.id, panes: wall.panes, order: wall.order } as unknown as Parameters<typeof toDoc>[0];
    expect(toDoc(snap).panes.p2).toMatchObject({ isolated: true });
    expect(parseDoc(doc({ p2: { kind: 'browser', url: 'http://a/', mode: 'screencast', title: '', isolated: 'yes' } }))?.panes.p2).not.toHaveProperty('isolated');
  });
});
