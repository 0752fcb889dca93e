import { describe, expect, it } from 'vitest';
import { DesktopNotifier, NOTIFY_MIN_INTERVAL_MS, nextWanting, notificationText } from './attention';

describe('attention', () => {
  it('words each kind', () => {
    expect(notificationText('t1', { kind: 'bell' })).toEqual({ title: 't1', body: 'wants your attention' });
    expect(notificationText('vim', { kind: 'notify', title: 'Build', body: 'done' })).toEqual({ title: 'Build (vim)', body: 'done' });
    expect(notificationText('t2', { kind: 'command_done', command: 'make', exit: 2, duration_ms: 12_400 }).body).toBe('make failed (exit 2) after 12 s');
    expect(notificationText('t2', { kind: 'command_done', command: null, exit: 0, duration_ms: 10_000 }).body).toBe('command succeeded after 10 s');
  });

  it('finds the next pane wanting attention after the focused one, wrapping', () => {
    const wants = new Set(['a', 'd']);
    expect(nextWanting(['a', 'b', 'c', 'd'], 'b', (id) => wants.has(id))).toBe('d');
    expect(nextWanting(['a', 'b', 'c', 'd'], 'd', (id) => wants.has(id))).toBe('a');
    expect(nextWanting(['a', 'b'], null, (id) => wants.has(id))).toBe('a');
    expect(nextWanting(['b', 'c'], 'b', (id) => wants.has(id))).toBe(null);
  });

  it('rate-limits desktop notifications per pane', async () => {
    const shown: string[] = [];
    class FakeNotification {
      static permission = 'granted';
      static requestPermission = async () => 'granted';
      onclick: (() => void) | null = null;
      constructor(title: string) {
        shown.push(title);
      }
      close() {}
    }
    (globalThis as any).Notification = FakeNotification;
    let now = 1000;
    const n = new DesktopNotifier(() => now);
    expect(await n.notify('p1', 'one', '', () => {})).toBe(true);
    expect(await n.notify('p1', 'two', '', () => {})).toBe(false);
    expect(await n.notify('p2', 'other pane', '', () => {})).toBe(true);
    now += NOTIFY_MIN_INTERVAL_MS;
    expect(await n.notify('p1', 'three', '', () => {})).toBe(true);
    expect(shown).toEqual(['one', 'other pane', 'three']);
    expect(n.takeNotified()).toBe(null); // two panes: the human picks
    await n.notify('p3', 'four', '', () => {});
    expect(n.takeNotified()).toBe('p3');
    expect(n.takeNotified()).toBe(null);
    delete (globalThis as any).Notification;
  });
});
