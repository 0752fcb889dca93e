import { describe, expect, it } from 'vitest';
import { PROMPT_QUEUE_MAX, answeredPrompt, offerPrompt } from './prompts';

describe('new-window requests (issue 22 item 4: all of them are offered)', () => {
  it('asks about each request in turn, oldest first', () => {
    let s = { prompt: null as string | null, queuedPrompts: [] as string[] };
    for (const u of ['http://a/1', 'http://a/2', 'http://a/3']) s = offerPrompt(s, u);
    expect(s).toEqual({ prompt: 'http://a/1', queuedPrompts: ['http://a/2', 'http://a/3'] });
    const asked: (string | null)[] = [];
    for (let i = 0; i < 4; i++) {
      asked.push(s.prompt);
      s = answeredPrompt(s);
    }
    expect(asked).toEqual(['http://a/1', 'http://a/2', 'http://a/3', null]);
  });

  it('keeps at most PROMPT_QUEUE_MAX waiting', () => {
    let s = { prompt: null as string | null, queuedPrompts: [] as string[] };
    for (let i = 0; i < PROMPT_QUEUE_MAX + 5; i++) s = offerPrompt(s, `http://a/${i}`);
    expect(s.prompt).toBe('http://a/0');
    expect(s.queuedPrompts).toHaveLength(PROMPT_QUEUE_MAX);
  });
});
