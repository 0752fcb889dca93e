import { describe, expect, it } from 'vitest';
import { type Decision, type Keystroke, IDLE, PrefixKeys, step } from './prefix';

const k = (key: string, mods: Partial<Keystroke> = {}): Keystroke => ({ key, ctrl: false, alt: false, meta: false, shift: false, ...mods });
const ctrlB = k('b', { ctrl: true });

/** Feeds keys from idle; returns every decision and whether it ends armed. */
function run(keys: Keystroke[]): { decisions: Decision[]; armed: boolean } {
  let s = IDLE;
  const decisions: Decision[] = [];
  for (const key of keys) {
    const r = step(s, key);
    s = r.state;
    decisions.push(r.decision);
  }
  return { decisions, armed: s.armed };
}

const pass: Decision = { kind: 'pass' };
const consume: Decision = { kind: 'consume' };
const act = (action: unknown): Decision => ({ kind: 'action', action } as Decision);

describe('prefix state machine', () => {
  const cases: Array<[string, Keystroke[], Decision[], boolean]> = [
    ['plain keys pass', [k('a'), k('%')], [pass, pass], false],
    ['prefix arms', [ctrlB], [consume], true],
    ['Ctrl-B with shift still arms', [k('B', { ctrl: true, shift: true })], [consume], true],
    ['% splits right (Shift first)', [ctrlB, k('Shift', { shift: true }), k('%', { shift: true })], [consume, consume, act({ kind: 'splitRight' })], false],
    ['" splits down', [ctrlB, k('"', { shift: true })], [consume, act({ kind: 'splitDown' })], false],
    ['arrow focuses', [ctrlB, k('ArrowLeft')], [consume, act({ kind: 'focusDir', dir: 'left' })], false],
    ['o next', [ctrlB, k('o')], [consume, act({ kind: 'focusNext' })], false],
    ['x close', [ctrlB, k('x')], [consume, act({ kind: 'close' })], false],
    ['z zoom', [ctrlB, k('z')], [consume, act({ kind: 'zoom' })], false],
    ['m minimize', [ctrlB, k('m')], [consume, act({ kind: 'minimize' })], false],
    ['{ swap prev', [ctrlB, k('{', { shift: true })], [consume, act({ kind: 'swapPrev' })], false],
    ['} swap next', [ctrlB, k('}', { shift: true })], [consume, act({ kind: 'swapNext' })], false],
    ['b opens a browser', [ctrlB, k('b')], [consume, act({ kind: 'openBrowser' })], false],
    ['> opens the context menu (ports)', [ctrlB, k('>', { shift: true })], [consume, act({ kind: 'contextMenu' })], false],
    ['c makes a workspace', [ctrlB, k('c')], [consume, act({ kind: 'newWorkspace' })], false],
    ['n and p cycle workspaces', [ctrlB, k('n'), ctrlB, k('p')], [consume, act({ kind: 'nextWorkspace' }), consume, act({ kind: 'prevWorkspace' })], false],
    ['1 and 0 select workspaces by number', [ctrlB, k('1'), ctrlB, k('0')], [consume, act({ kind: 'selectWorkspace', digit: 1 }), consume, act({ kind: 'selectWorkspace', digit: 0 })], false],
    ['! moves the pane to a new workspace', [ctrlB, k('!', { shift: true })], [consume, act({ kind: 'breakPane' })], false],
    [', renames and & closes the workspace', [ctrlB, k(','), ctrlB, k('&', { shift: true })], [consume, act({ kind: 'renameWorkspace' }), consume, act({ kind: 'closeWorkspace' })], false],
    ['B (shifted) is not b', [ctrlB, k('B', { shift: true })], [consume, consume], false],
    ['prefix twice sends the prefix', [ctrlB, ctrlB], [consume, act({ kind: 'sendPrefix' })], false],
    ['unknown key cancels and is swallowed', [ctrlB, k('q'), k('q')], [consume, consume, pass], false],
    ['Escape cancels', [ctrlB, k('Escape'), k('x')], [consume, consume, pass], false],
    ['Ctrl-x after prefix is not a binding', [ctrlB, k('x', { ctrl: true })], [consume, consume], false],
    ['Alt-b is not the prefix', [k('b', { ctrl: true, alt: true })], [pass], false],
    ['Ctrl-a is not the prefix', [k('a', { ctrl: true })], [pass], false],
    ['after an action keys pass again', [ctrlB, k('z'), k('z')], [consume, act({ kind: 'zoom' }), pass], false],
  ];
  for (const [name, keys, decisions, armed] of cases) {
    it(name, () => {
      const r = run(keys);
      expect(r.decisions).toEqual(decisions);
      expect(r.armed).toBe(armed);
    });
  }
});

describe('PrefixKeys', () => {
  it('keeps one state across feeds and reports arming changes', () => {
    const seen: boolean[] = [];
    const p = new PrefixKeys((a) => seen.push(a));
    expect(p.feed(k('a'))).toEqual(pass);
    expect(p.feed(ctrlB)).toEqual(consume);
    expect(p.armed).toBe(true);
    expect(p.feed(k('Shift', { shift: true }))).toEqual(consume);
    expect(p.feed(k('%', { shift: true }))).toEqual(act({ kind: 'splitRight' }));
    expect(p.armed).toBe(false);
    expect(seen).toEqual([true, false]);
  });
});
