// The workspace: layout state + pane models + runtimes, persisted to the sidecar.
//
// React reads immutable snapshots (useSyncExternalStore); every change goes through a
// method here or in the modules it owns: `browser` (browser panes' renderers and actions),
// `ports` (opening a terminal's ports), `ws` (workspaces), `terminals` (find, clipboard,
// prompts), `orphans` (the orphan offer), the kept-terminal sweep, the focus sync, the
// prefix-action table (dispatch.ts), the control relay, and the saver (persist.ts).
// Components never reach a runtime's socket.
//
// Over 600 lines, knowingly: this is the composition root. What stays here is what shares
// the private `set`/`setLayoutIn` and the runtimes map: creating, placing and closing
// panes, and the host objects handed to each module above (each a few lines of wiring).
import { api } from '../api/client';
import { LivenessWatch, probeHealth } from '../api/liveness';
import type { Attention, TerminalInfo } from '../api/protocol';
import { type RenderMode, modeForUrl } from '../browser/modes';
import { decidePlacement } from '../browser/placement';
import { isHttpUrl, isLoopbackHost } from '../browser/url';
import { UiChannel } from '../control/UiChannel';
import { projectPrompts } from '../project/prompts';
import type { PortOrigin } from '../ports/ports';
import { openExternal } from '../ports/external';
import { POPOUT_CHECKING, popoutOffer } from '../browser/popout';
import * as L from '../layout/engine';
import { type Action, type Decision, type Keystroke, PrefixKeys } from '../keys/prefix';
import type { Settings } from '../config/Settings';
import { parseDoc } from './doc';
import { PaneRuntime, type SpawnOptions } from './PaneRuntime';
import { StartGate } from './startGate';
import { DesktopNotifier, nextWanting, notificationText } from './attention';
import { BrowserPanes } from './browsers';
import { paneLabel } from './label';
import { GAP_PX, MIN_PANE_PX, type PaneModel, type Snapshot, browserModel, terminalModel } from './model';
import { DocSaver, restoreDoc, toDoc } from './persist';
import { readSavedState } from './load';
import { PortPanes } from './portPanes';
import { ControlRelay } from './relay';
import { WorkspaceActions } from './workspaceActions';
import { dispatchAction } from './dispatch';
import { FocusSync } from './focusSync';
import { KeptSweeper } from './keptSweep';
import { OrphanActions } from './orphans';
import { TerminalActions } from './terminalActions';
import { editorCommand } from '../terminal/pathLinks';
import { closeReasons, findOrphans } from './survivors';
import { WORKSPACES_MAX, hostOf, makeWorkspace, panesByWorkspace, unemptied, withLayout, workspaceOf } from './workspaces';
import { Refused } from '../control/messages';
import { endpointFor } from '../terminal/endpoint';
import { remoteLinks } from '../remote/links';
import { RestorePlan, parseProblem, reportProblem } from './restore';
import { Drivers, parseDrivers, parseHandoffs } from '../control/drivers';

/** How often a visible app asks whether Porthole still answers, besides after a drop. */
const LIVENESS_EVERY_MS = 10_000;
/** How often the terminals panes keep for their survivors are checked (and deleted once nothing runs in them). */
const KEPT_SWEEP_MS = 5_000;

export class WorkspaceStore {
  private state: Snapshot;
  private listeners = new Set<() => void>();
  private runtimes = new Map<L.PaneId, PaneRuntime>();
  /** panes on screen connect before hidden ones (a restored wall of several workspaces) */
  private readonly startGate = new StartGate();
  private nextId = 1;
  private wall: L.Rect = { x: 0, y: 0, w: 1, h: 1 };
  private readonly liveness = new LivenessWatch(probeHealth, (liveness) => this.set({ liveness }));
  /** the prefix machine: the window's keydowns and the keys framed pages forward share it */
  private readonly prefix = new PrefixKeys(
    (armed) => document.body.classList.toggle('prefix-armed', armed),
    () => this.settings.config,
  );
  /** the UI channel (protocol §10): opened once the wall is restored, for the app's life */
  private channel: UiChannel | null = null;
  private readonly notifier = new DesktopNotifier();
  private readonly saver = new DocSaver(() => toDoc(this.snap));

