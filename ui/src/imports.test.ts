// The UI's import structure, drawn from the source: no module reaches itself through its
// imports (type-only imports count: they are arrows a reader follows too), and the api layer
// imports no feature module. Issue 23 found two cycles and an upward arrow; this pins them gone.
import { describe, expect, it } from 'vitest';

/** Every source file under `ui/src` with its text, keyed `dir/file.ts` (Vite reads them for the test). */
const SOURCES: Record<string, string> = Object.fromEntries(
  Object.entries(import.meta.glob(['./**/*.ts', './**/*.tsx', '!./**/*.test.ts', '!./**/*.d.ts'], { query: '?raw', import: 'default', eager: true }) as Record<string, string>).map(([k, v]) => [
    k.replace(/^\.\//, ''),
    v,
  ]),
);

/** `dir/file.ts` joined with a relative specifier, `..` and `.` resolved (POSIX). */
function join(from: string, spec: string): string {
  const parts = from.split('/').slice(0, -1);
  for (const p of spec.split('/')) {
    if (p === '..') parts.pop();
    else if (p !== '.') parts.push(p);
  }
  return parts.join('/');
}

/** The relative specifiers of `import … from`, `export … from`, `import '…'` and `import('…')` in `src`. */
function specifiers(src: string): string[] {
  const re = /(?:^|[\s;])(?:import|export)\s[^'";]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;
  const out: string[] = [];
  for (const m of src.matchAll(re)) {
    const s = m[1] ?? m[2] ?? m[3];
    if (s.startsWith('.')) out.push(s);
  }
  return out;
}

function resolveSpec(from: string, spec: string): string | undefined {
  const base = join(from, spec);
  for (const c of [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`, `${base}/index.tsx`]) if (c in SOURCES) return c;
  return undefined;
}

/** The import graph of `ui/src`: file → the files it imports (paths relative to `ui/src`). */
function graph(): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const [f, text] of Object.entries(SOURCES)) {
    const deps = specifiers(text)
      .map((s) => resolveSpec(f, s))
      .filter((d): d is string => d !== undefined);
    g.set(f, [...new Set(deps)]);
  }
  return g;
}

/** The strongly connected components with more than one file, or a file importing itself (Tarjan). */
function cycles(g: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    on.add(v);
    for (const w of g.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (g.get(v) ?? []).includes(v)) out.push(scc.sort());
    }
  };
  for (const v of g.keys()) if (!idx.has(v)) visit(v);
  return out;
}

describe('import structure of ui/src', () => {
  it('the parser sees every kind of import', () => {
    const src = `import a from './a';\nimport type { B } from "../b";\nexport { c } from './c';\nimport './d.css';\nconst e = import('./e');\nimport x from 'react';`;
    expect(specifiers(src)).toEqual(['./a', '../b', './c', './d.css', './e']);
  });

  it('the cycle finder finds a cycle', () => {
    const g = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(cycles(g)).toEqual([['a', 'b', 'c']]);
  });

  it('has no import cycle', () => {
    const g = graph();
    expect(g.size).toBeGreaterThan(50);
    expect(cycles(g)).toEqual([]);
  });

  it('the api layer imports no feature module (only api/ and the lifecycle/ leaf)', () => {
    const allowed = (d: string) => d.startsWith('api/') || d.startsWith('lifecycle/');
    const upward = [...graph()].filter(([f]) => f.startsWith('api/')).flatMap(([f, deps]) => deps.filter((d) => !allowed(d)).map((d) => `${f} → ${d}`));
    expect(upward).toEqual([]);
  });

  it('lifecycle/ is a leaf: it imports nothing of the UI', () => {
    const out = [...graph()].filter(([f]) => f.startsWith('lifecycle/')).flatMap(([f, deps]) => deps.filter((d) => !d.startsWith('lifecycle/')).map((d) => `${f} → ${d}`));
    expect(out).toEqual([]);
  });
});
