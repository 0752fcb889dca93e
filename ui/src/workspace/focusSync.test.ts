import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type Focusable, FocusSync } from './focusSync';

function pane(connected = true) {
  const p = { focused: 0, connected, holds: false };
  const f: Focusable = {
    element: {
      get isConnected() {
        return p.connected;
      },
      contains: () => p.holds,
    },
    focus: () => {
      p.focused++;
    },
  };
  return { p, f };
}

function setup() {
  const term = pane();
  const web = pane();
  const state = { focused: 'p1' as string | null, renaming: false };
  const sync = new FocusSync({
    focused: () => state.focused,
    renaming: () => state.renaming,
    target: (id) => (id === 'p1' ? { focusable: term.f, terminal: true } : id === 'p2' ? { focusable: web.f, terminal: false } : undefined),
    activeElement: () => null,
  });
  return { term: term.p, web: web.p, state, sync };
}

describe('FocusSync', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('focuses the pane focused when the sync runs, once for many requests', async () => {
    const { term, web, state, sync } = setup();
    sync.schedule();
    sync.schedule();
    state.focused = 'p2';
    sync.schedule();
    await vi.advanceTimersByTimeAsync(0);
    expect(web.focused).toBe(1);
    expect(term.focused).toBe(0);
  });

  it('a terminal already holding the keyboard is left alone; one not in the DOM yet is skipped when asked', () => {
    const { term, sync } = setup();
    term.holds = true;
    sync.focusPane('p1', false);
    expect(term.focused).toBe(0);
    term.holds = false;
    term.connected = false;
    sync.focusPane('p1', true);
    expect(term.focused).toBe(0);
    sync.focusPane('p1', false);
    expect(term.focused).toBe(1);
  });

  it('the strip name field keeps the keyboard', async () => {
    const { term, state, sync } = setup();
    state.renaming = true;
    sync.schedule();
    await vi.advanceTimersByTimeAsync(0);
    expect(term.focused).toBe(0);
  });

  it('dispose cancels a pending sync', async () => {
    const { term, sync } = setup();
    sync.schedule();
    sync.dispose();
    await vi.advanceTimersByTimeAsync(10);
    expect(term.focused).toBe(0);
  });
});