  /** Browser panes: their renderers and the actions of their headers and overlays. */
  readonly browser: BrowserPanes;
  /** Which terminal drives each browser pane (the sidecar's map, issue 26). */
  readonly drivers = new Drivers();
  /** Terminal panes' listening ports, opened in browser panes. */
  readonly ports: PortPanes;
  /** The workspaces' actions: switch, cycle, create, rename, move a pane, close. */
  readonly ws: WorkspaceActions;
  private readonly relay: ControlRelay;
  /** Terminal panes' find, clipboard, prompts and survivors. */
  readonly terminals: TerminalActions;
  /** The orphan terminals' offer: Show, Stop, dismiss. */
  readonly orphans: OrphanActions;
  private readonly kept: KeptSweeper;
  private readonly focusSync: FocusSync;

  /** The user's configuration (its own module; the store only hands it to panes and the channel). */
  constructor(readonly settings: Settings) {
    this.state = { layout: L.EMPTY_LAYOUT, workspaces: [makeWorkspace('w1')], active: 'w1', renaming: null, panes: {}, order: [], ready: false, menuRequest: null, popout: POPOUT_CHECKING, liveness: 'up', closing: null, orphans: [], loadError: null };
    const store = this;
    this.browser = new BrowserPanes({
      get snap() {
        return store.snap;
      },
      updatePane: (id, patch) => this.updatePane(id, patch),
      focus: (id) => this.focus(id),
      prefixKey: (k) => this.prefixKey(k),
      suspect: () => this.liveness.suspect(),
      scheduleFocusSync: () => this.scheduleFocusSync(),
      openBrowser: (ref, url) => this.openBrowser(ref, url),
    });
    settings.subscribe(() => this.browser.setPrefixLetter(settings.config.prefixLetter));
    this.ports = new PortPanes({
      get snap() {
        return store.snap;
      },
      openBrowser: (ref, url, opts) => this.openBrowser(ref, url, opts),
      popOut: (id) => this.browser.popOut(id),
      showPane: (id) => this.showPane(id),
    });
    this.ws = new WorkspaceActions({
      get snap() {
        return store.snap;
      },
      get wall() {
        return store.wall;
      },
      set: (next) => this.set(next),
      newTerminal: (cwdOf, remote) => {
        // A pane of another host has no directory that means anything there.
        const src = cwdOf && (this.snap.panes[cwdOf]?.remote ?? null) === remote ? this.runtimes.get(cwdOf) : undefined;
        return this.newPane(null, '', null, null, this.takeId(), src ? { cwd: () => src.cwd() } : {}, remote);
      },
      disposePane: (id) => this.disposePane(id),
      scheduleFocusSync: () => this.scheduleFocusSync(),
    });
    this.relay = new ControlRelay({
      get snap() {
        return store.snap;
      },
      get wall() {
        return store.wall;
      },
      set: (next) => this.set(next),
      layoutNear: (near) => this.layoutIn(this.workspaceIdOf(near)),
      setLayoutNear: (near, layout, extra) => this.setLayoutIn(this.workspaceIdOf(near), layout, extra),
      takeId: () => this.takeId(),
      newPane: (terminalId, title, command, handle, id) => this.newPane(terminalId, title, command, handle, id),
      openBrowser: (ref, url, opts) => this.openBrowser(ref, url, opts),
      popOut: (id) => this.browser.popOut(id),
      showPane: (id) => this.showPane(id),
      restore: (id) => this.restore(id),
      close: (id) => this.close(id),
      newWorkspace: (host, name) => this.newWorkspaceFor(host, name),
    });
    this.terminals = new TerminalActions({
      get snap() {
        return store.snap;
      },
      runtime: (id) => this.runtimes.get(id),
      updatePane: (id, patch) => this.updatePane(id, patch),
      focusTerminal: () => this.focusTerminal(),
    });
    this.orphans = new OrphanActions({
      get snap() {
        return store.snap;
      },
      get wall() {
        return store.wall;
      },
      set: (next) => this.set(next),
      setLayout: (layout, extra) => this.setLayout(layout, extra),
      newPane: (terminalId, command, handle) => this.newPane(terminalId, '', command, handle),
      scheduleFocusSync: () => this.scheduleFocusSync(),
    });
    this.kept = new KeptSweeper(
      {
        get snap() {
          return store.snap;
        },
        updatePane: (id, patch) => this.updatePane(id, patch),
      },
      api,
    );
    this.focusSync = new FocusSync({
      focused: () => this.snap.layout.focused,
      renaming: () => this.snap.renaming !== null,
      target: (id) => {
        const host = this.runtimes.get(id)?.host;
        if (host) return { focusable: host, terminal: true };
        const b = this.browser.get(id);
        return b ? { focusable: b, terminal: false } : undefined;
      },
      activeElement: () => document.activeElement,
    });
  }

