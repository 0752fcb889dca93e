import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/client';
import type { Survivor, TerminalInfo } from '../api/protocol';
import { KeptSweeper, type SweepApi } from './keptSweep';
import { type PaneModel, type Snapshot, terminalModel } from './model';

/** A wall of terminal panes and a fake sidecar: `running[t]` is what runs in terminal t (absent: gone). */
function setup(kept: Record<string, string[]>, running: Record<string, Survivor[] | 'error'>) {
  const panes: Record<string, PaneModel> = {};
  for (const [id, k] of Object.entries(kept)) panes[id] = { ...terminalModel(id, `t${id}`), kept: k };
  const snap = { panes, order: Object.keys(kept) } as unknown as Snapshot;
  const host = {
    snap,
    updatePane(id: string, patch: Partial<PaneModel>) {
      host.snap = { ...host.snap, panes: { ...host.snap.panes, [id]: { ...host.snap.panes[id], ...patch } } };
      updates.push(id);
    },
  };
  const updates: string[] = [];
  const deleted: string[] = [];
  let gate: Promise<void> = Promise.resolve();
  const calls: SweepApi = {
    getTerminal: async (t) => {
      await gate;
      const r = running[t];
      if (r === undefined) throw new ApiError(404, 'not_found', 'gone');
      if (r === 'error') throw new ApiError(0, 'network', 'no answer');
      return { id: t, survivors: r } as unknown as TerminalInfo;
    },
    deleteTerminal: async (t) => {
      deleted.push(t);
    },
  };
  const sweeper = new KeptSweeper(host, calls);
  return { host, sweeper, updates, deleted, hold: (p: Promise<void>) => (gate = p) };
}

describe('KeptSweeper', () => {
  it('keeps terminals something runs in, deletes idle ones, forgets gone ones, keeps unanswered ones', async () => {
    const vim: Survivor = { pid: 7, name: 'vim' };
    const { host, sweeper, deleted } = setup({ p1: ['t1', 't2', 't3', 't4'] }, { t1: [vim], t2: [], t4: 'error' });
    await sweeper.sweep();
    expect(host.snap.panes.p1.kept).toEqual(['t1', 't4']);
    expect(host.snap.panes.p1.keptSurvivors).toEqual([vim]);
    expect(deleted).toEqual(['t2']);
  });

  it('an unchanged pane is not updated again', async () => {
    const { sweeper, updates } = setup({ p1: ['t1'] }, { t1: [{ pid: 1, name: 'sleep' }] });
    await sweeper.sweep();
    await sweeper.sweep();
    expect(updates).toEqual(['p1']);
  });

  it('one sweep at a time; a terminal kept while it runs stays for the next', async () => {
    const { host, sweeper, hold } = setup({ p1: ['t1'] }, { t1: [] });
    let release!: () => void;
    hold(new Promise<void>((r) => (release = r)));
    const first = sweeper.sweep();
    const second = sweeper.sweep(); // does nothing: one is running
    host.snap = { ...host.snap, panes: { ...host.snap.panes, p1: { ...host.snap.panes.p1, kept: ['t1', 't9'] } } };
    release();
    await Promise.all([first, second]);
    expect(host.snap.panes.p1.kept).toEqual(['t9']);
  });
});
