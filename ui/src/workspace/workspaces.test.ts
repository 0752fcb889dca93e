import { describe, expect, it } from 'vitest';
import * as L from '../layout/engine';
import { parseDoc } from './doc';
import { browserModel, terminalModel, type Snapshot } from './model';
import { restoreDoc, toDoc } from './persist';
import { POPOUT_CHECKING } from '../browser/popout';
import {
  WORKSPACES_MAX,
  byDigit,
  cleanName,
  cycle,
  makeWorkspace,
  movePane,
  nextWorkspaceId,
  panesByWorkspace,
  renamed,
  unemptied,
  withLayout,
  workspaceOf,
} from './workspaces';

const two = L.split(L.single('p1'), 'p1', 'right', 'p2');
const list = () => [makeWorkspace('w1', two, 'main'), makeWorkspace('w2', L.single('p3')), makeWorkspace('w4', L.minimize(L.split(L.single('p4'), 'p4', 'down', 'p5'), 'p5'))];

describe('workspaces: the pure model', () => {
  it('finds the workspace of a pane on its wall or its baseboard', () => {
    expect(workspaceOf(list(), 'p2')?.id).toBe('w1');
    expect(workspaceOf(list(), 'p5')?.id).toBe('w4');
    expect(workspaceOf(list(), 'p9')).toBeUndefined();
  });

  it('cycles forward and back, wrapping; alone stays put', () => {
    expect(cycle(list(), 'w1', 1)).toBe('w2');
    expect(cycle(list(), 'w4', 1)).toBe('w1');
    expect(cycle(list(), 'w1', -1)).toBe('w4');
    expect(cycle([makeWorkspace('w1')], 'w1', 1)).toBe('w1');
  });

  it('digits 1..9 pick the first nine, 0 the tenth, and nothing past the end', () => {
    const many = Array.from({ length: 12 }, (_, i) => makeWorkspace(`w${i + 1}`));
    expect(byDigit(many, 1)).toBe('w1');
    expect(byDigit(many, 9)).toBe('w9');
    expect(byDigit(many, 0)).toBe('w10');
    expect(byDigit(list(), 4)).toBeNull();
    expect(byDigit(list(), 0)).toBeNull();
    expect(byDigit(list(), 10)).toBeNull();
  });

  it('gives ids above every id, never reusing a closed one in the middle', () => {
    expect(nextWorkspaceId(list())).toBe('w5');
    expect(nextWorkspaceId([])).toBe('w1');
  });

  it('cleans names: one line, trimmed, bounded', () => {
    expect(cleanName('  build\nlogs \t')).toBe('build logs');
    expect([...cleanName('x'.repeat(500))].length).toBe(64);
    expect(renamed(list(), 'w2', ' api ')[1].name).toBe('api');
    expect(renamed(list(), 'w2', ' api ')[0].name).toBe('main');
  });

  it('replaces one layout and keeps the list when nothing changed', () => {
    const l = list();
    expect(withLayout(l, 'w2', l[1].layout)).toBe(l);
    expect(withLayout(l, 'w9', two)).toBe(l);
    expect(withLayout(l, 'w2', two)[1].layout).toBe(two);
  });

  it('moves a pane beside the target focused pane, focused there, leaving the source without it', () => {
    const out = movePane(list(), 'p2', 'w2');
    expect(L.allPanes(out[0].layout)).toEqual(['p1']);
    expect(L.leaves(out[1].layout.root)).toEqual(['p3', 'p2']);
    expect(out[1].layout.focused).toBe('p2');
    expect(L.checkInvariants(out[0].layout)).toEqual([]);
    expect(L.checkInvariants(out[1].layout)).toEqual([]);
  });

  it('moves a minimized pane and into an empty workspace; refuses unknown panes and targets', () => {
    const l = [...list(), makeWorkspace('w5')];
    const out = movePane(l, 'p5', 'w5');
    expect(out[2].layout.minimized).toEqual([]);
    expect(out[3].layout).toMatchObject({ root: { kind: 'leaf', id: 'p5' }, focused: 'p5' });
    expect(movePane(l, 'p9', 'w2')).toBe(l);
    expect(movePane(l, 'p1', 'w9')).toBe(l);
    expect(movePane(l, 'p1', 'w1')).toBe(l);
  });

  it('walks panes workspace by workspace for attention', () => {
    expect(panesByWorkspace(list(), ['p5', 'p4', 'p3', 'p2', 'p1'])).toEqual(['p2', 'p1', 'p3', 'p5', 'p4']);
  });

  it('brings back the last minimized pane of an empty wall', () => {
    const l = L.minimize(two, 'p2');
    const empty = L.close(l, 'p1');
    expect(empty.root).toBeNull();
    expect(L.leaves(unemptied(empty).root)).toEqual(['p2']);
    expect(unemptied(two)).toBe(two);
  });
});

