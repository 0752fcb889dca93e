import { describe, expect, it } from 'vitest';
import { UI_MESSAGE_MAX_BYTES, UI_PANES_MAX, UI_STRING_MAX_BYTES } from '../api/protocol';
import { type ReportInput, type ReportedPane, buildState, clipUtf8, encodeState, reportedMode, reportedTitle } from './state';

const term = (id: string, over: Partial<ReportedPane> = {}): ReportedPane => ({ id, kind: 'terminal', handle: `t${id.slice(1)}`, terminalId: `t${id.slice(1)}`, title: '', command: 'bash', ...over });
const browser = (id: string, over: Partial<NonNullable<ReportedPane['browser']>> = {}, handle: string | null = null): ReportedPane => ({
  id,
  kind: 'browser',
  handle,
  terminalId: null,
  title: 'ignored for browsers',
  command: null,
  browser: { url: 'http://localhost:8000/', mode: 'iframe', title: 'Page', screencast: null, ...over },
});

const input = (panes: ReportedPane[], over: Partial<ReportInput> = {}): ReportInput => ({
  order: panes.map((p) => p.id),
  panes: Object.fromEntries(panes.map((p) => [p.id, p])),
  minimized: [],
  focused: panes[0]?.id ?? null,
  active: true,
  ...over,
});

describe('buildState', () => {
  it('reports every pane in creation order with its handle, kind, terminal, title, url, mode and minimized', () => {
    const s = buildState(
      input([term('p1', { title: 'vim notes' }), browser('p2', {}, 'b1'), term('p3', { handle: 't3', terminalId: 't7' })], { minimized: ['p2'], focused: 'p3', active: false }),
    );
    expect(s).toEqual({
      type: 'state',
      active: false,
      focused: 'p3',
      panes: [
        { id: 'p1', handle: 't1', kind: 'terminal', terminal: 't1', title: 'vim notes', url: null, mode: null, minimized: false, browser: null },
        { id: 'p2', handle: 'b1', kind: 'browser', terminal: null, title: 'Page', url: 'http://localhost:8000/', mode: 'iframe', minimized: true, browser: null },
        // restarted: the handle stays, the terminal is the new one
        { id: 'p3', handle: 't3', kind: 'terminal', terminal: 't7', title: 'bash', url: null, mode: null, minimized: false, browser: null },
      ],
    });
  });

  it('reports the sidecar browser id of screencast and popped-out panes only', () => {
    const s = buildState(
      input([
        browser('p1', { mode: 'screencast', screencast: { poppedOut: false }, browserId: 'b7' }),
        browser('p2', { mode: 'screencast', screencast: { poppedOut: true }, browserId: 'b8' }),
        browser('p3', { mode: 'screencast', screencast: { poppedOut: false }, browserId: null }),
        browser('p4', { browserId: 'b9' }),
      ]),
    );
    expect(s.panes.map((p) => p.browser)).toEqual(['b7', 'b8', null, null]);
  });

  it('follows the order, not the record', () => {
    const i = input([term('p1'), term('p2')]);
    expect(buildState({ ...i, order: ['p2', 'p1'] }).panes.map((p) => p.id)).toEqual(['p2', 'p1']);
  });

  it('skips ids with no pane, and a focused id that is not reported is null', () => {
    const i = input([term('p1')]);
    expect(buildState({ ...i, order: ['p1', 'p9'], focused: 'p9' })).toMatchObject({ focused: null, panes: [{ id: 'p1' }] });
  });

  it('a browser with no URL yet reports null; a terminal not started yet has no handle or terminal', () => {
    const s = buildState(input([browser('p1', { url: '', title: '' }), term('p2', { handle: null, terminalId: null, command: null })]));
    expect(s.panes[0]).toMatchObject({ url: null, handle: null, title: '' });
    expect(s.panes[1]).toMatchObject({ handle: null, terminal: null, title: '' });
  });

  it(`reports at most ${UI_PANES_MAX} panes`, () => {
    const many = Array.from({ length: UI_PANES_MAX + 5 }, (_, i) => term(`p${i + 1}`));
    expect(buildState(input(many)).panes).toHaveLength(UI_PANES_MAX);
  });

  it('cuts long strings to the byte bound', () => {
    const s = buildState(input([term('p1', { title: 'é'.repeat(UI_STRING_MAX_BYTES) })]));
    expect(new TextEncoder().encode(s.panes[0].title).length).toBe(UI_STRING_MAX_BYTES);
  });
});

describe('reportedMode and reportedTitle', () => {
  const cases: Array<[string, ReportedPane, string | null, string]> = [
    ['terminal', term('p1', { title: '' }), null, 'bash'],
    ['terminal with an OSC title', term('p1', { title: 'htop' }), null, 'htop'],
    ['terminal with nothing', term('p1', { title: '', command: null }), null, ''],
    ['iframe', browser('p1'), 'iframe', 'Page'],
    ['screencast', browser('p1', { mode: 'screencast', screencast: { poppedOut: false } }), 'screencast', 'Page'],
    ['popped-out screencast', browser('p1', { mode: 'screencast', screencast: { poppedOut: true } }), 'popout', 'Page'],
  ];
  for (const [name, pane, mode, title] of cases) {
    it(name, () => {
      expect(reportedMode(pane)).toBe(mode);
      expect(reportedTitle(pane)).toBe(title);
    });
  }
});

describe('clipUtf8', () => {
  const cases: Array<[string, string, number, string]> = [
    ['short stays', 'abc', 8, 'abc'],
    ['ascii cut', 'abcdef', 4, 'abcd'],
    ['never half a two-byte character', 'ééé', 5, 'éé'],
    ['never half a surrogate pair', '😀😀', 6, '😀'],
    ['zero', 'abc', 0, ''],
  ];
  for (const [name, s, n, want] of cases) it(name, () => expect(clipUtf8(s, n)).toBe(want));
});

describe('encodeState', () => {
  it('is the state as JSON', () => {
    const i = input([term('p1')]);
    expect(JSON.parse(encodeState(i))).toEqual(buildState(i));
  });
  it('stays within the message bound when the panes carry huge titles', () => {
    const many = Array.from({ length: UI_PANES_MAX }, (_, i) => term(`p${i + 1}`, { title: 'x'.repeat(UI_STRING_MAX_BYTES) }));
    const text = encodeState(input(many));
    expect(new TextEncoder().encode(text).length).toBeLessThanOrEqual(UI_MESSAGE_MAX_BYTES);
    expect(JSON.parse(text).panes).toHaveLength(UI_PANES_MAX);
  });
});

describe('buildState: workspaces', () => {
  it("reports each pane's workspace number when the store gives one, and nothing otherwise", () => {
    const panes = {
      p1: { id: 'p1', kind: 'terminal' as const, handle: 't1', terminalId: 't1', title: '', command: null },
      p2: { id: 'p2', kind: 'terminal' as const, handle: 't2', terminalId: 't2', title: '', command: null },
    };
    const s = buildState({ order: ['p1', 'p2'], panes, minimized: [], focused: 'p1', active: true, workspaces: { p1: 1, p2: 3 } });
    expect(s.panes.map((p) => p.workspace)).toEqual([1, 3]);
    const none = buildState({ order: ['p1'], panes, minimized: [], focused: 'p1', active: true });
    expect(none.panes[0]).not.toHaveProperty('workspace');
  });
});
