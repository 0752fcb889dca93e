// Attention (DESIGN §13): a pane whose program rings (bell, OSC 9/777/99) or whose long
// command ended while the human looked elsewhere gets a badge, and, while the window itself
// is not focused, a desktop notification whose click brings the human to that pane.
import type { Attention } from '../api/protocol';

/**
 * At most one desktop notification per pane this often, in ms (the sidecar already sends at
 * most one attention event per second per terminal; a desktop wants fewer).
 */
export const NOTIFY_MIN_INTERVAL_MS = 10_000;

/** The notification's title and body for attention `a` from the pane labelled `label`. */
export function notificationText(label: string, a: Attention): { title: string; body: string } {
  switch (a.kind) {
    case 'bell':
      return { title: label, body: 'wants your attention' };
    case 'notify':
      return { title: a.title ? `${a.title} (${label})` : label, body: a.body };
    case 'command_done': {
      const secs = Math.round(a.duration_ms / 1000);
      const how = a.exit === null ? 'finished' : a.exit === 0 ? 'succeeded' : `failed (exit ${a.exit})`;
      return { title: label, body: `${a.command ?? 'command'} ${how} after ${secs} s` };
    }
  }
}

/** The next pane after `focused` in `order` (wrapping) that wants attention, or null. */
export function nextWanting(order: readonly string[], focused: string | null, wants: (id: string) => boolean): string | null {
  const start = focused ? order.indexOf(focused) : -1;
  for (let k = 1; k <= order.length; k++) {
    const id = order[(start + k + order.length) % order.length];
    if (id !== undefined && wants(id)) return id;
  }
  return null;
}

/**
 * Desktop notifications through the Notification API (web mode; permission asked on first
 * use), rate-limited per pane. `now` is injectable for tests.
 */
export class DesktopNotifier {
  private last = new Map<string, number>();
  /** panes notified since `takeNotified` was last called (the window was away) */
  private notified = new Set<string>();

  constructor(private readonly now: () => number = () => Date.now()) {}

  /**
   * Shows a notification for pane `paneId` unless one was shown for it less than
   * NOTIFY_MIN_INTERVAL_MS ago or notifications are denied. `onClick` runs when it is clicked.
   * Resolves to true if and only if one was shown.
   */
  async notify(paneId: string, title: string, body: string, onClick: () => void): Promise<boolean> {
    const N = typeof Notification === 'undefined' ? null : Notification;
    if (!N) return false;
    const t = this.now();
    const prev = this.last.get(paneId);
    if (prev !== undefined && t - prev < NOTIFY_MIN_INTERVAL_MS) return false;
    this.last.set(paneId, t);
    let permission = N.permission;
    if (permission === 'default') permission = await N.requestPermission().catch(() => 'denied' as NotificationPermission);
    if (permission !== 'granted') return false;
    this.notified.add(paneId);
    const n = new N(title, { body, tag: `porthole-${paneId}` });
    n.onclick = () => {
      window.focus();
      onClick();
      n.close();
    };
    return true;
  }

  /**
   * The one pane notified since the last call, or null when none or several were (the
   * human then picks); clears the record.
   */
  takeNotified(): string | null {
    const only = this.notified.size === 1 ? [...this.notified][0] : null;
    this.notified.clear();
    return only;
  }

  /** Forgets pane `paneId` (closed). */
  forget(paneId: string) {
    this.last.delete(paneId);
  }
}