function snapshot(): Snapshot {
  const workspaces = [makeWorkspace('w1', two, 'main'), makeWorkspace('w3', L.split(L.single('p3'), 'p3', 'down', 'p4'))];
  const panes = {
    p1: { ...terminalModel('p1', 't1', '', 'bash', 't1') },
    p2: { ...terminalModel('p2', 't2', '', null, 't2') },
    p3: { ...terminalModel('p3', 't3', '', null, 't3') },
    p4: browserModel('p4', 'http://127.0.0.1:8000/', 'site'),
  };
  return {
    layout: two,
    workspaces,
    active: 'w1',
    renaming: null,
    panes,
    order: ['p1', 'p2', 'p3', 'p4'],
    ready: true,
    menuRequest: null,
    popout: POPOUT_CHECKING,
    liveness: 'up',
    closing: null,
    orphans: [],
    loadError: null,
  };
}

describe('the saved document, version 2', () => {
  it('saves every workspace with its layout, order and focus, and reads back the same walls', () => {
    const s = snapshot();
    const doc = toDoc(s);
    expect(doc.version).toBe(2);
    expect(doc.active).toBe('w1');
    expect(doc.workspaces.map((w) => [w.id, w.name, w.order, w.focus])).toEqual([
      ['w1', 'main', ['p1', 'p2'], 'p2'],
      ['w3', '', ['p3', 'p4'], 'p4'],
    ]);
    const back = parseDoc(JSON.parse(JSON.stringify(doc)));
    expect(back).toEqual(doc);
    const wall = restoreDoc(back!, new Set(['t1', 't2', 't3']));
    expect(wall.workspaces.map((w) => w.id)).toEqual(['w1', 'w3']);
    expect(wall.workspaces[1].layout).toEqual(s.workspaces[1].layout);
    expect(wall.active).toBe('w1');
    expect(wall.order).toEqual(['p1', 'p2', 'p3', 'p4']);
    expect(wall.nextId).toBe(5);
  });

  it('saves the active workspace from the wall on screen', () => {
    const s = snapshot();
    const zoomed = L.toggleZoom(two, 'p1');
    const doc = toDoc({ ...s, layout: zoomed });
    expect(doc.workspaces[0].layout).toEqual(zoomed);
    expect(doc.workspaces[0].focus).toBe('p1');
  });

  it('reads a version-1 document as one workspace', () => {
    const v1 = { version: 1, layout: two, order: ['p2', 'p1'], panes: { p1: { terminalId: 't1', title: '', command: null }, p2: { terminalId: 't2', title: '', command: null } } };
    const d = parseDoc(v1);
    expect(d).toMatchObject({ version: 2, active: 'w1', workspaces: [{ id: 'w1', name: '', order: ['p2', 'p1'], focus: 'p2' }] });
    expect(d!.workspaces[0].layout).toEqual(two);
    expect(restoreDoc(d!, new Set(['t1', 't2'])).order).toEqual(['p2', 'p1']);
  });

  it('drops bad workspaces, a pane claimed twice, and an unknown active; null with none left', () => {
    const good = { id: 'w2', name: 'x\ny', layout: L.single('p1'), order: ['p1'], focus: 'p1' };
    const d = parseDoc({
      version: 2,
      active: 'w7',
      panes: { p1: { terminalId: 't1', title: '', command: null } },
      workspaces: [{ id: 'bad', layout: L.single('p1') }, { id: 'w1', layout: 'no' }, good, { ...good }, { id: 'w3', name: 7, layout: two, order: [], focus: null }, 'w4'],
    });
    expect(d?.workspaces.map((w) => w.id)).toEqual(['w2', 'w3']);
    expect(d?.workspaces[0].name).toBe('x y');
    expect(L.allPanes(d!.workspaces[1].layout)).toEqual(['p2']);
    expect(d?.active).toBe('w2');
    expect(parseDoc({ version: 2, active: 'w1', panes: {}, workspaces: [] })).toBeNull();
    expect(parseDoc({ version: 3, active: 'w1', panes: {}, workspaces: [good] })).toBeNull();
    const many = Array.from({ length: WORKSPACES_MAX + 5 }, (_, i) => ({ id: `w${i + 1}`, name: '', layout: L.single(`p${i + 1}`), order: [], focus: null }));
    expect(parseDoc({ version: 2, active: 'w1', panes: {}, workspaces: many })?.workspaces.length).toBe(WORKSPACES_MAX);
  });

  it('restores without the workspaces whose panes are all gone, and the active one falls back to the first left', () => {
    const doc = toDoc({ ...snapshot(), active: 'w3', layout: snapshot().workspaces[1].layout });
    const wall = restoreDoc(parseDoc(doc)!, new Set(['t3']));
    expect(wall.workspaces.map((w) => w.id)).toEqual(['w3']);
    expect(wall.active).toBe('w3');
    const gone = restoreDoc(parseDoc(toDoc(snapshot()))!, new Set(['t1', 't2']));
    expect(gone.workspaces.map((w) => w.id)).toEqual(['w1', 'w3']);
    const none = restoreDoc(parseDoc({ ...toDoc(snapshot()), active: 'w1' })!, new Set(['t3']));
    expect(none.active).toBe('w3');
  });
});
