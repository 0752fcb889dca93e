// Paste sanitizing: text pasted into a terminal must not be able to end a bracketed paste
// early (`ESC[201~` inside the text would let the rest run as typed commands).

/** The bracketed-paste markers in their 7-bit (ESC [) and 8-bit (CSI, U+009B) spellings. */
const MARKERS = /(?:\x1b\[|\u009b)20[01]~/g;

/**
 * Removes every bracketed-paste start/end marker from `text`. Removal repeats until none is
 * left, so a marker split around another one (`ESC[20` + `ESC[201~` + `1~`) cannot
 * reassemble. Other text, newlines included, is kept (xterm turns `\n` into `\r`).
 */
export function sanitizePaste(text: string): string {
  let prev: string;
  let cur = text;
  do {
    prev = cur;
    cur = cur.replace(MARKERS, '');
  } while (cur !== prev);
  return cur;
}