  /** The current snapshot. */
  private get snap(): Snapshot {
    return this.state;
  }

  // --- external store protocol
  subscribe = (l: () => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };
  getSnapshot = () => this.state;

  private set(next: Partial<Snapshot>) {
    const prevFocus = this.snap.layout.focused;
    let state = { ...this.state, ...next };
    // One truth for the wall on screen: a new list brings the active workspace's layout; a
    // new layout is written into the active workspace's entry.
    const active = state.workspaces.find((w) => w.id === state.active);
    if (active && next.workspaces && !next.layout) state.layout = active.layout;
    else if (active && active.layout !== state.layout) state = { ...state, workspaces: withLayout(state.workspaces, state.active, state.layout) };
    this.state = state;
    // The links are watched while a remote workspace exists.
    if (next.workspaces) remoteLinks.setPolling(state.workspaces.some((w) => !!w.host));
    for (const l of [...this.listeners]) l();
    if (this.snap.ready) this.saver.schedule();
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
    this.focusSync.focusPane(id, connectedOnly);
  }

  private scheduleFocusSync() {
    this.focusSync.schedule();
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

  /** The id of the workspace pane `id` is in; the active one for null or an unknown pane. */
  private workspaceIdOf(id: L.PaneId | null): string {
    return (id !== null && workspaceOf(this.snap.workspaces, id)?.id) || this.snap.active;
  }

  /** Workspace `ws`'s layout (the wall on screen for the active one). */
  private layoutIn(ws: string): L.LayoutState {
    if (ws === this.snap.active) return this.snap.layout;
    return this.snap.workspaces.find((w) => w.id === ws)?.layout ?? this.snap.layout;
  }

  /** Sets workspace `ws`'s layout (with `extra` snapshot fields), on screen or not. */
  private setLayoutIn(ws: string, layout: L.LayoutState, extra: Partial<Snapshot> = {}) {
    if (ws === this.snap.active) this.setLayout(layout, extra);
    else this.set({ workspaces: withLayout(this.snap.workspaces, ws, layout), ...extra });
  }

  // --- runtimes
  runtime(id: L.PaneId): PaneRuntime | undefined {
    return this.runtimes.get(id);
  }

  /** A fresh pane id (`p1`, `p2`, …), never given out before in this window. */
  private takeId(): L.PaneId {
    return `p${this.nextId++}`;
  }

  /** A terminal pane on terminal `terminalId` (null: it creates one when mounted), named `handle`, on `remote` (null: local). */
  private newPane(
    terminalId: string | null,
    title = '',
    command: string | null = null,
    handle: string | null = null,
    id = this.takeId(),
    spawn: SpawnOptions = {},
    remote: string | null = null,
  ): PaneModel {
    const model = terminalModel(id, terminalId, title, command, handle, remote);
    this.createRuntime(model, spawn);
    return model;
  }

  private newBrowserPane(url: string, title = '', mode: RenderMode = 'iframe', handle: string | null = null, isolated = false, remote: string | null = null): PaneModel {
    const model = browserModel(this.takeId(), url, title, mode, handle);
    if (isolated && model.browser) model.browser = { ...model.browser, isolated: true };
    if (remote) model.remote = remote;
    this.browser.create(model);
    return model;
  }

  private createRuntime(model: PaneModel, spawn: SpawnOptions = {}) {
    const id = model.id;
    const rt = new PaneRuntime(id, model.terminalId, this.settings, {
      onTerminal: (terminalId, command) => {
        // The first terminal a pane runs names it; a restarted one keeps the name (created with
        // `pane`). A remote terminal's id is the remote's: it names no pane here.
        const handle = model.remote ? null : (this.snap.panes[id]?.handle ?? terminalId);
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
      onFind: () => this.terminals.setFinding(id, true),
      onSurvivors: (survivors) => this.updatePane(id, { survivors }),
      onKept: (terminalId) => {
        const kept = this.snap.panes[id]?.kept ?? [];
        if (!kept.includes(terminalId)) this.updatePane(id, { kept: [...kept, terminalId] });
        void this.kept.sweep();
      },
    }, { ...spawn, gate: this.startGate, endpoint: endpointFor(model.remote) });
    this.runtimes.set(id, rt);
  }

  // --- load / save
  /**
   * Restores the saved wall (dropping panes whose terminal is gone, unless the restored
   * session describes it: restore.ts) or starts one terminal when nothing is saved. A failed
   * read is asked again (load.ts), shown meanwhile as `loadError`; nothing is saved before.
   */
  async init(): Promise<void> {
    const { ws, terms } = await readSavedState(
      async () => {
        const [ws, terms] = await Promise.all([api.getWorkspace(), api.listTerminals()]);
        return { ws, terms };
      },
      {
        wait: (ms) => new Promise((r) => setTimeout(r, ms)),
        onFailure: (e) => {
          this.set({ loadError: e instanceof Error ? e.message : String(e) });
          // A sidecar gone (or restarted: a new sign-in) is said by the overlay, as later on.
          this.liveness.suspect();
        },
      },
    );
    const known = new Set(terms.map((t) => t.id));
    const doc = parseDoc(ws.workspace);
    // After a sidecar restart: the saved session's panes come back (restore.ts).
    const plan = RestorePlan.from(ws);
    if (ws.revision === 0) reportProblem(parseProblem(ws.problem));
    let panes: Record<string, PaneModel> = {};
    let workspaces = this.snap.workspaces;
    let active = this.snap.active;
    let order: string[] = [];
    if (doc) {
      const wall = restoreDoc(doc, known, plan);
      if (wall.workspaces.length) ({ workspaces, active } = wall);
      ({ panes, order } = wall);
      this.nextId = Math.max(this.nextId, wall.nextId);
      for (const id of order) {
        if (panes[id].kind === 'browser') this.browser.create(panes[id]);
        else this.createRuntime(panes[id], wall.restored[id] ? { restored: wall.restored[id] } : {});
      }
    }
    if (!workspaces.some((w) => w.layout.root)) {
      const p = this.newPane(null);
      panes[p.id] = p;
      order.push(p.id);
      workspaces = [makeWorkspace(workspaces[0]?.id ?? 'w1', L.single(p.id), workspaces[0]?.name)];
      active = workspaces[0].id;
    }
    const layout = workspaces.find((w) => w.id === active)!.layout;
    window.addEventListener('message', this.browser.onMessage);
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
      if (p.remote) continue;
      if (p.terminalId) shown.add(p.terminalId);
      for (const k of p.kept ?? []) shown.add(k);
    }
    const orphans = findOrphans(terms, shown);
    // Saving starts only now: before this the wall in memory was not the saved one.
    this.saver.arm();
    this.set({ workspaces, active, layout, panes, order, ready: true, orphans, loadError: null });
    this.refreshPopout();
    this.openChannel();
    setInterval(() => void this.kept.sweep(), KEPT_SWEEP_MS);
  }

  /** Opens the UI channel (once): it reports this window's panes and applies relayed requests. */
  private openChannel() {
    if (this.channel) return;
    this.channel = new UiChannel({
      stateText: () => this.relay.stateText(),
      apply: (r) => this.relay.applyRequest(r),
      assignHandles: (assign) => this.relay.assignHandles(assign),
      config: (snapshot) => this.settings.apply(snapshot),
      projectTrust: (question) => projectPrompts.ask(question),
      drivers: (map, handoffs) => {
        const m = parseDrivers(map);
        const h = parseHandoffs(handoffs);
        if (!m || !h) return;
        const before = this.drivers.getState().handoffs;
        this.drivers.set(m, h);
        // A new handoff wants the human: the attention system's badge and notification.
        for (const [handle, ho] of Object.entries(h)) {
          if (before[handle]) continue;
          const id = Object.keys(this.snap.panes).find((p) => this.snap.panes[p]?.handle === handle);
          if (id) this.attend(id, { kind: 'notify', title: `${ho.by} hands you a step`, body: ho.reason });
        }
      },
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

  /** Saves the wall at once if anything changed since the last save (`keepalive`: the page is going away). */
  saveNow(keepalive = false): Promise<void> {
    return this.saver.saveNow(keepalive);
  }

  // --- wall geometry
  setWall(w: number, h: number) {
    this.wall = { x: 0, y: 0, w, h };
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

  /**
   * "New remote workspace…": makes (or reuses) the link to `host`, then a workspace named
   * after it with one terminal there, shown at once. Rejects with the sidecar's error
   * (nothing is created); nothing is created either when `cancelled()` says so by then.
   */
  async newRemoteWorkspace(host: string, cancelled: () => boolean = () => false): Promise<string | null> {
    await remoteLinks.ensure(host);
    if (cancelled()) return null;
    return this.ws.create(host);
  }

  /**
   * `ph workspace new [--ssh HOST] [--name NAME]` (protocol §10 `workspace`): a remote workspace
   * made exactly as the dialog makes it (`newRemoteWorkspace`), else a local one as the strip's
   * +; named `name` when given. Resolves with its one pane's id; rejects with the sidecar's
   * `ApiError` (nothing made) or `Refused` (the strip is full).
   */
  async newWorkspaceFor(host: string | null, name: string | null): Promise<L.PaneId> {
    const ws = host !== null ? await this.newRemoteWorkspace(host) : this.ws.create(null);
    if (ws === null) throw new Refused(`the window has ${WORKSPACES_MAX} workspaces, the most it holds`);
    if (name !== null) this.ws.rename(ws, name);
    const pane = L.allPanes(this.snap.layout)[0];
    if (this.snap.active !== ws || !pane) throw new Refused('the new workspace is not on screen (closed meanwhile?)');
    return pane;
  }

  /** Shows pane `id` (restored if minimized, unzoomed if hidden behind a zoom) and focuses it. */
  reveal(id: L.PaneId) {
    if (!this.snap.panes[id]) return;
    this.showWorkspaceOf(id);
    let layout = this.snap.layout;
    if (layout.minimized.includes(id)) layout = L.restore(layout, id);
    if (layout.zoomed && layout.zoomed !== id) layout = { ...layout, zoomed: null };
    this.setLayout(layout);
    this.focus(id);
    this.focusTerminal();
  }

  /** Prefix + a: the next pane that wants attention (after the focused one, wrapping). */
  nextAttention(): boolean {
    const id = nextWanting(panesByWorkspace(this.snap.workspaces, this.snap.order), this.snap.layout.focused, (p) => !!this.snap.panes[p]?.attention);
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
    const p = this.newPane(null, '', file.split('/').pop() ?? 'editor', null, this.takeId(), spawn, this.snap.panes[id].remote ?? null);
    const side = (this.wall.w >= this.wall.h ? 'right' : 'down') as L.SplitSide;
    this.setLayout(L.split(this.snap.layout, id, side, p.id), { panes: { ...this.snap.panes, [p.id]: p }, order: [...this.snap.order, p.id] });
  }

  split(id: L.PaneId | null, side: L.SplitSide) {
    const target = id ?? this.snap.layout.focused;
    if (!target || !L.visiblePanes(this.snap.layout).includes(target)) return;
    // A terminal split from a terminal starts in that terminal's working directory.
    // A split in a remote workspace is remote (from a browser pane there too); the directory
    // is the source's only on the same host.
    const remote = hostOf(workspaceOf(this.snap.workspaces, target));
    const src = (this.snap.panes[target]?.remote ?? null) === remote ? this.runtimes.get(target) : undefined;
    const p = this.newPane(null, '', null, null, this.takeId(), { cwd: () => (src ? src.cwd() : Promise.resolve(undefined)) }, remote);
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
    const sc = this.browser.screencast(target);
    if (sc && !this.snap.closing) {
      // The page's beforeunload decides (its dialog shows in the pane): close only on Leave.
      if (await sc.unload()) this.close(target);
      return;
    }
    if (p.kind !== 'terminal' || this.snap.closing) {
      if (!this.snap.closing) this.close(target);
      return;
    }
    const ep = endpointFor(p.remote);
    const ask = (t: string) => ep.get(t).catch(() => null);
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
    if (!close) this.focusTerminal();
    else if ('workspaceId' in q) this.ws.close(q.workspaceId);
    else this.close(q.paneId);
  }

  /**
   * Closes pane `id` (default: the focused one) at once, stopping its terminal and any it
   * kept. A workspace left without panes is closed when there are others, else it starts a
   * fresh terminal.
   */
  close(id: L.PaneId | null) {
    const target = id ?? this.snap.layout.focused;
    if (!target || !this.snap.panes[target]) return;
    const ws = this.workspaceIdOf(target);
    this.disposePane(target);
    const panes = { ...this.snap.panes };
    delete panes[target];
    let order = this.snap.order.filter((o) => o !== target);
    const layout = unemptied(L.close(this.layoutIn(ws), target));
    if (!layout.root && this.snap.workspaces.length > 1) {
      this.ws.drop(ws, { panes, order });
      return;
    }
    if (!layout.root) {
      const p = this.newPane(null, '', null, null, this.takeId(), {}, hostOf(this.snap.workspaces.find((w) => w.id === ws)));
      panes[p.id] = p;
      order = [...order, p.id];
      this.setLayoutIn(ws, L.single(p.id), { panes, order });
      return;
    }
    this.setLayoutIn(ws, layout, { panes, order });
  }

  /** Stops pane `id`'s runtime (its terminal and any it kept, or its browser) and forgets it; the models are the caller's. */
  private disposePane(id: L.PaneId) {
    for (const k of this.snap.panes[id]?.kept ?? []) void api.deleteTerminal(k).catch(() => undefined);
    this.runtimes.get(id)?.close();
    this.runtimes.delete(id);
    this.browser.dispose(id);
    this.notifier.forget(id);
  }

  /** Zooms or unzooms pane `id` (default: the focused one) in its workspace. */
  toggleZoom(id: L.PaneId | null) {
    const ws = this.workspaceIdOf(id);
    this.setLayoutIn(ws, L.toggleZoom(this.layoutIn(ws), id ?? this.snap.layout.focused));
  }

  /** Minimizes pane `id` (default: the focused one) to its workspace's baseboard. */
  minimize(id: L.PaneId | null) {
    const target = id ?? this.snap.layout.focused;
    if (!target) return;
    const ws = this.workspaceIdOf(target);
    this.setLayoutIn(ws, L.minimize(this.layoutIn(ws), target));
  }

  /** Brings minimized pane `id` back to its workspace's wall. */
  restore(id: L.PaneId) {
    const ws = this.workspaceIdOf(id);
    this.setLayoutIn(ws, L.restore(this.layoutIn(ws), id));
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

  /** Performs a prefix-key action (workspace/dispatch.ts maps each to the call here). */
  dispatch(a: Action) {
    const store = this;
    dispatchAction(
      {
        get snap() {
          return store.snap;
        },
        get wall() {
          return store.wall;
        },
        ws: this.ws,
        setLayout: (layout) => this.setLayout(layout),
        split: (id, side) => this.split(id, side),
        requestClose: (id) => this.requestClose(id),
        toggleZoom: (id) => this.toggleZoom(id),
        minimize: (id) => this.minimize(id),
        input: (id, data) => this.runtimes.get(id)?.input(data),
        openBrowser: (ref) => this.openBrowser(ref),
        requestMenu: (id) => this.requestMenu(id),
        nextAttention: () => this.nextAttention(),
        jumpPrompt: (dir) => this.terminals.jumpPrompt(dir),
      },
      a,
    );
  }

  // --- workspaces (DESIGN §14): their actions are `ws` (workspaceActions.ts)

  /** Shows the workspace of pane `id` if it is another than the one on screen. */
  private showWorkspaceOf(id: L.PaneId) {
    const ws = workspaceOf(this.snap.workspaces, id);
    if (ws) this.ws.switchTo(ws.id);
  }

  /** The renderer drawing terminal pane `id` and why (issue 27), or null for another pane or before its terminal opened. */
  terminalRenderer(id: L.PaneId): { kind: 'dom' | 'webgl'; why: string } | null {
    const h = this.runtimes.get(id)?.host;
    return h ? { kind: h.renderer, why: h.rendererWhy } : null;
  }

  // --- browser panes

  /**
   * Opens a browser pane from pane `ref` (default: the focused one) by the placement rule:
   * an untouched terminal is replaced in place (its terminal is deleted; the new pane is a
   * new element), anything else gets a split beside it. With no `url`, the new pane's URL
   * field opens. Returns the new pane's id. `keepSource`: never replace `ref`; `handle`: the
   * new pane's handle (a relayed open's `bN`); `keepFocus`: the focused pane stays focused
   * (a relayed open is focus-neutral) instead of the new pane taking the focus; `isolated`: a
   * screencast whose browser keeps cookies of its own (`ph browser open --isolated`);
   * `remote`: the host whose network the page is on (a remote pane's port, protocol §11).
   */
  openBrowser(
    ref: L.PaneId | null,
    url = '',
    opts: { keepSource?: boolean; origin?: PortOrigin; mode?: RenderMode; handle?: string | null; keepFocus?: boolean; isolated?: boolean; remote?: string | null } = {},
  ): L.PaneId | null {
    const target = ref ?? this.snap.layout.focused;
    if (url && !isHttpUrl(url)) return null;
    // In the workspace of the pane it opens from (a relayed open may come from a hidden one).
    const ws = this.workspaceIdOf(target);
    const base = this.layoutIn(ws);
    const placement = decidePlacement(base, target, this.wall, (id) => {
      const p = this.snap.panes[id];
      if (!p) return undefined;
      // From the context menu the source terminal is always kept, even an untouched one.
      const untouched = !opts.keepSource && p.kind === 'terminal' && this.runtimes.get(id)?.touched === false;
      return { kind: p.kind, untouched };
    });
    if (!placement) return null;
    const p = this.newBrowserPane(url, '', opts.mode ?? modeForUrl(url), opts.handle ?? null, opts.isolated ?? false, opts.remote ?? null);
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
      layout = L.focus(L.replace(base, old, p.id), p.id);
    } else {
      layout = L.split(base, placement.target, placement.side, p.id);
    }
    const before = base.focused;
    if (opts.keepFocus && before !== null && L.leaves(layout.root).includes(before)) layout = { ...layout, focused: before };
    this.setLayoutIn(ws, layout, { panes, order });
    return p.id;
  }

  /** Focuses pane `id`, restoring it first when it is minimized. */
  showPane(id: L.PaneId) {
    this.showWorkspaceOf(id);
    if (this.snap.layout.minimized.includes(id)) this.restore(id);
    else this.focus(id);
  }

  /** Asks the wall to open pane `id`'s context menu (a terminal's, or a browser pane's shorter one). */
  requestMenu(id: L.PaneId | null) {
    if (!id || !this.snap.panes[id]) return;
    this.set({ menuRequest: { paneId: id, nonce: (this.snap.menuRequest?.nonce ?? 0) + 1 } });
  }

  /** Opens or closes pane `id`'s find bar: a screencast pane's finds in the page, a terminal's in its scrollback. */
  setFinding(id: L.PaneId, finding: boolean) {
    if (this.browser.screencast(id)) this.browser.setFinding(id, finding);
    else this.terminals.setFinding(id, finding);
  }

  /** Moves the keyboard focus to the focused pane (its terminal, or a browser pane's body). */
  focusTerminal() {
    const f = this.snap.layout.focused;
    if (f) this.focusKeyboard(f, false);
  }
}
