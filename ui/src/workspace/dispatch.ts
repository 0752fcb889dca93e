// The prefix key's actions (keys/prefix.ts) mapped onto the workspace: one table from an
// `Action` to the store call that performs it. No state; the store passes itself as the host.
import * as L from '../layout/engine';
import type { Action } from '../keys/prefix';
import { byDigit } from './workspaces';
import type { Snapshot } from './model';
import type { WorkspaceActions } from './workspaceActions';

/** What the actions reach (the store). */
export interface ActionHost {
  readonly snap: Snapshot;
  readonly wall: L.Rect;
  readonly ws: WorkspaceActions;
  setLayout(layout: L.LayoutState): void;
  split(id: L.PaneId | null, side: L.SplitSide): void;
  requestClose(id: L.PaneId | null): Promise<void>;
  toggleZoom(id: L.PaneId | null): void;
  minimize(id: L.PaneId | null): void;
  /** writes `data` to pane `id`'s terminal */
  input(id: L.PaneId, data: string): void;
  openBrowser(ref: L.PaneId | null): unknown;
  requestMenu(id: L.PaneId | null): void;
  nextAttention(): boolean;
  jumpPrompt(dir: -1 | 1): void;
}

/** Performs action `a` on the workspace on screen (its focused pane where it acts on one). */
export function dispatchAction(h: ActionHost, a: Action): void {
  const s = h.snap.layout;
  switch (a.kind) {
    case 'splitRight':
      return h.split(null, 'right');
    case 'splitDown':
      return h.split(null, 'down');
    case 'focusDir':
      return h.setLayout(L.focusDirection(s, a.dir, h.wall));
    case 'focusNext':
      return h.setLayout(L.focusNext(s));
    case 'close':
      return void h.requestClose(null);
    case 'zoom':
      return h.toggleZoom(null);
    case 'minimize':
      return h.minimize(null);
    case 'swapPrev':
      return void (s.focused && h.setLayout(L.swap(s, s.focused, 'prev')));
    case 'swapNext':
      return void (s.focused && h.setLayout(L.swap(s, s.focused, 'next')));
    case 'sendPrefix':
      return void (s.focused && h.input(s.focused, '\x02'));
    case 'openBrowser':
      return void h.openBrowser(null);
    case 'contextMenu':
      return h.requestMenu(s.focused);
    case 'nextAttention':
      return void h.nextAttention();
    case 'promptPrev':
      return h.jumpPrompt(-1);
    case 'promptNext':
      return h.jumpPrompt(1);
    case 'newWorkspace':
      return void h.ws.create();
    case 'nextWorkspace':
      return h.ws.cycle(1);
    case 'prevWorkspace':
      return h.ws.cycle(-1);
    case 'selectWorkspace': {
      const id = byDigit(h.snap.workspaces, a.digit);
      return id ? h.ws.switchTo(id) : undefined;
    }
    case 'renameWorkspace':
      return h.ws.startRename();
    case 'closeWorkspace':
      return void h.ws.requestClose();
    case 'breakPane':
      return void (s.focused ? h.ws.movePane(s.focused, 'new') : undefined);
  }
}
