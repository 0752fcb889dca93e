// The workspace strip (DESIGN §14): one tab per workspace, numbered as the digit keys reach
// them, named (else its focused pane's label), with a badge when a pane inside wants
// attention. Click shows one, double-click (or F2, or Ctrl-b ,) renames, + makes a new one;
// Tab reaches the strip and the arrows move along it.
import { useEffect, useLayoutEffect, useRef, useState, useSyncExternalStore } from 'react';
import { type RemoteLink, remoteLinks } from '../remote/links';
import { RemoteDialog } from '../remote/RemoteDialog';
import { takeLaunchSsh } from '../remote/launch';
import { shortTime } from '../remote/state';
import type { Snapshot } from '../workspace/model';
import type { WorkspaceStore } from '../workspace/store';
import { workspaceLabel } from '../workspace/label';
import { WORKSPACES_MAX, WORKSPACE_NAME_MAX, type Workspace, workspaceNumber } from '../workspace/workspaces';
import * as L from '../layout/engine';
import { keyHint, withHint } from '../keys/hints';

/** The name field of the tab being renamed: Enter keeps the text, Escape or leaving it drops the edit. */
function RenameField({ store, w, label }: { store: WorkspaceStore; w: Workspace; label: string }) {
  const ref = useRef<HTMLInputElement>(null);
  const done = useRef(false);
  useLayoutEffect(() => {
    ref.current?.focus();
    ref.current?.select();
  }, []);
  const finish = (name: string | null) => {
    if (done.current) return;
    done.current = true;
    store.ws.rename(w.id, name);
  };
  return (
    <input
      ref={ref}
      className="ws-rename"
      data-testid="ws-rename"
      aria-label="Workspace name"
      defaultValue={w.name || label}
      maxLength={WORKSPACE_NAME_MAX}
      size={Math.max(6, Math.min(24, (w.name || label).length + 1))}
      onKeyDown={(e) => {
        e.stopPropagation();
        if (e.key === 'Enter') finish(e.currentTarget.value);
        else if (e.key === 'Escape') finish(null);
      }}
      onBlur={() => finish(null)}
    />
  );
}

/** ` (Ctrl-b 3)`: the key that shows the workspace at `index`, '' when none does. */
function hintOf(keymap: Parameters<typeof keyHint>[0], index: number): string {
  const hint = index < 10 ? keyHint(keymap, { kind: 'selectWorkspace', digit: (index + 1) % 10 }) : null;
  return hint ? ` (${hint})` : '';
}

/**
 * A remote workspace's host and link state: a dot (connected, with the round trip in the
 * tooltip; reconnecting; lost since T) and, while not connected, Reconnect.
 */
function RemoteState({ host, link }: { host: string; link: RemoteLink | undefined }) {
  const state = link?.state ?? 'connecting';
  const tip =
    state === 'connected'
      ? `${host}: connected${link?.rttMs != null ? ` · ${link.rttMs.toFixed(1)} ms round trip` : ''}`
      : state === 'reconnecting'
        ? `${host}: reconnecting since ${shortTime(link!.since)}${link?.lastError ? ` (${link.lastError})` : ''}`
        : state === 'lost'
          ? `${host}: lost since ${shortTime(link!.since)}${link?.lastError ? ` (${link.lastError})` : ''}`
          : `${host}: connecting…`;
  return (
    <span className="ws-remote" data-testid="ws-remote" data-state={state} title={tip}>
      <span className={`ws-remote-dot ${state}`} data-testid="ws-remote-dot" aria-label={tip} />
      <span className="ws-remote-host">{host}</span>
      {state === 'lost' && <span className="ws-remote-since">lost since {shortTime(link!.since)}</span>}
      {(state === 'lost' || state === 'reconnecting') && (
        <span
          className="ws-remote-reconnect"
          data-testid="ws-remote-reconnect"
          role="button"
          tabIndex={-1}
          title={`Reconnect to ${host} now`}
          onClick={(e) => {
            e.stopPropagation();
            void remoteLinks.reconnect(host).catch(() => undefined);
          }}
        >
          Reconnect
        </span>
      )}
    </span>
  );
}

