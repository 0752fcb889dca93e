// The one owner of the configuration in the UI: the last snapshot the sidecar sent, the
// desktop's colour scheme, and who is told when either changes (every terminal host, the
// banner, the prefix keys). Snapshots come from `GET /api/config` at start and from the UI
// channel's `config` messages (protocol §10).
import type { RendererSetting } from '../terminal/renderer';
import type { Scheme } from '../terminal/theme';
import { type ConfigSnapshot, DEFAULT_CONFIG, type TerminalOptions, type UiConfig, parseSnapshot, terminalOptions } from './config';

export interface SettingsView {
  config: UiConfig;
  /** the desktop's preference (`prefers-color-scheme`) */
  system: Scheme;
  /** the snapshot last applied; null until the sidecar answered */
  snapshot: ConfigSnapshot | null;
}

export class Settings {
  private view: SettingsView;
  private listeners = new Set<() => void>();

  constructor(system: Scheme) {
    this.view = { config: DEFAULT_CONFIG, system, snapshot: null };
  }

  subscribe = (l: () => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };
  getSnapshot = () => this.view;

  /** The configuration in force. */
  get config(): UiConfig {
    return this.view.config;
  }

  /** xterm.js options for the configuration in force and the desktop's scheme. */
  terminalOptions(): TerminalOptions {
    return terminalOptions(this.view.config, this.view.system);
  }

  /** `terminal.renderer` in force. */
  terminalRenderer(): RendererSetting {
    return this.view.config.terminalRenderer;
  }

  /**
   * Applies a snapshot from the sidecar (unparsed JSON); a malformed one or an older revision
   * than the one in force is dropped. Returns true if and only if it was applied.
   */
  apply(raw: unknown): boolean {
    const snap = parseSnapshot(raw);
    if (!snap) return false;
    const prev = this.view.snapshot;
    if (prev && prev.file === snap.file && snap.revision < prev.revision) return false;
    this.set({ snapshot: snap, config: snap.config });
    return true;
  }

  setSystemScheme(system: Scheme) {
    if (system !== this.view.system) this.set({ system });
  }

  private set(next: Partial<SettingsView>) {
    this.view = { ...this.view, ...next };
    for (const l of [...this.listeners]) l();
  }
}
