import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AgentActivity } from '../api/protocol';
import { MARK_MS, VERB_LINGER_MS } from './agent';
import { AgentOverlay } from './AgentOverlay';
import type { FitRect } from './input';

/** The few element members the overlay touches, without a DOM. */
class FakeEl {
  className = '';
  dataset: Record<string, string> = {};
  style: Record<string, string> = {};
  attrs: Record<string, string> = {};
  children: FakeEl[] = [];
  parent: FakeEl | null = null;
  setAttribute(k: string, v: string) {
    this.attrs[k] = v;
  }
  append(el: FakeEl) {
    el.parent = this;
    this.children.push(el);
  }
  remove() {
    if (this.parent) this.parent.children = this.parent.children.filter((c) => c !== this);
    this.parent = null;
  }
}

const FIT: FitRect = { x: 10, y: 20, w: 400, h: 300, scale: 0.5 };
const act = (seq: number, acting: boolean, point: { x: number; y: number } | null = { x: 100, y: 60 }): AgentActivity => ({ seq, verb: 'click', acting, point, rect: null });

/** `fit` null: no frame painted yet. */
function setup(fit: FitRect | null = FIT) {
  const host = new FakeEl();
  const verbs: ({ verb: string; acting: boolean } | null)[] = [];
  const overlay = new AgentOverlay(host as unknown as HTMLElement, () => fit ?? undefined, (v) => verbs.push(v));
  return { host, verbs, overlay };
}

describe('AgentOverlay', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.stubGlobal('document', { createElement: () => new FakeEl() });
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it('names the verb while acting and for a moment after, then clears it', () => {
    const { host, verbs, overlay } = setup();
    overlay.activity(act(1, true));
    overlay.activity(act(1, false));
    expect(verbs).toEqual([
      { verb: 'click', acting: true },
      { verb: 'click', acting: false },
    ]);
    vi.advanceTimersByTime(VERB_LINGER_MS - 1);
    expect(host.dataset.agentVerb).toBe('click');
    vi.advanceTimersByTime(1);
    expect(verbs.at(-1)).toBeNull();
    expect(host.dataset.agentVerb).toBeUndefined();
  });

  it('a new action keeps the verb: the linger of the one before is cancelled', () => {
    const { verbs, overlay } = setup();
    overlay.activity(act(1, false));
    vi.advanceTimersByTime(VERB_LINGER_MS - 10);
    overlay.activity(act(2, true));
    vi.advanceTimersByTime(VERB_LINGER_MS);
    expect(verbs.at(-1)).toEqual({ verb: 'click', acting: true });
  });

  it('draws each mark once, through the fit, and removes it after it faded', () => {
    const { host, overlay } = setup();
    overlay.activity(act(1, true));
    overlay.activity(act(1, false)); // same point of the same action: not drawn again
    expect(host.children.length).toBe(1);
    expect(host.dataset.agentMarks).toBe('1');
    const mark = host.children[0];
    expect(mark.dataset.kind).toBe('point');
    // page (100, 60) at scale 0.5 from (10, 20) is (60, 50); the ripple is centred there
    expect(Number.parseFloat(mark.style.left) + Number.parseFloat(mark.style.width) / 2).toBe(60);
    expect(Number.parseFloat(mark.style.top) + Number.parseFloat(mark.style.height) / 2).toBe(50);
    vi.advanceTimersByTime(MARK_MS);
    expect(host.children.length).toBe(0);
  });

  it('draws nothing before the first frame', () => {
    const { host, overlay } = setup(null);
    overlay.activity(act(1, true));
    expect(host.children.length).toBe(0);
  });

  it('after dispose nothing fires and nothing is drawn', () => {
    const { host, verbs, overlay } = setup();
    overlay.activity(act(1, false));
    overlay.dispose();
    vi.advanceTimersByTime(VERB_LINGER_MS + MARK_MS);
    expect(verbs.length).toBe(1);
    expect(host.children.length).toBe(1); // the element goes with the host
    overlay.activity(act(2, true));
    expect(verbs.length).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });
});
