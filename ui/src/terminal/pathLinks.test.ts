import { describe, expect, it } from 'vitest';
import { editorCommand, findPathRefs } from './pathLinks';

describe('path:line references', () => {
  it('finds compiler, test and grep style references', () => {
    const refs = (t: string) => findPathRefs(t).map((r) => [r.path, r.line, r.col, t.slice(r.start, r.end)]);
    expect(refs('error[E0308]: --> src/main.rs:12:5')).toEqual([['src/main.rs', 12, 5, 'src/main.rs:12:5']]);
    expect(refs('  at ./lib/app.test.ts:40:13)')).toEqual([['./lib/app.test.ts', 40, 13, './lib/app.test.ts:40:13']]);
    expect(refs('README.md:3:## Run it')).toEqual([['README.md', 3, null, 'README.md:3']]);
    expect(refs('/etc/hosts:1 and ~/x/y.py:7')).toEqual([
      ['/etc/hosts', 1, null, '/etc/hosts:1'],
      ['~/x/y.py', 7, null, '~/x/y.py:7'],
    ]);
  });

  it('ignores URLs, addresses, times and versions', () => {
    expect(findPathRefs('http://127.0.0.1:8000/ and localhost:5173')).toEqual([]);
    expect(findPathRefs('at 12:30:01, version 1.2:3')).toEqual([]);
    expect(findPathRefs('file.rs:0')).toEqual([]);
  });

  it('opens the editor with +LINE', () => {
    expect(editorCommand('/a b/c.rs', 7)).toEqual(['sh', '-c', 'exec ${VISUAL:-${EDITOR:-vi}} "+$1" "$2"', 'porthole-edit', '7', '/a b/c.rs']);
  });
});
