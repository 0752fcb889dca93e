// Remote workspaces in the saved document and the strip (issue 28): a workspace's host and
// a terminal pane's remote survive a save and a restore (version stays 2; old documents read
// as local), remote panes are kept whatever the local sidecar's terminals are, and a
// terminal pane never moves to a workspace of another host.
import { describe, expect, it } from 'vitest';
import * as L from '../layout/engine';
import { parseDoc } from './doc';
import type { Snapshot } from './model';
import { restoreDoc, toDoc } from './persist';
import { RestorePlan } from './restore';
import { makeWorkspace, movePane } from './workspaces';

const two = L.split(L.single('p1'), 'p1', 'right', 'p2');
const saved = {
  version: 2,
  workspaces: [
    { id: 'w1', name: '', layout: L.single('p3'), order: ['p3'], focus: 'p3' },
    { id: 'w2', name: 'dev', layout: two, order: ['p1', 'p2'], focus: 'p2', host: 'me@dev:2222' },
  ],
  active: 'w2',
  panes: {
    p1: { terminalId: 't1', title: 'bash', command: 'bash', remote: 'me@dev:2222' },
    p2: { terminalId: 't7', title: '', command: null, remote: 'me@dev:2222' },
    p3: { terminalId: 't1', title: 'local', command: 'bash', handle: 't1' },
  },
};

describe('a remote workspace in the saved document', () => {
  it('parses host and remote field by field', () => {
    const d = parseDoc(saved)!;
    expect(d.version).toBe(2);
    expect(d.workspaces.map((w) => w.host)).toEqual([undefined, 'me@dev:2222']);
    expect(d.panes.p1).toEqual({ terminalId: 't1', title: 'bash', command: 'bash', remote: 'me@dev:2222' });
    expect(d.panes.p3).not.toHaveProperty('remote');
  });

  it('drops a bad host (the workspace reads as local) and a remote pane with a bad host', () => {
    const bad = {
      ...saved,
      workspaces: [saved.workspaces[0], { ...saved.workspaces[1], host: '-oProxyCommand=x' }],
      panes: { ...saved.panes, p2: { ...saved.panes.p2, remote: 'a b' } },
    };
    const d = parseDoc(bad)!;
    expect(d.workspaces[1]).not.toHaveProperty('host');
    expect(d.panes.p2).toBeUndefined();
  });

  it('restores remote panes though the local sidecar has none of their terminals, without local handles', () => {
    const wall = restoreDoc(parseDoc(saved)!, new Set(['t1']), null);
    expect(wall.workspaces.map((w) => [w.id, w.host ?? null])).toEqual([
      ['w1', null],
      ['w2', 'me@dev:2222'],
    ]);
    expect(wall.panes.p2).toMatchObject({ kind: 'terminal', terminalId: 't7', remote: 'me@dev:2222', handle: null });
    expect(wall.panes.p1).toMatchObject({ terminalId: 't1', remote: 'me@dev:2222', handle: null });
    expect(wall.panes.p3).toMatchObject({ terminalId: 't1', handle: 't1' });
    expect(wall.panes.p3.remote).toBeUndefined();
  });

  it('keeps remote panes after a local sidecar restart too (their terminals live on the remote)', () => {
    const plan = RestorePlan.from({ revision: 0, restore: { saved_at: 0, terminals: {} } });
    const wall = restoreDoc(parseDoc(saved)!, new Set(), plan);
    expect(Object.keys(wall.panes).sort()).toEqual(['p1', 'p2']);
    expect(wall.restored).toEqual({});
    expect(wall.active).toBe('w2');
  });

  it('round-trips: restored and saved again, the same document', () => {
    const wall = restoreDoc(parseDoc(saved)!, new Set(['t1']), null);
    const active = wall.workspaces.find((w) => w.id === wall.active)!;
    const snap = { layout: active.layout, workspaces: wall.workspaces, active: wall.active, panes: wall.panes, order: wall.order } as unknown as Snapshot;
    const again = toDoc(snap);
    expect(again.workspaces[1].host).toBe('me@dev:2222');
    expect(again.workspaces[0]).not.toHaveProperty('host');
    expect(again.panes.p2).toEqual({ terminalId: 't7', title: '', command: null, remote: 'me@dev:2222' });
    expect(parseDoc(JSON.parse(JSON.stringify(again)))).toEqual(parseDoc(saved));
  });

  it('an old document reads as local', () => {
    const d = parseDoc({ version: 1, layout: L.single('p1'), panes: { p1: { terminalId: 't1', title: '', command: null } }, order: ['p1'] })!;
    expect(d.workspaces[0]).not.toHaveProperty('host');
    expect(restoreDoc(d, new Set(['t1'])).panes.p1.remote).toBeUndefined();
  });
});

describe('movePane across hosts', () => {
  const list = () => [makeWorkspace('w1', L.single('p1')), makeWorkspace('w2', L.single('p2'), 'dev', 'dev'), makeWorkspace('w3', L.single('p3'), 'dev too', 'dev')];

  it('refuses a remote terminal pane into a local workspace or one of another host, and a local one into a remote workspace', () => {
    const l = list();
    expect(movePane(l, 'p2', 'w1', 'right', 'dev')).toBe(l);
    expect(movePane(l, 'p1', 'w2', 'right', null)).toBe(l);
    expect(movePane(l, 'p2', 'w3', 'right', 'other')).toBe(l);
  });

  it('moves a terminal pane between workspaces of the same host, and any pane when no host is given (browser panes)', () => {
    const l = list();
    expect(L.allPanes(movePane(l, 'p2', 'w3', 'right', 'dev')[2].layout)).toEqual(['p3', 'p2']);
    expect(L.allPanes(movePane(l, 'p1', 'w2', 'right')[1].layout)).toEqual(['p2', 'p1']);
  });

  it('makeWorkspace keeps its host only when it has one', () => {
    expect(makeWorkspace('w1')).not.toHaveProperty('host');
    expect(makeWorkspace('w2', undefined, 'dev', 'dev').host).toBe('dev');
  });
});

describe("a remote pane's port opened in the wall (issue 28 item 4)", () => {
  it('a browser pane opened from a remote port keeps its host across a save and a restore', () => {
    const doc = {
      ...saved,
      workspaces: [saved.workspaces[0], { ...saved.workspaces[1], layout: L.split(two, 'p2', 'right', 'p4'), order: ['p1', 'p2', 'p4'] }],
      panes: { ...saved.panes, p4: { kind: 'browser', url: 'http://localhost:8000/', mode: 'iframe', title: '', remote: 'me@dev:2222' } },
    };
    const d = parseDoc(doc)!;
    expect(d.panes.p4).toMatchObject({ kind: 'browser', remote: 'me@dev:2222' });
    const wall = restoreDoc(d, new Set(), null);
    expect(wall.panes.p4).toMatchObject({ kind: 'browser', remote: 'me@dev:2222' });
    const active = wall.workspaces.find((w) => w.id === wall.active)!;
    const snap = { layout: active.layout, workspaces: wall.workspaces, active: wall.active, panes: wall.panes, order: wall.order } as unknown as Snapshot;
    expect(toDoc(snap).panes.p4).toMatchObject({ kind: 'browser', remote: 'me@dev:2222' });
    const bad = parseDoc({ ...doc, panes: { ...doc.panes, p4: { ...doc.panes.p4, remote: '-oX' } } })!;
    expect(bad.panes.p4).not.toHaveProperty('remote');
  });
});
