import { describe, expect, it } from 'vitest';
import { LISTENING_HINT_KEY, ListeningHint, listeningHintText } from './hint';

function memory(): Map<string, string> & { getItem(k: string): string | null; setItem(k: string, v: string): void } {
  const m = new Map<string, string>() as Map<string, string> & { getItem(k: string): string | null; setItem(k: string, v: string): void };
  m.getItem = (k) => m.get(k) ?? null;
  m.setItem = (k, v) => void m.set(k, v);
  return m;
}

describe('the listening-port hint', () => {
  it('is pending until done, then stays done for a new page on the same storage', () => {
    const storage = memory();
    const first = new ListeningHint(storage);
    expect(first.pending).toBe(true);
    let told = 0;
    first.subscribe(() => told++);
    first.done();
    first.done();
    expect(first.pending).toBe(false);
    expect(told).toBe(1);
    expect(storage.get(LISTENING_HINT_KEY)).toBe('done');
    expect(new ListeningHint(storage).pending).toBe(false);
  });

  it('works for this page when the storage throws or is missing', () => {
    const broken = { getItem: () => { throw new Error('denied'); }, setItem: () => { throw new Error('denied'); } };
    const hint = new ListeningHint(broken);
    expect(hint.pending).toBe(true);
    hint.done();
    expect(hint.pending).toBe(false);
    expect(new ListeningHint(null).pending).toBe(true);
  });

  it('names the port and the right-click', () => {
    expect(listeningHintText(8000)).toBe('A server is listening on :8000. Right-click the terminal (or click the chip) to open it in a browser pane.');
  });
});
