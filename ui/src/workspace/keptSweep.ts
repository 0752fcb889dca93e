// The terminals panes keep for their survivors (`PaneModel.kept`): what still runs in them is
// recorded for the header, and a kept terminal is deleted once nothing runs in it any more.
// One sweep at a time; the API is injected (tests pass a fake).
import { ApiError, type api } from '../api/client';
import type { Survivor } from '../api/protocol';
import type * as L from '../layout/engine';
import type { PaneModel, Snapshot } from './model';

/** The calls a sweep makes (a subset of `api`). */
export type SweepApi = Pick<typeof api, 'getTerminal' | 'deleteTerminal'>;

export interface SweepHost {
  readonly snap: Snapshot;
  updatePane(id: L.PaneId, patch: Partial<PaneModel>): void;
}

export class KeptSweeper {
  private sweeping = false;

  constructor(
    private readonly host: SweepHost,
    private readonly calls: SweepApi,
  ) {}

  /**
   * Checks every pane's kept terminals: records what still runs in them (`keptSurvivors`),
   * deletes the ones in which nothing runs, and forgets the ones already gone (404); one the
   * sidecar could not answer for is asked again next time. A call while a sweep runs does
   * nothing. Terminals kept while a sweep runs stay for the next one.
   */
  async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      for (const id of this.host.snap.order) {
        const kept = this.host.snap.panes[id]?.kept;
        if (!kept?.length) continue;
        const left: string[] = [];
        const survivors: Survivor[] = [];
        for (const t of kept) {
          try {
            const list = (await this.calls.getTerminal(t)).survivors ?? [];
            if (list.length) {
              left.push(t);
              survivors.push(...list);
            } else await this.calls.deleteTerminal(t).catch(() => undefined);
          } catch (e) {
            if (!(e instanceof ApiError && e.status === 404)) left.push(t); // unknown: ask again later
          }
        }
        const now = this.host.snap.panes[id]?.kept;
        if (!now) continue;
        const next = now.filter((t) => left.includes(t) || !kept.includes(t));
        const same = next.length === now.length && survivorKey(survivors) === survivorKey(this.host.snap.panes[id]?.keptSurvivors ?? []);
        if (!same) this.host.updatePane(id, { kept: next, keptSurvivors: survivors });
      }
    } finally {
      this.sweeping = false;
    }
  }
}

/** Survivors compared by pid and name. */
function survivorKey(list: readonly Survivor[]): string {
  return list.map((s) => `${s.pid}:${s.name}`).join(',');
}