/** The strip of workspaces, at the start of the baseboard. */
export function WorkspaceStrip({ store, snap }: { store: WorkspaceStore; snap: Snapshot }) {
  // The keys as the config binds them now (a tooltip read at render is fresh enough).
  const keymap = store.settings.config;
  const links = useSyncExternalStore(remoteLinks.subscribe, remoteLinks.getSnapshot);
  const [remoteOpen, setRemoteOpen] = useState(false);
  // `porthole --ssh HOST` / `?ssh=HOST`: once the wall is loaded, the dialog opens connecting.
  const [launchHost, setLaunchHost] = useState<string | null>(() => takeLaunchSsh());
  const [dialogHost, setDialogHost] = useState<string | undefined>(undefined);
  useEffect(() => {
    if (!snap.ready || launchHost === null) return;
    setDialogHost(launchHost);
    setLaunchHost(null);
    setRemoteOpen(true);
  }, [snap.ready, launchHost]);
  return (
    <div className="ws-strip" role="tablist" aria-label="Workspaces" data-testid="ws-strip">
      {snap.workspaces.map((w, i) => {
        const active = w.id === snap.active;
        const layout = active ? snap.layout : w.layout;
        const label = workspaceLabel({ ...w, layout }, snap.panes);
        const wants = L.allPanes(layout).some((p) => snap.panes[p]?.attention);
        const n = workspaceNumber(i);
        if (snap.renaming === w.id) {
          return (
            <span key={w.id} className="ws-tab renaming" data-testid="ws-tab" data-ws-id={w.id} data-active={active ? 'true' : 'false'}>
              <span className="ws-num">{n}</span>
              <RenameField store={store} w={w} label={label} />
            </span>
          );
        }
        return (
          <button
            key={w.id}
            role="tab"
            aria-selected={active}
            className={`ws-tab${active ? ' active' : ''}${w.host ? ' remote' : ''}`}
            data-testid="ws-tab"
            data-ws-id={w.id}
            data-host={w.host ?? undefined}
            data-active={active ? 'true' : 'false'}
            title={`${label || 'workspace'}${hintOf(keymap, i)} · double-click to rename`}
            onClick={() => (active ? store.focusTerminal() : store.ws.switchTo(w.id))}
            onDoubleClick={() => store.ws.startRename(w.id)}
            onKeyDown={(e) => {
              if (e.key === 'F2') {
                e.preventDefault();
                store.ws.startRename(w.id);
              } else if (e.key === 'ArrowLeft' || e.key === 'ArrowRight') {
                // The tablist pattern: arrows move between tabs (wrapping); Enter or Space shows one.
                e.preventDefault();
                const all = Array.from(e.currentTarget.parentElement?.querySelectorAll<HTMLButtonElement>('button.ws-tab') ?? []);
                const at = all.indexOf(e.currentTarget);
                all[(at + (e.key === 'ArrowRight' ? 1 : -1) + all.length) % all.length]?.focus();
              }
            }}
          >
            <span className="ws-num">{n}</span>
            {label && label !== w.host && <span className="ws-name" data-testid="ws-name">{label}</span>}
            {w.host && <RemoteState host={w.host} link={links.find((l) => l.host === w.host)} />}
            {wants && (
              <span className="ws-attention" data-testid="ws-attention" title="A pane here wants your attention">
                ●
              </span>
            )}
          </button>
        );
      })}
      <button
        className="ws-new"
        data-testid="ws-new"
        title={withHint('New workspace', keymap, { kind: 'newWorkspace' })}
        aria-label="New workspace"
        disabled={snap.workspaces.length >= WORKSPACES_MAX}
        onClick={() => store.ws.create()}
      >
        +
      </button>
      <button
        className="ws-new ws-new-remote"
        data-testid="ws-new-remote"
        title="New remote workspace…"
        aria-label="New remote workspace…"
        disabled={snap.workspaces.length >= WORKSPACES_MAX}
        onClick={() => {
          setDialogHost(undefined);
          setRemoteOpen(true);
        }}
      >
        ⇄
      </button>
      {remoteOpen && (
        <RemoteDialog
          store={store}
          initialHost={dialogHost}
          onClose={() => {
            setRemoteOpen(false);
            store.focusTerminal();
          }}
        />
      )}
    </div>
  );
}
