import { describe, expect, it } from 'vitest';
import { InstrumentationJudge } from './instrumentation';

type Ev = ['source'] | ['report', number] | ['load', number] | ['check', number];

function run(events: Ev[]): Array<string | null> {
  const j = new InstrumentationJudge();
  const out: Array<string | null> = [];
  for (const e of events) {
    if (e[0] === 'source') j.newSource();
    else if (e[0] === 'report') out.push(j.report(e[1]));
    else if (e[0] === 'load') out.push(j.load(e[1]));
    else if (e[0] === 'check') out.push(j.check(e[1]));
  }
  return out;
}

describe('InstrumentationJudge', () => {
  const cases: Array<[string, Ev[], Array<string | null>]> = [
    ['report before load (DOMContentLoaded) counts', [['source'], ['report', 100], ['load', 150]], ['instrumented', 'instrumented']],
    ['report up to 250 ms before load counts', [['source'], ['report', 100], ['load', 350]], ['instrumented', 'instrumented']],
    ['a report long before the load does not', [['report', 100], ['load', 400], ['check', 1400]], ['instrumented', null, 'uninstrumented']],
    ['report after load within the wait', [['source'], ['load', 100], ['report', 600], ['check', 1100]], [null, 'instrumented', null]],
    ['no report: uninstrumented after 1 s', [['source'], ['load', 100], ['check', 1100]], [null, 'uninstrumented']],
    ['checked too early: no verdict yet', [['source'], ['load', 100], ['check', 900], ['check', 1100]], [null, null, 'uninstrumented']],
    ['the page being left cannot vouch for a new source', [['report', 100], ['source'], ['load', 150], ['check', 1150]], ['instrumented', null, 'uninstrumented']],
    ['one verdict per load', [['source'], ['load', 100], ['check', 1100], ['check', 2100]], [null, 'uninstrumented', null]],
    ['a later instrumented load after an uninstrumented one', [['load', 0], ['check', 1000], ['report', 1500], ['load', 1600]], [null, 'uninstrumented', 'instrumented', 'instrumented']],
  ];
  for (const [name, events, want] of cases) it(name, () => expect(run(events)).toEqual(want));
});
