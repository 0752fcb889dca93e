// `path:line[:col]` references in terminal output (compiler errors, test failures, grep -n):
// found here, checked against the file system by the sidecar (`resolve`, protocol §4), and
// opened in the user's editor on Ctrl/Cmd+click (DESIGN §13).
//
// Pure: no DOM, no timers.

/** A `path:line[:col]` found in one line of text; `start`/`end` are 0-based, end exclusive (UTF-16 units). */
export interface PathRef {
  start: number;
  end: number;
  path: string;
  line: number;
  col: number | null;
}

// A path: characters common in file names, with a slash or a dot-extension somewhere; then
// :LINE and optionally :COL. Not preceded by ':' or a word character (so no URL's
// `//host:port`, no `a:b:c` tail).
const REF_RE = /(?<![\w:/.~-])((?:~|\.{1,2})?\/?[\w.@+~-]*(?:\/[\w.@+~-]+)*)(?::(\d{1,7}))(?::(\d{1,5}))?(?![\w])/g;

/** The `path:line[:col]` references in `text`, at most `max`, in order. */
export function findPathRefs(text: string, max = 16): PathRef[] {
  const out: PathRef[] = [];
  for (const m of text.matchAll(REF_RE)) {
    const path = m[1];
    if (!path || !(path.includes('/') || /\.[A-Za-z0-9]+$/.test(path))) continue;
    if (/^\d+(\.\d+)*$/.test(path)) continue; // a version or an address, not a file
    const line = Number(m[2]);
    if (line < 1) continue;
    out.push({ start: m.index!, end: m.index! + m[0].length, path, line, col: m[3] ? Number(m[3]) : null });
    if (out.length >= max) break;
  }
  return out;
}

/**
 * The command that opens `file` at `line` in the user's editor (`$VISUAL`, else `$EDITOR`,
 * else `vi`; the `+LINE` argument vi, vim, nano, emacs and micro all take), run by `sh`.
 */
export function editorCommand(file: string, line: number): string[] {
  return ['sh', '-c', 'exec ${VISUAL:-${EDITOR:-vi}} "+$1" "$2"', 'porthole-edit', String(line), file];
}
