// The new-window requests of an embedded page (shim `open-window`, protocol §6.5): the pane
// asks about one at a time, and every request waits its turn (a browser would open each).
// Pure: the store applies the results to the pane's view.

/** Most requests kept waiting behind the one asked about; later ones are dropped (a page opening windows in a loop). */
export const PROMPT_QUEUE_MAX = 16;

/** The part of a browser pane's view the requests live in. */
export interface PromptState {
  /** the request the pane is asking about (null: none) */
  prompt: string | null;
  /** requests waiting behind it, oldest first */
  queuedPrompts: string[];
}

/** `s` with the page's request to open `url` added: asked about now if nothing is, else queued (up to PROMPT_QUEUE_MAX). */
export function offerPrompt(s: PromptState, url: string): PromptState {
  if (s.prompt === null) return { prompt: url, queuedPrompts: s.queuedPrompts };
  if (s.queuedPrompts.length >= PROMPT_QUEUE_MAX) return s;
  return { prompt: s.prompt, queuedPrompts: [...s.queuedPrompts, url] };
}

/** `s` once the request asked about is answered: the next one waiting is asked about. */
export function answeredPrompt(s: PromptState): PromptState {
  const [next, ...rest] = s.queuedPrompts;
  return { prompt: next ?? null, queuedPrompts: rest };
}
