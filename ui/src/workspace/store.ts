// The workspace: layout state + pane models + runtimes, persisted to the sidecar.
//
// React reads immutable snapshots (useSyncExternalStore); every change goes through a
// method here. Components never reach a runtime's socket.
import { ApiError, api } from '../api/client';
import { type Liveness, LivenessWatch, probeHealth } from '../api/liveness';
import { type Attention, BROWSER_HANDLE_RE, type ListeningPort, type ShellState, type Survivor, type TerminalInfo, type UiRequest } from '../api/protocol';
import { type BrowserView, BrowserRuntime } from '../browser/BrowserRuntime';
import { type RenderMode, modeForUrl } from '../browser/modes';
import { EMPTY_SCREENCAST, ScreencastRuntime, type ScreencastState, chromiumStopped } from '../screencast/ScreencastRuntime';
import { PANE_VIEWPORT, type ViewportChoice } from '../screencast/viewport';
import { type PaneKind, decidePlacement } from '../browser/placement';
import { grantKeepaliveMs } from '../browser/keepalive';
import { GrantRegistry, routeShimMessage } from '../browser/shim';
import { iframeRefusal, isHttpUrl, isLoopbackHost } from '../browser/url';
import { Refused } from '../control/messages';
import { besidePane, planSplit, roomBeside } from '../control/place';
import { encodeState } from '../control/state';
import { UiChannel } from '../control/UiChannel';
import { type PortOpenMode, type PortOrigin, type PortRow, sameOrigin, servingPane } from '../ports/ports';
import { openExternal } from '../ports/external';
import { POPOUT_CHECKING, type PopoutOffer, popoutOffer } from '../browser/popout';
import * as L from '../layout/engine';
import { type Action, type Decision, type Keystroke, PrefixKeys } from '../keys/prefix';
import type { Settings } from '../config/Settings';
import { type SavedPane, type WorkspaceDoc, parseDoc } from './doc';
import { type PaneStatus, PaneRuntime, type SpawnOptions, commandTitle } from './PaneRuntime';
import { DesktopNotifier, nextWanting, notificationText } from './attention';
import { paneLabel } from './label';
import { editorCommand } from '../terminal/pathLinks';
import { writeClipboard } from '../clipboard';
import { type Orphan, closeReasons, findOrphans } from './survivors';
import { RestorePlan, parseProblem, reportProblem } from './restore';

export interface PaneModel {
  id: L.PaneId;
  kind: PaneKind;
  /**
   * the pane's handle for `ph` (protocol §9.2), stable for the pane's life: a terminal pane's
   * is the id of the first terminal it ran (null until that exists); a browser pane's is
   * the `bN` the sidecar assigned (null until it has)
   */
  handle: string | null;
  /** the pane's terminal (terminal panes; null until it exists, always null for browsers) */
  terminalId: string | null;
  /** OSC title, else the command, else '' */
  title: string;
  command: string | null;
  status: PaneStatus;
  exitCode: number | null;
  /** the find bar is open */
  finding?: boolean;
  /** browser panes: what the pane shows */
  browser?: BrowserView;
  /** browser panes: bumped to ask the header to open (and focus) the URL field */
  editNonce?: number;
  /** browser panes opened from a terminal's port (context menu): which one; reuse looks it up */
  portOrigin?: PortOrigin;
  /** terminal panes, once exited: the processes still running in the terminal's session */
  survivors?: Survivor[];
  /**
   * terminal panes: earlier terminals of this pane kept registered at a restart because
   * processes of their sessions still ran; deleted when those end (swept) or the pane closes
   */
  kept?: string[];
  /** what still runs in the `kept` terminals, as last swept */
  keptSurvivors?: Survivor[];
  /** terminal panes: what the shell's integration reported (protocol §5.3) */
  shell?: ShellState | null;
  /** terminal panes without shell integration: the foreground program while one other than the shell runs */
  foreground?: string | null;
  /** something in the pane wants the human (cleared when the pane is focused) */
  attention?: boolean;
}

/** A close that waits for the user's answer: the pane and why it asks (one line per reason). */
export interface CloseQuestion {
  paneId: L.PaneId;
  reasons: string[];
}

export interface Snapshot {
  layout: L.LayoutState;
  panes: Record<L.PaneId, PaneModel>;
  /** every pane in creation order: the stable render order (never re-sorted) */
  order: L.PaneId[];
  ready: boolean;
  /** bumped to ask the wall to open pane `paneId`'s context menu from the keyboard (Ctrl-b p) */
  menuRequest: { paneId: L.PaneId; nonce: number } | null;
  /** whether "Pop out" can be chosen (`GET /api/capabilities`, asked at start and whenever a menu offering it opens) */
  popout: PopoutOffer;
  /** whether Porthole still answers (asked after a pane's connection drops); not `up` covers the wall */
  liveness: Liveness;
  /** a close waiting for the user's answer (the pane's program is busy or its processes still run) */
  closing: CloseQuestion | null;
  /** running terminals no pane showed when this window started (offered: Show, Stop) */
  orphans: Orphan[];
}

/** A browser pane's renderer: the iframe one or the screencast one (same surface for the store). */
type BrowserRenderer = BrowserRuntime | ScreencastRuntime;

const EMPTY_BROWSER: BrowserView = {
  url: '',
  mode: 'iframe',
  title: '',
  view: 'empty',
  message: null,
  loading: false,
  uninstrumented: false,
  blocked: null,
  prompt: null,
  viewport: PANE_VIEWPORT,
  browserId: null,
  screencast: null,
};

export const GAP_PX = 6;
export const MIN_PANE_PX = 80;
const SAVE_DEBOUNCE_MS = 300;
/** How often a visible app asks whether Porthole still answers, besides after a drop. */
const LIVENESS_EVERY_MS = 10_000;
/** How often the terminals panes keep for their survivors are checked (and deleted once nothing runs in them). */
const KEPT_SWEEP_MS = 5_000;

export class WorkspaceStore {
  private snap: Snapshot;
  private listeners = new Set<() => void>();
  private runtimes = new Map<L.PaneId, PaneRuntime>();
  private browsers = new Map<L.PaneId, BrowserRenderer>();
  /** each browser pane's body slot (where its renderer's element is mounted) */
  private slots = new Map<L.PaneId, HTMLElement>();
  /** proxy grants held by open iframe panes: the only origins shim messages are accepted from */
  readonly grants = new GrantRegistry();
  private nextId = 1;
  private wall: L.Rect = { x: 0, y: 0, w: 1, h: 1 };
  private saveTimer: ReturnType<typeof setTimeout> | null = null;
  private lastSaved = '';
  private focusTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly liveness = new LivenessWatch(probeHealth, (liveness) => this.set({ liveness }));
  /** the prefix machine: the window's keydowns and the keys framed pages forward share it */
  private readonly prefix = new PrefixKeys(
    (armed) => document.body.classList.toggle('prefix-armed', armed),
    () => this.settings.config,
  );
  /** the UI channel (protocol §10): opened once the wall is restored, for the app's life */
  private channel: UiChannel | null = null;
  private readonly notifier = new DesktopNotifier();

  /** The user's configuration (its own module; the store only hands it to panes and the channel). */
  constructor(readonly settings: Settings) {
    this.snap = { layout: L.EMPTY_LAYOUT, panes: {}, order: [], ready: false, menuRequest: null, popout: POPOUT_CHECKING, liveness: 'up', closing: null, orphans: [] };
  }

