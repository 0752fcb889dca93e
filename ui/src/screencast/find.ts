// Find in page for a screencast pane (issue #22 item 9; protocol §8.4 `find`): the key that
// opens the bar and what the bar says. Pure.
import type { FindAnswer } from '../pane/types';

/**
 * True for the chord that opens find in page, as in Chrome: Ctrl+F (⌘F on macOS), without
 * Alt or Shift (Ctrl+Shift+F is the terminal's find). Reads `code` too, for layouts where
 * the F key types another letter.
 */
export function findChord(e: { key: string; code: string; ctrlKey: boolean; metaKey: boolean; altKey: boolean; shiftKey: boolean }, mac: boolean): boolean {
  if ((mac ? !e.metaKey || e.ctrlKey : !e.ctrlKey || e.metaKey) || e.altKey || e.shiftKey) return false;
  return e.key === 'f' || e.key === 'F' || e.code === 'KeyF';
}

/** The bar's count for the answer to the text now in the field: "2 of 7", "1 of 1000+", "No matches"; "" while that text has no answer yet. */
export function findLabel(text: string, f: FindAnswer | null): string {
  if (!text || !f || f.text !== text) return '';
  if (!f.count) return 'No matches';
  return `${f.index} of ${f.count}${f.capped ? '+' : ''}`;
}
