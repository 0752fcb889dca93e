// Opening a terminal's listening ports (the context menu, the dev-server chip): which browser
// pane was opened for a port, and opening one in the mode asked.
import { api } from '../api/client';
import { endpointFor } from '../terminal/endpoint';
import { remoteLinks } from '../remote/links';
import type { ListeningPort } from '../api/protocol';
import type { RenderMode } from '../browser/modes';
import * as L from '../layout/engine';
import { openExternal } from '../ports/external';
import { type PortOpenMode, type PortOrigin, type PortRow, sameOrigin, servingPane } from '../ports/ports';
import type { Snapshot } from './model';

/** What port opening needs from the store. */
export interface PortHost {
  readonly snap: Snapshot;
  openBrowser(ref: L.PaneId | null, url: string, opts: { keepSource?: boolean; origin?: PortOrigin; mode?: RenderMode; remote?: string | null }): L.PaneId | null;
  popOut(id: L.PaneId): void;
  /** focuses pane `id` (restored, its workspace shown) */
  showPane(id: L.PaneId): void;
}

/** The port actions of terminal panes. */
export class PortPanes {
  constructor(
    private readonly host: PortHost,
    /** the link id of `host`'s remote (made on first use) */
    private readonly linkOf: (host: string) => Promise<string> = (h) => remoteLinks.ensure(h).then((l) => l.id),
  ) {}

  /** Asks pane `id`'s terminal for its listening ports (protocol §7). Rejects with an `ApiError`. */
  async listPorts(id: L.PaneId): Promise<ListeningPort[]> {
    const p = this.host.snap.panes[id];
    const t = p?.terminalId;
    if (!t) throw new Error('this pane has no terminal yet');
    return endpointFor(p.remote).ports(t);
  }

  /** The browser pane that was opened for (pane, port, mode), if it is still open. */
  findPortPane(origin: PortOrigin): L.PaneId | null {
    for (const id of this.host.snap.order) {
      const p = this.host.snap.panes[id];
      if (p?.kind === 'browser' && sameOrigin(p.portOrigin, origin)) return id;
    }
    return null;
  }

  /**
   * Opens terminal pane `id`'s port `row` in `mode`. `iframe`: reuses (focuses, restoring a
   * minimized one) the browser pane opened before for the same pane, port and mode; else
   * asks the proxy for a grant first, then splits a browser pane beside the terminal (never
   * replacing it). `popout`: the (pane, port) screencast pane (the browser screencast and
   * pop-out share), placed like `screencast` when there is none, then popped out (the pane
   * shows the stub). `system`: hands the URL to the system browser. A remote pane's port is
   * the remote's `localhost`: its browser pane is on that host's network (the iframe grant
   * and the screencast browser go through its link, protocol §11), and the system browser,
   * which only has this machine's network, is refused. Rejects, with the layout
   * and focus untouched, when the open cannot happen or `cancel.cancelled` was set meanwhile
   * (the menu closed).
   */
  async openPort(id: L.PaneId, row: PortRow, mode: PortOpenMode, cancel: { cancelled: boolean } = { cancelled: false }): Promise<void> {
    const remote = this.host.snap.panes[id]?.remote ?? null;
    if (mode === 'system' && remote) throw new Error(`this port is on ${remote}: open it in the wall (iframe or screencast)`);
    if (mode === 'system') {
      await openExternal(row.url);
      return;
    }
    if (mode === 'popout') {
      if (!this.host.snap.popout.available) throw new Error(this.host.snap.popout.reason ?? 'pop-out is not available');
      const shared: PortOrigin = { pane: id, port: row.port, mode: 'screencast' };
      let pane = this.findPortPane(shared);
      if (pane) this.host.showPane(pane);
      else {
        if (!L.visiblePanes(this.host.snap.layout).includes(id)) throw new Error('the terminal pane is no longer on the wall');
        pane = this.host.openBrowser(id, row.url, { keepSource: true, origin: shared, mode: 'screencast', remote });
        if (!pane) throw new Error("couldn't place a browser pane here");
      }
      this.host.popOut(pane);
      return;
    }
    if (mode !== 'iframe' && mode !== 'screencast') throw new Error(`${mode} is not available yet`);
    const origin: PortOrigin = { pane: id, port: row.port, mode };
    const existing = this.findPortPane(origin);
    if (existing) {
      this.host.showPane(existing);
      return;
    }
    if (mode === 'screencast') {
      // The browser starts when the pane mounts; its failure shows in the pane.
      if (!L.visiblePanes(this.host.snap.layout).includes(id)) throw new Error('the terminal pane is no longer on the wall');
      if (!this.host.openBrowser(id, row.url, { keepSource: true, origin, mode, remote })) throw new Error("couldn't place a browser pane here");
      return;
    }
    // Fails here (blocked address, too many grants, sidecar gone) before anything moves.
    const embedders = [location.origin, ...Array.from(location.ancestorOrigins ?? [])];
    const via = remote ? { remote: (await this.linkOf(remote)) } : {};
    await api.createProxyGrant({ url: row.url, embedders, ...via });
    if (cancel.cancelled) throw new Error('cancelled');
    if (!L.visiblePanes(this.host.snap.layout).includes(id)) throw new Error('the terminal pane is no longer on the wall');
    const again = this.findPortPane(origin);
    if (again) {
      this.host.showPane(again);
      return;
    }
    if (!this.host.openBrowser(id, row.url, { keepSource: true, origin, remote })) throw new Error("couldn't place a browser pane here");
  }

  /**
   * The one terminal pane (visible or minimized) whose processes serve loopback `url`, asking
   * every terminal for its ports; null when none or several do. A terminal whose scan fails
   * counts as serving nothing.
   */
  async findServingPane(url: string): Promise<L.PaneId | null> {
    // Local terminals only: a loopback URL here is this machine's.
    const terminals = this.host.snap.order.filter((id) => this.host.snap.panes[id]?.kind === 'terminal' && this.host.snap.panes[id]?.terminalId && !this.host.snap.panes[id]?.remote);
    const scans = await Promise.all(
      terminals.map(async (paneId) => ({ paneId, ports: await api.terminalPorts(this.host.snap.panes[paneId]!.terminalId!).catch(() => []) })),
    );
    return servingPane(url, scans);
  }
}
