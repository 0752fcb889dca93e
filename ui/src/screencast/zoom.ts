// Page zoom steps of a screencast pane (Ctrl+= / Ctrl+- / Ctrl+0), Chromium's own levels.

/** The zoom factors Ctrl+= and Ctrl+- step through (Chromium's presets, 25 %..500 %). */
export const ZOOM_LEVELS = [0.25, 0.33, 0.5, 0.67, 0.75, 0.8, 0.9, 1, 1.1, 1.25, 1.5, 1.75, 2, 2.5, 3, 4, 5] as const;

/** The next level above (`dir` 1) or below (-1) `current`; stays at either end. */
export function stepZoom(current: number, dir: 1 | -1): number {
  if (dir > 0) return ZOOM_LEVELS.find((z) => z > current + 1e-6) ?? ZOOM_LEVELS[ZOOM_LEVELS.length - 1];
  return [...ZOOM_LEVELS].reverse().find((z) => z < current - 1e-6) ?? ZOOM_LEVELS[0];
}

/**
 * The zoom a key press asks for: Ctrl (⌘ on macOS) with `=`/`+` zooms in, `-` out, `0`
 * resets; null for any other key. Reads `key` and, for layouts where `=` needs Shift, `code`.
 */
export function zoomChord(e: { key: string; code: string; ctrlKey: boolean; metaKey: boolean; altKey: boolean }, mac: boolean, current: number): number | null {
  if ((mac ? !e.metaKey : !e.ctrlKey) || e.altKey) return null;
  if (e.key === '=' || e.key === '+' || e.code === 'Equal' || e.code === 'NumpadAdd') return stepZoom(current, 1);
  if (e.key === '-' || e.code === 'Minus' || e.code === 'NumpadSubtract') return stepZoom(current, -1);
  if (e.key === '0' || e.code === 'Digit0' || e.code === 'Numpad0') return 1;
  return null;
}

/** `1.25` → `125%`. */
export function zoomLabel(z: number): string {
  return `${Math.round(z * 100)}%`;
}

/**
 * The page zoom a screencast pane shows: the last factor sent, else the one the sidecar last
 * reported. While presses of ours are on their way, an echo of an earlier one is not the
 * truth: the sidecar applies them in order and its last word is the last factor sent.
 */
export class ZoomState {
  private factor = 1;
  /** the last factor sent that the sidecar has not reported back yet */
  private sent: number | null = null;

  /** the factor to show (1 = none) */
  get current(): number {
    return this.factor;
  }

  /**
   * Asks for `factor`: `send` carries it to the sidecar and returns whether it went. Taken at
   * once when it went, so presses faster than the sidecar's answer step from each other.
   * Returns true iff it was sent (never for the factor already current).
   */
  request(factor: number, send: (factor: number) => boolean): boolean {
    if (factor === this.factor || !send(factor)) return false;
    this.factor = factor;
    this.sent = factor;
    return true;
  }

  /** The sidecar reported `factor`. Returns true iff it is now the one to show. */
  reported(factor: number): boolean {
    if (this.sent !== null && factor !== this.sent) return false;
    this.sent = null;
    this.factor = factor;
    return true;
  }

  /** A new socket: nothing sent on it is outstanding. */
  reconnected(): void {
    this.sent = null;
  }
}
