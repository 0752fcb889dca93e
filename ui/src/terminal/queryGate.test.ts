import { describe, expect, it } from 'vitest';
import { CSI_QUERIES, QueryGate, oscIsQuery } from './queryGate';

describe('QueryGate', () => {
  it('answers only live output on the answering client', () => {
    const check = (replaying: boolean, answering: boolean, swallow: boolean) => {
      const g = new QueryGate();
      g.replaying = replaying;
      g.answering = answering;
      expect(g.swallowQuery()).toBe(swallow);
    };
    check(false, true, false);
    check(true, true, true);
    check(false, false, true);
    check(true, false, true);
  });

  it('starts swallowing until the server names this client the answerer', () => {
    expect(new QueryGate().swallowQuery()).toBe(true);
  });

  it('drops focus reports while replaying, never typed keys', () => {
    const g = new QueryGate();
    g.replaying = true;
    expect(g.dropInput('\x1b[I')).toBe(true);
    expect(g.dropInput('\x1b[O')).toBe(true);
    for (const keys of ['a', '\r', '\x1b[A', '\x1b', '\x1b[Ix']) expect(g.dropInput(keys)).toBe(false);
    g.replaying = false;
    expect(g.dropInput('\x1b[I')).toBe(false);
  });
});

describe('query sequences', () => {
  it('OSC colour payloads are queries iff a field is "?"', () => {
    const check = (data: string, want: boolean) => expect(oscIsQuery(data)).toBe(want);
    check('?', true); // OSC 11 ; ?
    check('1;?', true); // OSC 4 ; 1 ; ?
    check('rgb:00/00/00;?', true); // OSC 10 ; set ; query 11
    check('rgb:ff/ff/ff', false);
    check('1;rgb:00/00/00', false);
    check('', false);
    check('??', false);
  });

  it('only report window operations count as CSI t queries', () => {
    const t = CSI_QUERIES.find((q) => q.id.final === 't' && !q.id.prefix)!;
    const check = (params: (number | number[])[], want: boolean) => expect(t.isQuery!(params)).toBe(want);
    check([18], true);
    check([14, 2], true);
    check([16], true);
    check([22, 0], false); // push title
    check([23, 0], false); // pop title
    check([8, 24, 80], false); // resize
    check([], false);
  });

  it('covers the queries xterm.js answers', () => {
    const ids = CSI_QUERIES.map((q) => `${q.id.prefix ?? ''}${q.id.intermediates ?? ''}${q.id.final}`);
    for (const id of ['c', '>c', 'n', '?n', '$p', '?$p', 't']) expect(ids).toContain(id);
  });
});
