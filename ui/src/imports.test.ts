// The UI's import structure, drawn from the source: no module reaches itself through its
// imports (type-only imports count: they are arrows a reader follows too), and the api layer
// imports no feature module. Issue 23 found two cycles and an upward arrow; this pins them gone.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = dirname(new URL(import.meta.url).pathname);

/** Every non-test `.ts`/`.tsx` file under `dir`, as absolute paths. */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (/\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** The relative specifiers of `import … from`, `export … from`, `import '…'` and `import('…')` in `src`. */
export function specifiers(src: string): string[] {
  const re = /(?:^|[\s;])(?:import|export)\s[^'";]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;
  const out: string[] = [];
  for (const m of src.matchAll(re)) {
    const s = m[1] ?? m[2] ?? m[3];
    if (s.startsWith('.')) out.push(s);
  }
  return out;
}

function resolveSpec(from: string, spec: string, files: Set<string>): string | undefined {
  const base = resolve(dirname(from), spec);
  for (const c of [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts'), join(base, 'index.tsx')]) if (files.has(c)) return c;
  return undefined;
}

/** The import graph of `ui/src`: file → the files it imports (paths relative to `ui/src`). */
function graph(): Map<string, string[]> {
  const all = sources(ROOT);
  const files = new Set(all);
  const g = new Map<string, string[]>();
  for (const f of all) {
    const deps = specifiers(readFileSync(f, 'utf8'))
      .map((s) => resolveSpec(f, s, files))
      .filter((d): d is string => d !== undefined)
      .map((d) => relative(ROOT, d));
    g.set(relative(ROOT, f), [...new Set(deps)]);
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