  // --- external store protocol
  subscribe = (l: () => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };
  getSnapshot = () => this.snap;

  private set(next: Partial<Snapshot>) {
    const prevFocus = this.snap.layout.focused;
    this.snap = { ...this.snap, ...next };
    for (const l of [...this.listeners]) l();
    if (this.snap.ready) this.scheduleSave();
    this.channel?.changed();
    const f = this.snap.layout.focused;
    if (f !== prevFocus) {
      // Move the keyboard at once when the pane is already shown (keys typed right after a
      // focus change must land there), and again once React has rendered the change.
      if (f) this.focusKeyboard(f, true);
      this.scheduleFocusSync();
    }
  }

  /** Gives the keyboard to pane `id` unless it already has it (`connectedOnly`: skip a pane not in the DOM yet). */
  private focusKeyboard(id: L.PaneId, connectedOnly: boolean) {
    const host = this.runtimes.get(id)?.host;
    if (host) {
      if (connectedOnly && !host.element.isConnected) return;
      if (!host.element.contains(document.activeElement)) host.focus();
      return;
    }
    const b = this.browsers.get(id);
    if (b && b.element.isConnected) b.focus();
  }

  /**
   * Gives the keyboard focus to the focused pane's terminal, after the DOM settled. It reads
   * the focused pane when it runs (not when scheduled), so focus events cannot ping-pong.
   */
  private scheduleFocusSync() {
    if (this.focusTimer) return;
    this.focusTimer = setTimeout(() => {
      this.focusTimer = null;
      const f = this.snap.layout.focused;
      if (f) this.focusKeyboard(f, false);
    }, 0);
  }

  private setLayout(layout: L.LayoutState, extra: Partial<Snapshot> = {}) {
    if (layout === this.snap.layout && Object.keys(extra).length === 0) return;
    this.set({ layout, ...extra });
  }

  private updatePane(id: L.PaneId, patch: Partial<PaneModel>) {
    const p = this.snap.panes[id];
    if (!p) return;
    this.set({ panes: { ...this.snap.panes, [id]: { ...p, ...patch } } });
  }

  // --- runtimes
  runtime(id: L.PaneId): PaneRuntime | undefined {
    return this.runtimes.get(id);
  }

  browserRuntime(id: L.PaneId): BrowserRenderer | undefined {
    return this.browsers.get(id);
  }

  /** The screencast renderer of pane `id`, if it is in screencast mode. */
  private screencast(id: L.PaneId): ScreencastRuntime | undefined {
    const r = this.browsers.get(id);
    return r instanceof ScreencastRuntime ? r : undefined;
  }

  /** Mounts browser pane `id`'s renderer into its body slot (the pane calls this once; a mode switch remounts). */
  mountBrowser(id: L.PaneId, slot: HTMLElement) {
    this.slots.set(id, slot);
    this.browsers.get(id)?.mount(slot);
  }

  /** A fresh pane id (`p1`, `p2`, …), never given out before in this window. */
  private takeId(): L.PaneId {
    return `p${this.nextId++}`;
  }

  /** A terminal pane on terminal `terminalId` (null: it creates one when mounted), named `handle`. */
  private newPane(
    terminalId: string | null,
    title = '',
    command: string | null = null,
    handle: string | null = null,
    id = this.takeId(),
    spawn: SpawnOptions = {},
  ): PaneModel {
    const model: PaneModel = { id, kind: 'terminal', handle, terminalId, title, command, status: 'connecting', exitCode: null };
    this.createRuntime(model, spawn);
    return model;
  }

  private newBrowserPane(url: string, title = '', mode: RenderMode = 'iframe', handle: string | null = null): PaneModel {
    const id = this.takeId();
    const model: PaneModel = {
      id,
      kind: 'browser',
      handle,
      terminalId: null,
      title,
      command: null,
      status: 'open',
      exitCode: null,
      browser: { ...EMPTY_BROWSER, url, title, mode, screencast: mode === 'screencast' ? EMPTY_SCREENCAST : null },
      editNonce: url ? 0 : 1,
    };
    this.createBrowserRuntime(model);
    return model;
  }

  private createBrowserRuntime(model: PaneModel) {
    const id = model.id;
    const b = model.browser ?? EMPTY_BROWSER;
    const onChange = (patch: Partial<BrowserView>) => {
      const p = this.snap.panes[id];
      if (!p?.browser || this.browsers.get(id) !== rt) return;
      const browser = { ...p.browser, ...patch };
      this.updatePane(id, { browser, title: browser.title });
    };
    const rt: BrowserRenderer =
      b.mode === 'screencast'
        ? new ScreencastRuntime(id, b.url, { browserId: b.browserId, viewport: b.viewport }, {
            onChange,
            onFocus: () => this.focus(id),
            onBrowserId: (browserId) => onChange({ browserId }),
            onScreencast: (patch: Partial<ScreencastState>) => {
              if (patch.connected === false || patch.error) this.liveness.suspect();
              const sc = this.snap.panes[id]?.browser?.screencast ?? EMPTY_SCREENCAST;
              onChange({ screencast: { ...sc, ...patch } });
            },
            onViewport: (viewport: ViewportChoice) => onChange({ viewport }),
          })
        : new BrowserRuntime(
            id,
            b.url,
            this.grants,
            {
              onChange,
              onFocus: () => this.focus(id),
              // The keyboard is in this pane's frame: the pane is the one an action applies to.
              onKey: (k) => {
                if (this.snap.layout.focused !== id) this.focus(id);
                this.prefixKey(k);
              },
            },
            grantKeepaliveMs(location.search),
          );
    this.browsers.set(id, rt);
  }

  private createRuntime(model: PaneModel, spawn: SpawnOptions = {}) {
    const id = model.id;
    const rt = new PaneRuntime(id, model.terminalId, this.settings, {
      onTerminal: (terminalId, command) => {
        // The first terminal a pane runs names it; a restarted one keeps the name (created with `pane`).
        const handle = this.snap.panes[id]?.handle ?? terminalId;
        const fresh = this.snap.panes[id]?.terminalId !== terminalId ? { shell: null, foreground: null } : {};
        this.updatePane(id, command === null ? { terminalId, handle, ...fresh } : { terminalId, command, handle, ...fresh });
      },
      onShell: (shell) => this.updatePane(id, { shell }),
      onForeground: (foreground) => this.updatePane(id, { foreground }),
      onAttention: (a) => this.attend(id, a),
      onLink: (url) => this.openLink(id, url),
      onPathLink: (file, line) => this.openInEditor(id, file, line),
      handle: () => this.snap.panes[id]?.handle ?? null,
      onHandle: (handle) => this.updatePane(id, { handle }),
      onTitle: (title) => this.updatePane(id, { title }),
      onStatus: (status, exitCode) => {
        // A drop, or an exit (a shutdown hangs up every shell before the socket closes).
        if (status === 'reconnecting' || status === 'exited') this.liveness.suspect();
        this.updatePane(id, { status, exitCode: exitCode ?? null });
      },
      onFocus: () => this.focus(id),
      onFind: () => this.setFinding(id, true),
      onSurvivors: (survivors) => this.updatePane(id, { survivors }),
      onKept: (terminalId) => {
        const kept = this.snap.panes[id]?.kept ?? [];
        if (!kept.includes(terminalId)) this.updatePane(id, { kept: [...kept, terminalId] });
        void this.sweepKept();
      },
    }, spawn);
    this.runtimes.set(id, rt);
  }

