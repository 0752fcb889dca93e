import { describe, expect, it } from 'vitest';
import { textChunks } from './input';
import { queueInput } from './ViewerSession';

describe('held input', () => {
  it('keeps every key and click in order and coalesces only runs of moves', () => {
    const q: object[] = [];
    const mv = (x: number, button = 'none') => ({ type: 'input_mouse', event: 'move', x, y: 0, button, modifiers: 0 });
    const key = (k: string) => ({ type: 'input_keyboard', event: 'down', key: k, code: '', text: k, modifiers: 0 });
    queueInput(q, mv(1));
    queueInput(q, mv(2));
    queueInput(q, key('a'));
    queueInput(q, key('a'));
    queueInput(q, mv(3));
    queueInput(q, mv(4, 'left'));
    queueInput(q, mv(5, 'left'));
    expect(q).toEqual([mv(2), key('a'), key('a'), mv(3), mv(5, 'left')]);
  });

  it('splits a paste on code points under the message cap, losing nothing', () => {
    const text = '𝄞é'.repeat(10_000) + 'x';
    const parts = textChunks(text);
    expect(parts.join('')).toBe(text);
    expect(parts.length).toBe(3);
    for (const p of parts) expect(Array.from(p).length).toBeLessThanOrEqual(8192);
    expect(new TextEncoder().encode(JSON.stringify({ type: 'input_text', text: parts[0] })).length).toBeLessThan(64 * 1024);
    expect(textChunks('')).toEqual([]);
  });
});
