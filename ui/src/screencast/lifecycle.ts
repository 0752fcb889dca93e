// The sidecar browser behind one screencast pane, over HTTP (protocol §8.2): finds the
// persisted one or creates it on the pane's kept profile (retrying while the pane's previous
// browser is still being deleted), runs calls against it, and deletes it when the pane goes.
// Knows nothing of sockets, canvases or the DOM; the API is injected (tests pass a fake).
import { ApiError, type api } from '../api/client';
import type { RestoreTabs } from '../pane/types';
import { DisposableStore } from '../lifecycle/disposable';
import { type ViewportChoice, viewportBody } from './viewport';

/** How often, and how many times, a create refused with `profile_in_use` is asked again (the pane's previous browser is being deleted). */
export const PROFILE_RETRY_MS = 250;
export const PROFILE_RETRIES = 20;

/** The calls the lifecycle makes (a subset of `api`). */
export type LifecycleApi = Pick<typeof api, 'createBrowser' | 'getBrowser' | 'deleteBrowser'>;

export interface LifecycleEvents {
  /** the browser this pane uses changed (persisted so a reloaded UI finds it) */
  onBrowserId: (id: string | null) => void;
  /** finding or creating the browser failed (not reported once disposed) */
  onCreateFailed: (e: unknown) => void;
  /** a call run through `run` failed (not reported once disposed) */
  onCallFailed: (e: unknown) => void;
}

export class BrowserLifecycle {
  private browserId: string | null;
  /** a restored pane's tabs, opened with its browser's creation; null once created */
  private restoreTabs: RestoreTabs | null;
  /** the browser keeps cookies of its own (not the wall's shared login) */
  private readonly isolated: boolean;
  /** the link id of the remote whose network the browser uses; null: this machine */
  private readonly remoteLink: (() => Promise<string>) | null;
  private creating: Promise<string | null> | null = null;
  private readonly store = new DisposableStore();

  constructor(
    private readonly paneId: string,
    opts: { browserId: string | null; restoreTabs?: RestoreTabs | null; isolated?: boolean; remoteLink?: (() => Promise<string>) | null },
    /** where a new browser opens (the pane's URL) and at which viewport, read at creation */
    private readonly target: () => { url: string; viewport: ViewportChoice },
    private readonly events: LifecycleEvents,
    private readonly calls: LifecycleApi,
  ) {
    this.browserId = opts.browserId;
    this.restoreTabs = opts.restoreTabs ?? null;
    this.isolated = opts.isolated ?? false;
    this.remoteLink = opts.remoteLink ?? null;
  }

  /** the browser's id as last known (null: none yet, or forgotten) */
  get id(): string | null {
    return this.browserId;
  }

  /** true iff a find-or-create is in flight */
  get busy(): boolean {
    return this.creating !== null;
  }

  get disposed(): boolean {
    return this.store.isDisposed;
  }

  /**
   * The browser id, creating the browser (or checking the persisted one: a 404 means create
   * anew) first. One at a time: a call while one runs shares its answer. Null on failure
   * (reported through `onCreateFailed`) and once disposed (a browser created meanwhile is deleted).
   */
  ensure(): Promise<string | null> {
    if (this.creating) return this.creating;
    this.creating = (async () => {
      try {
        if (this.browserId) {
          try {
            await this.calls.getBrowser(this.browserId);
            return this.browserId;
          } catch (e) {
            if (!(e instanceof ApiError) || e.status !== 404) throw e;
            this.browserId = null;
          }
        }
        const id = await this.create();
        if (this.disposed) {
          void this.calls.deleteBrowser(id).catch(() => {});
          return null;
        }
        this.browserId = id;
        this.events.onBrowserId(id);
        return id;
      } catch (e) {
        if (!this.disposed) this.events.onCreateFailed(e);
        return null;
      } finally {
        this.creating = null;
      }
    })();
    return this.creating;
  }

  /** The browser id now, or after `ensure()`. */
  async current(): Promise<string | null> {
    return this.browserId ?? (await this.ensure());
  }

  /**
   * Runs `f` against the browser (created first if need be). Nothing runs once disposed; a
   * failure goes to `onCallFailed` (never thrown).
   */
  async run(f: (id: string) => Promise<unknown>): Promise<void> {
    if (this.disposed) return;
    const id = await this.current();
    if (!id || this.disposed) return;
    try {
      await f(id);
    } catch (e) {
      if (!this.disposed) this.events.onCallFailed(e);
    }
  }

  /** The sidecar no longer knows the browser (deleted elsewhere): the next call creates one. */
  forget(): void {
    this.browserId = null;
    this.events.onBrowserId(null);
  }

  /**
   * Creates the pane's browser on its kept profile (keyed by the pane id, protocol §8), in the
   * wall's shared login unless the pane is isolated, with
   * the restored tabs when there are any (then at the first one's URL). A remote pane's
   * browser (`remoteLink`) is created on that link instead, with a profile of its own (no
   * key: the kept profile's cookies are this machine's), isolated (protocol §8). A `409
   * profile_in_use` means this pane's previous browser is still being deleted (a mode switch
   * back and forth): asked again every PROFILE_RETRY_MS, at most PROFILE_RETRIES times.
   */
  private async create(): Promise<string> {
    const { url, viewport } = this.target();
    const r = this.restoreTabs;
    const first = r ? (r.tabs[0] ?? url) : url;
    const own = this.remoteLink
      ? { remote: await this.remoteLink() }
      : this.isolated
        ? { profile: this.paneId, isolated: true }
        : { profile: this.paneId };
    const more = r ? { ...own, tabs: r.tabs.slice(1), active: r.active } : own;
    for (let attempt = 0; ; attempt++) {
      try {
        const id = await this.calls.createBrowser(first, viewportBody(viewport), more);
        this.restoreTabs = null;
        return id;
      } catch (e) {
        if (!(e instanceof ApiError && e.code === 'profile_in_use') || attempt >= PROFILE_RETRIES || this.disposed) throw e;
        await new Promise<void>((done) => this.store.timeout(done, PROFILE_RETRY_MS));
      }
    }
  }

  /** Stops for good and deletes the browser (a create in flight deletes its own when it ends). Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    this.store.dispose();
    const id = this.browserId;
    this.browserId = null;
    if (id) void this.calls.deleteBrowser(id).catch(() => {});
  }
}
