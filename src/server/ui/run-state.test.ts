import { describe, expect, it } from 'vitest';
import type { JournalEntry, JournalEvent, RunRecord } from '../../store/index.js';
import { runPageState } from './run-state.js';

const at = (s: number) => new Date(Date.UTC(2026, 2, 1, 10, 0, s)).toISOString();
const journal = (events: Array<[number, JournalEvent]>): JournalEntry[] =>
  events.map(([second, event], index) => ({ runId: 'r1', seq: index + 1, at: at(second), event }));
const run = (status: string, endedAt?: string) =>
  ({ id: 'r1', playbook: 'p', status, startedAt: at(0), ...(endedAt ? { endedAt } : {}) }) as RunRecord;

const wait = { reason: 'approval' as const, path: 'gate', since: at(2), message: 'go?' };
const waiting: Array<[number, JournalEvent]> = [
  [1, { type: 'step.finished', path: 'first', status: 'succeeded', stepId: 'first', kind: 'log' }],
  [2, { type: 'step.started', path: 'gate', stepId: 'gate', kind: 'approval' }],
  [2, { type: 'run.waiting', path: 'gate', wait }],
  [2, { type: 'step.finished', path: 'gate', status: 'interrupted' }],
];

describe('the run page state', () => {
  it('draws a gate the run waits at as waiting, with an open wait', () => {
    const state = runPageState(run('waiting'), journal(waiting), 100);
    expect(state.tree.map((node) => `${node.path} ${node.status}`)).toEqual(['first succeeded', 'gate waiting']);
    expect(state.waits).toEqual([{ path: 'gate', reason: 'approval', since: at(2) }]);
    expect(state.lastSeq).toBe(4);
  });

  it('ends the wait at the decision, and keeps who decided and why', () => {
    const decided = journal([
      ...waiting,
      [9, { type: 'approval.decided', path: 'gate', decision: 'approved', by: 'ops lead', at: at(9), comment: 'fine' }],
      [9, { type: 'step.started', path: 'gate', stepId: 'gate', kind: 'approval' }],
      [9, { type: 'step.finished', path: 'gate', status: 'succeeded' }],
    ]);
    const state = runPageState(run('succeeded', at(10)), decided, 100);
    expect(state.tree.map((node) => node.status)).toEqual(['succeeded', 'succeeded']);
    expect(state.waits).toEqual([
      { path: 'gate', reason: 'approval', since: at(2), endedAt: at(9), outcome: 'approved by ops lead' },
    ]);
    expect(state.decisions).toEqual([
      { path: 'gate', decision: 'approved', by: 'ops lead', at: at(9), comment: 'fine' },
    ]);
  });

  it('ends a gate cancelled while it waited as cancelled, not interrupted', () => {
    const cancelled = journal([...waiting, [5, { type: 'run.cancelled', path: '', by: 'ops lead', requested: false }]]);
    const state = runPageState(run('cancelled', at(5)), cancelled, 100);
    expect(state.tree.map((node) => node.status)).toEqual(['succeeded', 'cancelled']);
    expect(state.waits[0]).toMatchObject({ endedAt: at(5), outcome: 'cancelled by ops lead' });
  });
});
