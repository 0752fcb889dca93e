import { describe, expect, it } from 'vitest';
import { NavHistory } from './history';

type Op = ['push' | 'follow', string] | ['step', -1 | 1] | ['expect', -1 | 1];

function run(ops: Op[]) {
  const h = new NavHistory();
  const stepped: Array<string | null> = [];
  for (const op of ops) {
    if (op[0] === 'push') h.push(op[1]);
    else if (op[0] === 'follow') h.follow(op[1]);
    else if (op[0] === 'step') stepped.push(h.step(op[1]));
    else if (op[0] === 'expect') h.expect(op[1]);
  }
  return { ...h.snapshot(), stepped, current: h.current };
}

describe('NavHistory', () => {
  const cases: Array<[string, Op[], { entries: string[]; index: number; stepped?: Array<string | null> }]> = [
    ['empty', [], { entries: [], index: -1 }],
    ['pushes', [['push', 'a'], ['push', 'b']], { entries: ['a', 'b'], index: 1 }],
    ['pushing the current entry is a no-op', [['push', 'a'], ['push', 'a']], { entries: ['a'], index: 0 }],
    ['the page\'s own report of the current URL changes nothing', [['push', 'a'], ['follow', 'a']], { entries: ['a'], index: 0 }],
    ['a link inside the page is pushed', [['push', 'a'], ['follow', 'b']], { entries: ['a', 'b'], index: 1 }],
    ['step back and forward', [['push', 'a'], ['push', 'b'], ['step', -1], ['step', 1]], { entries: ['a', 'b'], index: 1, stepped: ['a', 'b'] }],
    ['no step past either end', [['push', 'a'], ['step', -1], ['step', 1]], { entries: ['a'], index: 0, stepped: [null, null] }],
    ['a push after going back drops the forward entries', [['push', 'a'], ['push', 'b'], ['step', -1], ['push', 'c']], { entries: ['a', 'c'], index: 1, stepped: ['a'] }],
    ['a shim step is settled by its report', [['push', 'a'], ['follow', 'b'], ['expect', -1], ['follow', 'a']], { entries: ['a', 'b'], index: 0 }],
    ['a shim forward step', [['push', 'a'], ['push', 'b'], ['step', -1], ['expect', 1], ['follow', 'b']], { entries: ['a', 'b'], index: 1, stepped: ['a'] }],
    ['a report elsewhere than expected is a new navigation', [['push', 'a'], ['push', 'b'], ['expect', -1], ['follow', 'c']], { entries: ['a', 'b', 'c'], index: 2 }],
    ['the pending step is used once', [['push', 'a'], ['push', 'b'], ['push', 'c'], ['step', -1], ['expect', -1], ['follow', 'a'], ['follow', 'b']], { entries: ['a', 'b'], index: 1, stepped: ['b'] }],
  ];
  for (const [name, ops, want] of cases) {
    it(name, () => {
      const r = run(ops);
      expect({ entries: r.entries, index: r.index }).toEqual({ entries: want.entries, index: want.index });
      if (want.stepped) expect(r.stepped).toEqual(want.stepped);
    });
  }
});

it('peek', () => {
  const h = new NavHistory();
  h.push('a');
  h.push('b');
  expect(h.peek(-1)).toBe('a');
  expect(h.peek(1)).toBeNull();
  expect(h.current).toBe('b');
});