  // --- load / save
  /**
   * Restores the saved wall (dropping panes whose terminal is gone, unless the restored
   * session describes it: restore.ts) or starts one terminal.
   */
  async init(): Promise<void> {
    const [ws, terms] = await Promise.all([
      api.getWorkspace().catch(() => null),
      api.listTerminals().catch(() => []),
    ]);
    const known = new Set(terms.map((t) => t.id));
    const doc = parseDoc(ws?.workspace);
    // After a sidecar restart: the saved session's panes come back (restore.ts).
    const plan = RestorePlan.from(ws);
    if (ws?.revision === 0) reportProblem(parseProblem(ws.problem));
    const panes: Record<string, PaneModel> = {};
    let layout: L.LayoutState = L.EMPTY_LAYOUT;
    let order: string[] = [];
    if (doc) {
      const keep = (id: string) => {
        const d = doc.panes[id];
        return !!d && (d.kind === 'browser' || known.has(d.terminalId) || !!plan?.has(d.terminalId));
      };
      layout = L.prune(doc.layout, keep);
      const present = new Set(L.allPanes(layout));
      order = doc.order.filter((id) => present.has(id));
      for (const id of L.allPanes(layout)) if (!order.includes(id)) order.push(id);
      for (const id of order) {
        const saved = doc.panes[id];
        const d = plan && saved.kind === 'browser' ? plan.browser(saved) : saved;
        if (d.kind === 'browser') {
          panes[id] = {
            id,
            kind: 'browser',
            handle: d.handle ?? null,
            terminalId: null,
            title: d.title,
            command: null,
            status: 'open',
            exitCode: null,
            browser: {
              ...EMPTY_BROWSER,
              url: d.url,
              mode: d.mode,
              title: d.title,
              viewport: d.viewport ?? PANE_VIEWPORT,
              browserId: d.browser ?? null,
              screencast: d.mode === 'screencast' ? EMPTY_SCREENCAST : null,
            },
            editNonce: d.url ? 0 : 1,
            ...(d.origin ? { portOrigin: d.origin } : {}),
          };
          this.createBrowserRuntime(panes[id]);
        } else {
          // A terminal gone with the sidecar the session restores: a new one, named by the new sidecar.
          const restored = known.has(d.terminalId) ? null : (plan?.terminal(d.terminalId) ?? null);
          // A document older than handles: the terminal it shows is the best name there is.
          const handle = restored ? null : (d.handle ?? d.terminalId);
          const kept = (d.kept ?? []).filter((k) => known.has(k));
          panes[id] = { id, kind: 'terminal', handle, terminalId: restored ? null : d.terminalId, title: d.title, command: d.command, status: 'connecting', exitCode: null, ...(kept.length ? { kept } : {}) };
          this.createRuntime(panes[id], restored ? { restored } : {});
        }
        const n = Number(id.slice(1));
        if (Number.isInteger(n) && n >= this.nextId) this.nextId = n + 1;
      }
    }
    if (!layout.root && layout.minimized.length) layout = L.restore(layout, layout.minimized[layout.minimized.length - 1]);
    if (!layout.root) {
      const p = this.newPane(null);
      panes[p.id] = p;
      order.push(p.id);
      layout = L.single(p.id);
    }
    window.addEventListener('message', this.onMessage);
    // Coming back to the window after one pane's notification lands in that pane: the desktop
    // app's notifications (the Tauri plugin) report no click on every desktop, and a web
    // notification's click focuses the window first.
    window.addEventListener('focus', () => {
      const only = this.notifier.takeNotified();
      if (only && this.snap.panes[only]?.attention) this.reveal(only);
    });
    this.liveness.watch(LIVENESS_EVERY_MS, () => document.visibilityState === 'visible');
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible') this.liveness.suspect();
    });
    // Terminals still running that no pane shows (a document this UI could not read, a pane
    // lost with it, a terminal made through the API): offered, never adopted silently.
    const shown = new Set<string>();
    for (const p of Object.values(panes)) {
      if (p.terminalId) shown.add(p.terminalId);
      for (const k of p.kept ?? []) shown.add(k);
    }
    const orphans = findOrphans(terms, shown);
    this.set({ layout, panes, order, ready: true, orphans });
    this.refreshPopout();
    this.openChannel();
    setInterval(() => void this.sweepKept(), KEPT_SWEEP_MS);
  }

  private sweeping = false;

  /**
   * Checks the kept terminals (see `PaneModel.kept`): records what still runs in them
   * (`keptSurvivors`, for the header), deletes the ones in which nothing runs any more, and
   * forgets the ones already gone. One sweep at a time.
   */
  private async sweepKept() {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      for (const id of this.snap.order) {
        const kept = this.snap.panes[id]?.kept;
        if (!kept?.length) continue;
        const left: string[] = [];
        const survivors: Survivor[] = [];
        for (const t of kept) {
          try {
            const list = (await api.getTerminal(t)).survivors ?? [];
            if (list.length) {
              left.push(t);
              survivors.push(...list);
            } else await api.deleteTerminal(t).catch(() => undefined);
          } catch (e) {
            if (!(e instanceof ApiError && e.status === 404)) left.push(t); // unknown: ask again later
          }
        }
        const now = this.snap.panes[id]?.kept;
        if (!now) continue;
        // Terminals kept while this sweep ran stay for the next one.
        const next = now.filter((t) => left.includes(t) || !kept.includes(t));
        const same = next.length === now.length && survivorKey(survivors) === survivorKey(this.snap.panes[id]?.keptSurvivors ?? []);
        if (!same) this.updatePane(id, { kept: next, keptSurvivors: survivors });
      }
    } finally {
      this.sweeping = false;
    }
  }

  /** Shows every offered orphan terminal in a new pane beside the focused one (minimized when the wall has no room); the focus stays. */
  showOrphans() {
    const orphans = this.snap.orphans;
    if (!orphans.length) return;
    let layout = this.snap.layout;
    const panes = { ...this.snap.panes };
    const order = [...this.snap.order];
    const shown = new Set(Object.values(panes).flatMap((p) => [p.terminalId, ...(p.kept ?? [])]));
    const handles = new Set(Object.values(panes).map((p) => p.handle));
    for (const o of orphans) {
      if (shown.has(o.id)) continue;
      // The handle of the pane it runs under (what `ph` in it knows), unless a pane here has it.
      const handle = handles.has(o.handle) ? o.id : o.handle;
      handles.add(handle);
      const p = this.newPane(o.id, '', o.command, handle);
      const target = besidePane(layout, null);
      const plan = target ? planSplit(layout, this.wall, target, null, p.id, { gap: GAP_PX, minSize: MIN_PANE_PX }) : null;
      if (plan?.ok) layout = plan.layout;
      else if (target) layout = L.minimize(L.split(layout, target, 'right', p.id), p.id);
      else continue;
      panes[p.id] = p;
      order.push(p.id);
    }
    this.setLayout(layout, { panes, order, orphans: [] });
    this.scheduleFocusSync(); // the keyboard leaves the offer's button
  }

  /** Stops (deletes) every offered orphan terminal: the banner's Stop names them all first. */
  stopOrphans() {
    for (const o of this.snap.orphans) void api.deleteTerminal(o.id).catch(() => undefined);
    this.set({ orphans: [] });
    this.scheduleFocusSync();
  }

  /** Hides the orphan offer (the terminals keep running; the next start offers them again). */
  dismissOrphans() {
    this.set({ orphans: [] });
    this.scheduleFocusSync();
  }

  /** Opens the UI channel (once): it reports this window's panes and applies relayed requests. */
  private openChannel() {
    if (this.channel) return;
    this.channel = new UiChannel({
      stateText: () => this.stateText(),
      apply: (r) => this.applyRequest(r),
      assignHandles: (assign) => this.assignHandles(assign),
      config: (snapshot) => this.settings.apply(snapshot),
    });
    this.channel.listen(window);
  }

  private popoutAsking = false;

  /**
   * Asks `GET /api/capabilities` again (at start and whenever a menu offering Pop out opens:
   * a display may come or go while the sidecar runs); one request at a time, and the offer
   * shown meanwhile is the last one.
   */
  refreshPopout() {
    if (this.popoutAsking) return;
    this.popoutAsking = true;
    void api
      .capabilities()
      .then(
        (cap) => this.set({ popout: popoutOffer(cap) }),
        (e: unknown) => this.set({ popout: popoutOffer({ error: e instanceof Error ? e.message : String(e) }) }),
      )
      .finally(() => (this.popoutAsking = false));
  }

  /** Every `message` event: only a valid shim message from a pane's own frame, on a live grant origin, gets through. */
  private onMessage = (e: MessageEvent) => {
    const frames = [...this.browsers.values()].map((b) => ({ paneId: b.paneId, window: b.frameWindow }));
    const routed = routeShimMessage(e, frames, this.grants.isLive);
    if (routed) this.browsers.get(routed.paneId)?.handleShim(e.origin, routed.message);
  };

  private toDoc(): WorkspaceDoc {
    const panes: WorkspaceDoc['panes'] = {};
    for (const id of this.snap.order) {
      const p = this.snap.panes[id];
      if (p?.kind === 'browser' && p.browser) {
        panes[id] = { kind: 'browser', url: p.browser.url, mode: p.browser.mode, title: p.browser.title, viewport: p.browser.viewport };
        if (p.browser.mode === 'screencast' && p.browser.browserId) panes[id] = { ...panes[id], browser: p.browser.browserId } as SavedPane;
        if (p.portOrigin) panes[id] = { ...panes[id], origin: p.portOrigin } as SavedPane;
        if (p.handle) panes[id] = { ...panes[id], handle: p.handle };
      }
      else if (p?.terminalId) {
        panes[id] = { terminalId: p.terminalId, title: p.title, command: p.command, ...(p.handle ? { handle: p.handle } : {}), ...(p.kept?.length ? { kept: p.kept } : {}) };
      }
    }
    return { version: 1, layout: this.snap.layout, panes, order: this.snap.order.filter((id) => panes[id]) };
  }

  private scheduleSave() {
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => {
      this.saveTimer = null;
      void this.saveNow();
    }, SAVE_DEBOUNCE_MS);
  }

  /** Saves at once if anything changed since the last save. */
  async saveNow(keepalive = false): Promise<void> {
    const doc = this.toDoc();
    const text = JSON.stringify(doc);
    if (text === this.lastSaved) return;
    this.lastSaved = text;
    try {
      if (keepalive) {
        await fetch('/api/workspace', {
          method: 'PUT',
          keepalive: true,
          credentials: 'same-origin',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ workspace: doc }),
        });
      } else {
        await api.putWorkspace(doc);
      }
    } catch {
      this.lastSaved = ''; // try again on the next change
    }
  }

  // --- wall geometry
  setWall(w: number, h: number) {
    this.wall = { x: 0, y: 0, w, h };
  }
  get wallRect(): L.Rect {
    return this.wall;
  }

  // --- actions (mouse and keyboard paths share these)
  focus(id: L.PaneId) {
    if (this.snap.panes[id]?.attention) this.updatePane(id, { attention: false });
    this.setLayout(L.focus(this.snap.layout, id));
  }

  // --- shell integration and attention (DESIGN §13)

  /**
   * Attention from pane `id`'s program: a badge unless the human is looking at the pane (it
   * is focused, shown, and the window has the focus); a desktop notification while the
   * window is not focused, whose click focuses the pane.
   */
  private attend(id: L.PaneId, a: Attention) {
    const p = this.snap.panes[id];
    if (!p) return;
    const windowFocused = typeof document === 'undefined' || document.hasFocus();
    const shown = L.visiblePanes(this.snap.layout).includes(id);
    if (!(windowFocused && shown && this.snap.layout.focused === id)) this.updatePane(id, { attention: true });
    if (!windowFocused && this.settings.config.desktopNotifications) {
      const { title, body } = notificationText(paneLabel(p), a);
      void this.notifier.notify(id, title, body, () => this.reveal(id));
    }
  }

  /** Shows pane `id` (restored if minimized, unzoomed if hidden behind a zoom) and focuses it. */
  reveal(id: L.PaneId) {
    if (!this.snap.panes[id]) return;
    let layout = this.snap.layout;
    if (layout.minimized.includes(id)) layout = L.restore(layout, id);
    if (layout.zoomed && layout.zoomed !== id) layout = { ...layout, zoomed: null };
    this.setLayout(layout);
    this.focus(id);
    this.focusTerminal();
  }

  /** Prefix + a: the next pane that wants attention (after the focused one, wrapping). */
  nextAttention(): boolean {
    const id = nextWanting(this.snap.order, this.snap.layout.focused, (p) => !!this.snap.panes[p]?.attention);
    if (id) this.reveal(id);
    return id !== null;
  }

  /**
   * A Ctrl/Cmd+clicked URL in pane `id`'s output: a loopback URL opens in a browser pane
   * beside the terminal; any other http(s) URL in the system browser.
   */
  openLink(id: L.PaneId, url: string) {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return;
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return;
    if (isLoopbackHost(u.hostname)) this.openBrowser(id, u.href, { keepSource: true });
    else void openExternal(u.href).catch(() => undefined);
  }

  /**
   * Opens `file` at `line` in the user's editor (`$VISUAL`, `$EDITOR`, else `vi`) in a new
   * terminal pane beside pane `id`, in that pane's working directory.
   */
  openInEditor(id: L.PaneId, file: string, line: number) {
    if (!this.snap.panes[id]) return;
    const src = this.runtimes.get(id);
    const spawn = { cwd: () => (src ? src.cwd() : Promise.resolve(undefined)), command: editorCommand(file, line) };
    const p = this.newPane(null, '', file.split('/').pop() ?? 'editor', null, this.takeId(), spawn);
    const side = (this.wall.w >= this.wall.h ? 'right' : 'down') as L.SplitSide;
    this.setLayout(L.split(this.snap.layout, id, side, p.id), { panes: { ...this.snap.panes, [p.id]: p }, order: [...this.snap.order, p.id] });
  }

  /** Scrolls the focused terminal to its previous (−1) or next (+1) prompt (needs shell integration). */
  jumpPrompt(dir: -1 | 1) {
    const f = this.snap.layout.focused;
    if (f) this.runtimes.get(f)?.host.prompts.jump(dir);
  }

  /** The output of pane `id`'s last finished command (needs shell integration), or null. */
  lastOutput(id: L.PaneId): string | null {
    return this.runtimes.get(id)?.host.prompts.lastOutput() ?? null;
  }

  /** Copies pane `id`'s last command's output to the clipboard; false if there is none. */
  async copyLastOutput(id: L.PaneId): Promise<boolean> {
    const text = this.lastOutput(id);
    if (text === null) return false;
    await writeClipboard(text);
    return true;
  }

  split(id: L.PaneId | null, side: L.SplitSide) {
    const target = id ?? this.snap.layout.focused;
    if (!target || !L.visiblePanes(this.snap.layout).includes(target)) return;
    // A terminal split from a terminal starts in that terminal's working directory.
    const src = this.runtimes.get(target);
    const p = this.newPane(null, '', null, null, this.takeId(), { cwd: () => (src ? src.cwd() : Promise.resolve(undefined)) });
    const layout = L.split(this.snap.layout, target, side, p.id);
    this.setLayout(layout, { panes: { ...this.snap.panes, [p.id]: p }, order: [...this.snap.order, p.id] });
  }

  /**
   * Closes pane `id` (default: the focused one) as the close button, Ctrl-b x and the context
   * menu do: a terminal pane whose program is busy (a server, an editor in the foreground),
   * or whose sessions still have processes, asks first (`closing`, answered with
   * `answerClose`); a screencast pane first runs its page's `beforeunload` (the dialog shows in
   * the pane) and closes only on Leave; anything else closes at once (also when the sidecar
   * cannot be asked).
   */
  async requestClose(id: L.PaneId | null): Promise<void> {
    const target = id ?? this.snap.layout.focused;
    const p = target ? this.snap.panes[target] : undefined;
    if (!target || !p) return;
    const sc = this.screencast(target);
    if (sc && !this.snap.closing) {
      // The page's beforeunload decides (its dialog shows in the pane): close only on Leave.
      if (await sc.unload()) this.close(target);
      return;
    }
    if (p.kind !== 'terminal' || this.snap.closing) {
      if (!this.snap.closing) this.close(target);
      return;
    }
    const ask = (t: string) => api.getTerminal(t).catch(() => null);
    const [current, ...kept] = await Promise.all([p.terminalId ? ask(p.terminalId) : Promise.resolve(null), ...(p.kept ?? []).map(ask)]);
    if (!this.snap.panes[target] || this.snap.closing) return;
    const reasons = closeReasons(current, kept.filter((k): k is TerminalInfo => k !== null));
    if (reasons.length) this.set({ closing: { paneId: target, reasons } });
    else this.close(target);
  }

  /** Answers the close question: `close` closes the pane (stopping what runs in it), else nothing changes. */
  answerClose(close: boolean) {
    const q = this.snap.closing;
    if (!q) return;
    this.set({ closing: null });
    if (close) this.close(q.paneId);
    else this.focusTerminal();
  }

  /** Stops what still runs in exited terminal pane `id`'s session (its banner's "Stop it"). */
  stopSurvivors(id: L.PaneId) {
    void this.runtimes.get(id)?.stopSurvivors();
  }

  /** Closes pane `id` (default: the focused one) at once, stopping its terminal and any it kept. */
  close(id: L.PaneId | null) {
    const target = id ?? this.snap.layout.focused;
    if (!target || !this.snap.panes[target]) return;
    for (const k of this.snap.panes[target].kept ?? []) void api.deleteTerminal(k).catch(() => undefined);
    this.runtimes.get(target)?.close();
    this.runtimes.delete(target);
    this.browsers.get(target)?.dispose();
    this.browsers.delete(target);
    this.slots.delete(target);
    this.notifier.forget(target);
    let layout = L.close(this.snap.layout, target);
    const panes = { ...this.snap.panes };
    delete panes[target];
    let order = this.snap.order.filter((o) => o !== target);
    if (!layout.root && layout.minimized.length) {
      layout = L.restore(layout, layout.minimized[layout.minimized.length - 1]);
    }
    if (!layout.root) {
      const p = this.newPane(null);
      panes[p.id] = p;
      order = [...order, p.id];
      layout = L.single(p.id);
    }
    this.setLayout(layout, { panes, order });
  }

  toggleZoom(id: L.PaneId | null) {
    this.setLayout(L.toggleZoom(this.snap.layout, id ?? this.snap.layout.focused));
  }

  minimize(id: L.PaneId | null) {
    const target = id ?? this.snap.layout.focused;
    if (target) this.setLayout(L.minimize(this.snap.layout, target));
  }

  restore(id: L.PaneId) {
    this.setLayout(L.restore(this.snap.layout, id));
  }

  resizeGap(path: number[], index: number, delta: number) {
    this.setLayout(L.resize(this.snap.layout, path, index, delta, this.wall, { gap: GAP_PX, minSize: MIN_PANE_PX }));
  }

  /**
   * One keystroke for the prefix machine, from the window's keydown or forwarded by a framed
   * page's shim; acts on an action. Returns the decision (the window's caller swallows all but
   * `pass`). Nothing is acted on while Porthole doesn't answer (the overlay says so).
   */
  prefixKey(k: Keystroke): Decision {
    if (this.snap.liveness !== 'up') return { kind: 'pass' };
    const d = this.prefix.feed(k);
    if (d.kind === 'action') this.dispatch(d.action);
    return d;
  }

  dispatch(a: Action) {
    const s = this.snap.layout;
    switch (a.kind) {
      case 'splitRight':
        return this.split(null, 'right');
      case 'splitDown':
        return this.split(null, 'down');
      case 'focusDir':
        return this.setLayout(L.focusDirection(s, a.dir, this.wall));
      case 'focusNext':
        return this.setLayout(L.focusNext(s));
      case 'close':
        return void this.requestClose(null);
      case 'zoom':
        return this.toggleZoom(null);
      case 'minimize':
        return this.minimize(null);
      case 'swapPrev':
        return s.focused && this.setLayout(L.swap(s, s.focused, 'prev'));
      case 'swapNext':
        return s.focused && this.setLayout(L.swap(s, s.focused, 'next'));
      case 'sendPrefix':
        return s.focused && this.runtimes.get(s.focused)?.input('\x02');
      case 'openBrowser':
        return this.openBrowser(null);
      case 'contextMenu':
        return this.requestMenu(s.focused);
      case 'nextAttention':
        return void this.nextAttention();
      case 'promptPrev':
        return this.jumpPrompt(-1);
      case 'promptNext':
        return this.jumpPrompt(1);
    }
  }

  // --- browser panes

  /**
   * Opens a browser pane from pane `ref` (default: the focused one) by the placement rule:
   * an untouched terminal is replaced in place (its terminal is deleted; the new pane is a
   * new element), anything else gets a split beside it. With no `url`, the new pane's URL
   * field opens. Returns the new pane's id. `keepSource`: never replace `ref`; `handle`: the
   * new pane's handle (a relayed open's `bN`); `keepFocus`: the focused pane stays focused
   * (a relayed open is focus-neutral) instead of the new pane taking the focus.
   */
  openBrowser(
    ref: L.PaneId | null,
    url = '',
    opts: { keepSource?: boolean; origin?: PortOrigin; mode?: RenderMode; handle?: string | null; keepFocus?: boolean } = {},
  ): L.PaneId | null {
    const target = ref ?? this.snap.layout.focused;
    if (url && !isHttpUrl(url)) return null;
    const placement = decidePlacement(this.snap.layout, target, this.wall, (id) => {
      const p = this.snap.panes[id];
      if (!p) return undefined;
      // From the context menu the source terminal is always kept, even an untouched one.
      const untouched = !opts.keepSource && p.kind === 'terminal' && this.runtimes.get(id)?.touched === false;
      return { kind: p.kind, untouched };
    });
    if (!placement) return null;
    const p = this.newBrowserPane(url, '', opts.mode ?? modeForUrl(url), opts.handle ?? null);
    if (opts.origin) p.portOrigin = opts.origin;
    const panes = { ...this.snap.panes, [p.id]: p };
    let order = [...this.snap.order, p.id];
    let layout: L.LayoutState;
    if (placement.kind === 'replace') {
      const old = placement.target;
      this.runtimes.get(old)?.close();
      this.runtimes.delete(old);
      delete panes[old];
      order = order.filter((o) => o !== old);
      layout = L.focus(L.replace(this.snap.layout, old, p.id), p.id);
    } else {
      layout = L.split(this.snap.layout, placement.target, placement.side, p.id);
    }
    const before = this.snap.layout.focused;
    if (opts.keepFocus && before !== null && L.leaves(layout.root).includes(before)) layout = { ...layout, focused: before };
    this.setLayout(layout, { panes, order });
    return p.id;
  }

  // --- the control plane (protocol §10): what this window reports and the requests it is relayed

  /** The `state` message for the UI channel, as JSON text: every pane, the focused one, and whether this window has the focus. */
  private stateText(): string {
    const s = this.snap;
    return encodeState({
      order: s.order,
      panes: s.panes,
      minimized: s.layout.minimized,
      focused: s.layout.focused,
      active: typeof document !== 'undefined' && document.hasFocus(),
    });
  }

  /** Records the `bN` handles the sidecar gave browser panes reported without one; other entries are ignored. */
  private assignHandles(assign: Record<string, string>) {
    let panes = this.snap.panes;
    for (const [id, handle] of Object.entries(assign)) {
      const p = panes[id];
      if (p?.kind !== 'browser' || p.handle !== null || !BROWSER_HANDLE_RE.test(handle)) continue;
      panes = { ...panes, [id]: { ...p, handle } };
    }
    if (panes !== this.snap.panes) this.set({ panes });
  }

  /** The pane named `handle` in this window, if any. */
  private paneByHandle(handle: string): L.PaneId | null {
    return this.snap.order.find((id) => this.snap.panes[id]?.handle === handle) ?? null;
  }

  /** Refuses when pane `near` (a relayed request's reference pane) is not in this window. */
  private checkNear(near: L.PaneId | null) {
    if (near !== null && !this.snap.panes[near]) throw new Refused(`there is no pane ${near} in this window (closed meanwhile?)`);
  }

  /**
   * Carries out a request the sidecar relayed from `ph` (protocol §10) exactly as the
   * equivalent click would, and resolves with the new or acted-on pane's id (null for a
   * `system` open). Rejects with `Refused` (or the API's error, whose message says why)
   * having changed nothing. A request asked again after a reload whose change is already
   * on the wall (the same handle) resolves with that pane.
   */
  async applyRequest(r: UiRequest): Promise<L.PaneId | null> {
    switch (r.verb) {
      case 'split':
        return this.relaySplit(r.near, r.side, r.terminal);
      case 'open':
        return this.relayOpen(r.near, r.url, r.mode, r.handle);
      case 'pane':
        return this.relayPane(r.pane, r.action);
    }
  }

  /**
   * A new terminal pane on existing terminal `terminal` (its handle), beside `near` (or, when
   * that is minimized or null, the focused pane) on `side` (null: right when that pane is
   * wider than tall, else down). The focus stays where it was.
   */
  private async relaySplit(near: L.PaneId | null, side: L.SplitSide | null, terminal: string): Promise<L.PaneId> {
    const existing = this.paneByHandle(terminal);
    if (existing) return existing;
    this.checkNear(near);
    let command: string | null;
    try {
      command = commandTitle((await api.getTerminal(terminal)).command);
    } catch (e) {
      throw new Refused(e instanceof ApiError && e.status === 404 ? `terminal ${terminal} has ended` : errorText(e));
    }
    // The wall may have changed while the terminal was asked about.
    const again = this.paneByHandle(terminal);
    if (again) return again;
    this.checkNear(near);
    const target = besidePane(this.snap.layout, near);
    if (!target) throw new Refused('there is no pane on the wall to split');
    const id = this.takeId();
    const plan = planSplit(this.snap.layout, this.wall, target, side, id, { gap: GAP_PX, minSize: MIN_PANE_PX });
    if (!plan.ok) throw new Refused(plan.message);
    const p = this.newPane(terminal, '', command, terminal, id);
    this.setLayout(plan.layout, { panes: { ...this.snap.panes, [p.id]: p }, order: [...this.snap.order, p.id] });
    return p.id;
  }

  /**
   * A browser pane named `handle` at `url` in `mode`, beside `near` (or the focused pane) by
   * the placement rule, never replacing it, the focus staying where it was; as the context
   * menu's port entries do: `iframe` takes its proxy grant first (its refusal is the
   * answer), `popout` opens a screencast and pops it out, `system` hands the URL to the
   * system browser.
   */
  private async relayOpen(near: L.PaneId | null, url: string, mode: 'iframe' | 'screencast' | 'popout' | 'system', handle: string | null): Promise<L.PaneId | null> {
    if (mode === 'system') {
      try {
        await openExternal(url);
      } catch (e) {
        throw new Refused(errorText(e));
      }
      return null;
    }
    const existing = handle ? this.paneByHandle(handle) : null;
    if (existing) return existing;
    this.checkNear(near);
    if (mode === 'popout') {
      // Asked afresh, as the menu offering it does (a display may have come or gone; a window
      // reloaded a moment ago may not know yet).
      const popout = popoutOffer(await api.capabilities().catch((e: unknown) => ({ error: errorText(e) })));
      this.set({ popout });
      if (!popout.available) throw new Refused(`pop-out is not available: ${popout.reason ?? 'no display'}`);
    }
    if (mode === 'iframe') {
      const refusal = iframeRefusal(url);
      if (refusal) throw new Refused(refusal);
      try {
        // Fails here (blocked address, too many grants, sidecar gone) before anything moves.
        await api.createProxyGrant({ url, embedders: [location.origin, ...Array.from(location.ancestorOrigins ?? [])] });
      } catch (e) {
        throw new Refused(errorText(e));
      }
    }
    // The wall may have changed while the sidecar was asked.
    const again = handle ? this.paneByHandle(handle) : null;
    if (again) return again;
    this.checkNear(near);
    const target = besidePane(this.snap.layout, near);
    if (!target) throw new Refused('there is no pane on the wall to open beside');
    const room = roomBeside(this.snap.layout, this.wall, target, null, { gap: GAP_PX, minSize: MIN_PANE_PX });
    if (room) throw new Refused(room);
    const id = this.openBrowser(target, url, { keepSource: true, mode: mode === 'iframe' ? 'iframe' : 'screencast', handle, keepFocus: true });
    if (!id) throw new Refused(`couldn't place a browser pane beside pane ${target}`);
    if (mode === 'popout') this.popOut(id);
    return id;
  }

  /** `ph focus|zoom|unzoom|minimize|restore|close`: as the header's buttons and the baseboard do; zoom and unzoom set, never toggle. */
  private relayPane(id: L.PaneId, action: 'focus' | 'zoom' | 'unzoom' | 'minimize' | 'restore' | 'close'): L.PaneId {
    if (!this.snap.panes[id]) throw new Refused(`there is no pane ${id} in this window (closed meanwhile?)`);
    const s = this.snap.layout;
    const minimized = s.minimized.includes(id);
    switch (action) {
      case 'focus':
        this.showPane(id);
        break;
      case 'zoom': {
        // A minimized pane comes back first; a lone pane has nothing to zoom over (it fills the wall).
        let next = minimized ? L.restore(s, id) : s;
        if (next.zoomed !== id) next = L.toggleZoom(next, id);
        this.setLayout(next);
        break;
      }
      case 'unzoom':
        if (s.zoomed === id) this.setLayout(L.toggleZoom(s, id));
        break;
      case 'minimize':
        if (!minimized) {
          const next = L.minimize(s, id);
          if (next === s) throw new Refused(`pane ${id} is the only pane on the wall: the last one cannot be minimized`);
          this.setLayout(next);
        }
        break;
      case 'restore':
        if (minimized) this.restore(id);
        break;
      case 'close':
        this.close(id);
        break;
    }
    return id;
  }

  // --- ports (context menu, dev-server chip)

  /** Asks pane `id`'s terminal for its listening ports (protocol §7). Rejects with an `ApiError`. */
  async listPorts(id: L.PaneId): Promise<ListeningPort[]> {
    const t = this.snap.panes[id]?.terminalId;
    if (!t) throw new Error('this pane has no terminal yet');
    return api.terminalPorts(t);
  }

  /** The browser pane that was opened for (pane, port, mode), if it is still open. */
  findPortPane(origin: PortOrigin): L.PaneId | null {
    for (const id of this.snap.order) {
      const p = this.snap.panes[id];
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
   * shows the stub). `system`: hands the URL to the system browser. Rejects, with the layout
   * and focus untouched, when the open cannot happen or `cancel.cancelled` was set meanwhile
   * (the menu closed).
   */
  async openPort(id: L.PaneId, row: PortRow, mode: PortOpenMode, cancel: { cancelled: boolean } = { cancelled: false }): Promise<void> {
    if (mode === 'system') {
      await openExternal(row.url);
      return;
    }
    if (mode === 'popout') {
      if (!this.snap.popout.available) throw new Error(this.snap.popout.reason ?? 'pop-out is not available');
      const shared: PortOrigin = { pane: id, port: row.port, mode: 'screencast' };
      let pane = this.findPortPane(shared);
      if (pane) this.showPane(pane);
      else {
        if (!L.visiblePanes(this.snap.layout).includes(id)) throw new Error('the terminal pane is no longer on the wall');
        pane = this.openBrowser(id, row.url, { keepSource: true, origin: shared, mode: 'screencast' });
        if (!pane) throw new Error("couldn't place a browser pane here");
      }
      this.popOut(pane);
      return;
    }
    if (mode !== 'iframe' && mode !== 'screencast') throw new Error(`${mode} is not available yet`);
    const origin: PortOrigin = { pane: id, port: row.port, mode };
    const existing = this.findPortPane(origin);
    if (existing) {
      this.showPane(existing);
      return;
    }
    if (mode === 'screencast') {
      // The browser starts when the pane mounts; its failure shows in the pane.
      if (!L.visiblePanes(this.snap.layout).includes(id)) throw new Error('the terminal pane is no longer on the wall');
      if (!this.openBrowser(id, row.url, { keepSource: true, origin, mode })) throw new Error("couldn't place a browser pane here");
      return;
    }
    // Fails here (blocked address, too many grants, sidecar gone) before anything moves.
    await api.createProxyGrant({ url: row.url, embedders: [location.origin, ...Array.from(location.ancestorOrigins ?? [])] });
    if (cancel.cancelled) throw new Error('cancelled');
    if (!L.visiblePanes(this.snap.layout).includes(id)) throw new Error('the terminal pane is no longer on the wall');
    const again = this.findPortPane(origin);
    if (again) {
      this.focus(again);
      return;
    }
    if (!this.openBrowser(id, row.url, { keepSource: true, origin })) throw new Error("couldn't place a browser pane here");
  }

  /**
   * The one terminal pane (visible or minimized) whose processes serve loopback `url`, asking
   * every terminal for its ports; null when none or several do. A terminal whose scan fails
   * counts as serving nothing.
   */
  async findServingPane(url: string): Promise<L.PaneId | null> {
    const terminals = this.snap.order.filter((id) => this.snap.panes[id]?.kind === 'terminal' && this.snap.panes[id]?.terminalId);
    const scans = await Promise.all(
      terminals.map(async (paneId) => ({ paneId, ports: await api.terminalPorts(this.snap.panes[paneId]!.terminalId!).catch(() => []) })),
    );
    return servingPane(url, scans);
  }

  /** Focuses pane `id`, restoring it first when it is minimized. */
  showPane(id: L.PaneId) {
    if (this.snap.layout.minimized.includes(id)) this.restore(id);
    else this.focus(id);
  }

  /** Asks the wall to open pane `id`'s context menu (terminal panes only). */
  requestMenu(id: L.PaneId | null) {
    if (!id || this.snap.panes[id]?.kind !== 'terminal') return;
    this.set({ menuRequest: { paneId: id, nonce: (this.snap.menuRequest?.nonce ?? 0) + 1 } });
  }

  /** Navigates browser pane `id` to `url` (an already normalized http(s) URL). */
  navigate(id: L.PaneId, url: string) {
    if (!isHttpUrl(url)) return;
    const p = this.snap.panes[id];
    // https cannot be framed: it opens as a screencast (the pane keeps its place).
    if (p?.browser?.mode === 'iframe' && modeForUrl(url) === 'screencast') {
      this.setRenderMode(id, 'screencast', url);
      return;
    }
    // Chromium stopped (crashed, killed): going somewhere relaunches it there.
    const sc = p?.browser?.screencast;
    if (sc && chromiumStopped(sc)) {
      this.screencast(id)?.relaunch(url);
      return;
    }
    this.browsers.get(id)?.navigate(url);
  }

  /**
   * Switches browser pane `id` to render `mode` (same pane, same element, same URL, or `url`
   * when given): the old renderer is disposed (a screencast's browser is deleted) and the new
   * one mounts into the same body slot.
   */
  setRenderMode(id: L.PaneId, mode: RenderMode, url?: string) {
    const p = this.snap.panes[id];
    if (!p?.browser || (p.browser.mode === mode && url === undefined)) return;
    if (p.browser.mode === mode && url !== undefined) {
      this.browsers.get(id)?.navigate(url);
      return;
    }
    const nextUrl = url ?? this.browsers.get(id)?.currentUrl ?? p.browser.url;
    this.browsers.get(id)?.dispose();
    const browser: BrowserView = {
      ...p.browser,
      url: nextUrl,
      mode,
      view: nextUrl ? 'loading' : 'empty',
      message: null,
      uninstrumented: false,
      blocked: null,
      prompt: null,
      browserId: null,
      screencast: mode === 'screencast' ? EMPTY_SCREENCAST : null,
    };
    const model = { ...p, browser };
    this.updatePane(id, { browser });
    this.createBrowserRuntime(model);
    const slot = this.slots.get(id);
    if (slot) this.browsers.get(id)?.mount(slot);
    this.browserVisible(id, L.visiblePanes(this.snap.layout).includes(id));
    this.focus(id);
    // The old renderer's element (or a panel button) had the keyboard: give it to the new one.
    this.scheduleFocusSync();
  }

  /** Pane `id` is on screen (true) or hidden/minimized (false): a hidden screencast parks after 1 s. */
  browserVisible(id: L.PaneId, visible: boolean) {
    this.screencast(id)?.setVisible(visible);
  }

  /**
   * Screencast viewport: Resize with pane, or a fixed size (persisted with the pane). With a
   * runtime the choice is recorded once the sidecar took it (never one it refused, e.g.
   * while popped out); without one (not mounted yet) it is recorded for the browser's creation.
   */
  setViewport(id: L.PaneId, choice: ViewportChoice) {
    const p = this.snap.panes[id];
    if (!p?.browser) return;
    const rt = this.screencast(id);
    if (rt) rt.setViewport(choice);
    else this.updatePane(id, { browser: { ...p.browser, viewport: choice } });
  }

  answerDialog(id: L.PaneId, accept: boolean, text?: string) {
    this.screencast(id)?.answerDialog(accept, text);
  }

  choosePopup(id: L.PaneId, index: number | null) {
    this.screencast(id)?.choosePopup(index);
  }

  /** Answers the file chooser of screencast pane `id` (files in web mode, paths from the desktop dialog; `[]` cancels). */
  answerFileChooser(id: L.PaneId, chooser: number, pick: { files: File[] } | { paths: string[] }) {
    this.screencast(id)?.answerFileChooser(chooser, pick);
  }

  /** Closes the canvas context menu of screencast pane `id`. */
  closeCanvasMenu(id: L.PaneId) {
    this.screencast(id)?.closeMenu();
  }

  /** Copies an image of screencast pane `id`'s page (its box in page CSS px) from the frame on screen. */
  copyPageImage(id: L.PaneId, box: { x: number; y: number; width: number; height: number }): Promise<void> {
    const rt = this.screencast(id);
    return rt ? rt.copyImage(box) : Promise.reject(new Error('not a screencast pane'));
  }

  /** Sets the page zoom of screencast pane `id` (1 resets). */
  setZoom(id: L.PaneId, factor: number) {
    this.screencast(id)?.setZoom(factor);
  }

  /** Closes the popup of screencast pane `id` without answering or taking the keyboard. */
  dismissPopup(id: L.PaneId) {
    this.screencast(id)?.dismissPopup();
  }

  /** Answers the picker input popup of screencast pane `id` with `value`, or dismisses it (null). */
  setPopupValue(id: L.PaneId, value: string | null) {
    this.screencast(id)?.setPopupValue(value);
  }

  selectTab(id: L.PaneId, tab: string) {
    this.screencast(id)?.selectTab(tab);
  }

  closeTab(id: L.PaneId, tab: string) {
    this.screencast(id)?.closeTab(tab);
  }

  relaunchBrowser(id: L.PaneId) {
    this.screencast(id)?.relaunch();
  }

  /** Hides screencast pane `id`'s error banner. */
  dismissScreencastError(id: L.PaneId) {
    this.screencast(id)?.dismissError();
  }

  /**
   * Pops browser pane `id` out to a window (protocol §8.5); the pane shows a stub. An
   * embedded (iframe) pane becomes a screencast first: pop-out and screencast share one
   * sidecar browser (its profile and cookies), so popping back in lands in the screencast.
   */
  popOut(id: L.PaneId) {
    if (!this.snap.popout.available) return;
    const b = this.snap.panes[id]?.browser;
    if (b && b.mode !== 'screencast') this.setRenderMode(id, 'screencast');
    this.screencast(id)?.popOut();
  }

  /** Brings screencast pane `id`'s popped-out browser back into the pane. */
  popIn(id: L.PaneId) {
    this.screencast(id)?.popIn();
  }

  browserGo(id: L.PaneId, delta: -1 | 1) {
    this.browsers.get(id)?.go(delta);
  }

  /** Hides the "can't follow this page" banner until a later load is judged uninstrumented again. */
  dismissBanner(id: L.PaneId) {
    const p = this.snap.panes[id];
    if (p?.browser?.uninstrumented) this.updatePane(id, { browser: { ...p.browser, uninstrumented: false } });
  }

  /** Hides the "blocked by CORS" banner for the rest of the page (until the frame navigates). */
  dismissBlocked(id: L.PaneId) {
    const p = this.snap.panes[id];
    if (p?.browser?.blocked) this.updatePane(id, { browser: { ...p.browser, blocked: null } });
  }

  browserReload(id: L.PaneId, hard = false) {
    const b = this.browsers.get(id);
    if (hard) b?.hardReload();
    else b?.reload();
  }

  /** Answers a page's new-window request: accept opens an adjacent browser pane, cancel drops it. */
  answerPrompt(id: L.PaneId, accept: boolean) {
    const p = this.snap.panes[id];
    const url = p?.browser?.prompt;
    if (!p?.browser || !url) return;
    this.updatePane(id, { browser: { ...p.browser, prompt: null } });
    if (accept) this.openBrowser(id, url);
  }

  /** Gives the keyboard to browser pane `id`'s body (after its URL field closes). */
  focusBrowserBody(id: L.PaneId) {
    this.browsers.get(id)?.focus(true);
  }

  /** Asks pane `id`'s header to open its URL field. */
  editUrl(id: L.PaneId) {
    const p = this.snap.panes[id];
    if (p?.kind === 'browser') this.updatePane(id, { editNonce: (p.editNonce ?? 0) + 1 });
  }

  /** Opens or closes pane `id`'s find bar (closing clears the highlight and refocuses the terminal). */
  setFinding(id: L.PaneId, finding: boolean) {
    this.updatePane(id, { finding });
    if (!finding) {
      this.runtimes.get(id)?.host.find('');
      this.focusTerminal();
    }
  }

  /** Finds `text` in pane `id`; returns true iff found. */
  find(id: L.PaneId, text: string, backwards = false): boolean {
    return this.runtimes.get(id)?.host.find(text, backwards) ?? false;
  }

  hasSelection(id: L.PaneId): boolean {
    return this.runtimes.get(id)?.host.term.hasSelection() ?? false;
  }

  /** Copies pane `id`'s selection to the clipboard. */
  async copy(id: L.PaneId): Promise<void> {
    await this.runtimes.get(id)?.host.copySelection();
  }

  /** Pastes the clipboard into pane `id` (sanitized; bracketed when the program asked). */
  async paste(id: L.PaneId): Promise<void> {
    await this.runtimes.get(id)?.host.pasteFromClipboard();
  }

  /** Moves the keyboard focus to the focused pane (its terminal, or a browser pane's body). */
  focusTerminal() {
    const f = this.snap.layout.focused;
    if (f) this.focusKeyboard(f, false);
  }

}

/** Survivors compared by pid and name. */
function survivorKey(list: readonly Survivor[]): string {
  return list.map((s) => `${s.pid}:${s.name}`).join(',');
}

/** An error's message for a refusal (the API's own message for an `ApiError`). */
function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
