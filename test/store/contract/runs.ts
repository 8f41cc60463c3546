import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunStore } from '../../../src/store/types.js';
import { driven, manualClock, newRun, type StoreFactory } from './kit.js';

/** The runs facet of the RunStore contract. */
export function describeRunsContract(factory: StoreFactory): void {
  describe('runs', () => {
    let clock: ReturnType<typeof manualClock>;
    let store: RunStore;

    beforeEach(async () => {
      clock = manualClock();
      store = driven(await factory.open({ now: clock.now }));
    });
    afterEach(async () => {
      await store.close();
    });

    it('creates a run as running, and reads it back', async () => {
      const created = await store.createRun(
        newRun('r1', { trigger: { kind: 'schedule', scheduleId: 'nightly' }, dryRun: true }),
      );
      expect(created).toEqual({
        ...newRun('r1', { trigger: { kind: 'schedule', scheduleId: 'nightly' }, dryRun: true }),
        defaultedSecretInputs: [],
        status: 'running',
        resumes: 0,
      });
      expect(await store.getRun('r1')).toEqual(created);
      // Which secrets took their default is kept (names only), for a resume to know which to ask for.
      await store.createRun(newRun('r1b', { defaultedSecretInputs: ['webhookToken'] }));
      expect((await store.getRun('r1b'))?.defaultedSecretInputs).toEqual(['webhookToken']);
      expect(await store.getRun('nope')).toBeUndefined();
    });

    it('counts runs by playbook and status in one grouped count', async () => {
      expect(await store.countRuns()).toEqual([]);
      await store.createRun(newRun('c1', { playbook: 'alpha' }));
      await store.createRun(newRun('c2', { playbook: 'alpha' }));
      await store.createRun(newRun('c3', { playbook: 'beta' }));
      await store.setRunStatus('c2', 'succeeded');
      await store.createRun(newRun('c4', { playbook: 'alpha' }));
      await store.setRunStatus('c4', 'succeeded');
      expect(await store.countRuns()).toEqual([
        { playbook: 'alpha', status: 'running', count: 1 },
        { playbook: 'alpha', status: 'succeeded', count: 2 },
        { playbook: 'beta', status: 'running', count: 1 },
      ]);
    });

    it('reads a running run whose lease lapsed or is absent as interrupted, everywhere, and cancels it at once', async () => {
      const raw = Object.getPrototypeOf(store) as RunStore;
      await store.createRun(newRun('live'));
      await raw.acquireLease('run:dying', 'driver-b', 60_000);
      await raw.createRun(newRun('dying'));
      await raw.createRun(newRun('orphan'));
      expect((await store.getRun('orphan'))?.status).toBe('interrupted');
      expect((await store.getRun('dying'))?.status).toBe('running');
      // Its driver was killed: its lease is not renewed, and lapses.
      clock.advance(60_000);
      expect((await store.getRun('dying'))?.status).toBe('interrupted');
      expect((await store.getRun('live'))?.status).toBe('running');
      expect((await store.listRuns()).map((run) => [run.id, run.status])).toEqual([
        ['orphan', 'interrupted'],
        ['dying', 'interrupted'],
        ['live', 'running'],
      ]);
      expect((await store.listRuns({ status: 'running' })).map((run) => run.id)).toEqual(['live']);
      expect((await store.listRuns({ status: 'interrupted' })).map((run) => run.id)).toEqual(['orphan', 'dying']);
      expect(await store.countRuns()).toEqual([
        { playbook: 'rolling-cluster-update', status: 'interrupted', count: 2 },
        { playbook: 'rolling-cluster-update', status: 'running', count: 1 },
      ]);
      // Nothing drives it: a cancel ends it at once, as for any interrupted run.
      expect(await store.cancelRun('dying', 'alice')).toEqual({ outcome: 'cancelled' });
      expect((await store.getRun('dying'))?.status).toBe('cancelled');
      // A resume takes the lease again: running once more.
      await raw.acquireLease('run:orphan', 'resumer', 60_000);
      await store.markResumed('orphan');
      expect((await store.getRun('orphan'))?.status).toBe('running');
    });

    it('refuses a second run with the same id', async () => {
      await store.createRun(newRun('r1'));
      await expect(store.createRun(newRun('r1'))).rejects.toMatchObject({ code: 'RUN_EXISTS' });
    });

    it('ends a run with its outputs or error, and a resume counts and reopens it', async () => {
      await store.createRun(newRun('r1'));
      clock.advance(60_000);
      await store.setRunStatus('r1', 'failed', {
        error: { message: 'update failed', code: 'OPERATION_FAILED', httpStatus: 400 },
      });
      expect(await store.getRun('r1')).toMatchObject({
        status: 'failed',
        endedAt: '2026-03-01T10:01:00.000Z',
        error: { message: 'update failed' },
      });
      await store.markResumed('r1');
      const resumed = await store.getRun('r1');
      expect(resumed).toMatchObject({ status: 'running', resumes: 1 });
      expect(resumed).not.toHaveProperty('endedAt');
      expect(resumed).not.toHaveProperty('error');
      await store.setRunStatus('r1', 'succeeded', { outputs: { updated: 3 } });
      expect(await store.getRun('r1')).toMatchObject({ status: 'succeeded', outputs: { updated: 3 }, resumes: 1 });
      await expect(store.setRunStatus('nope', 'failed')).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
      await expect(store.markResumed('nope')).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
    });

    it('lists runs newest first, filtered by playbook, status and start time, limited', async () => {
      await store.createRun(newRun('old', { startedAt: '2026-02-01T00:00:00.000Z' }));
      await store.createRun(newRun('export', { playbook: 'nightly-export', startedAt: '2026-02-20T00:00:00.000Z' }));
      await store.createRun(newRun('new', { startedAt: '2026-02-28T00:00:00.000Z' }));
      await store.createRun(newRun('same-instant', { startedAt: '2026-02-28T00:00:00.000Z' }));
      await store.setRunStatus('new', 'failed');
      const ids = async (filter?: Parameters<RunStore['listRuns']>[0]) =>
        (await store.listRuns(filter)).map((run) => run.id);
      expect(await ids()).toEqual(['same-instant', 'new', 'export', 'old']);
      expect(await ids({ playbook: 'rolling-cluster-update' })).toEqual(['same-instant', 'new', 'old']);
      expect(await ids({ status: 'failed' })).toEqual(['new']);
      expect(await ids({ since: '2026-02-20T00:00:00Z' })).toEqual(['same-instant', 'new', 'export']);
      expect(await ids({ limit: 2 })).toEqual(['same-instant', 'new']);
      expect(await ids({ idPrefix: 'ne' })).toEqual(['new']);
      // A prefix is text, not a pattern.
      expect(await ids({ idPrefix: '%' })).toEqual([]);
      await expect(store.listRuns({ since: 'last week' })).rejects.toMatchObject({ code: 'STORE_INVALID_ARGUMENT' });
    });

    it('prunes runs that ended before the cutoff, with their journals, never a running one', async () => {
      await store.createRun(newRun('ended-old', { startedAt: '2026-01-01T00:00:00.000Z' }));
      await store.createRun(newRun('running-old', { startedAt: '2026-01-01T00:00:00.000Z' }));
      await store.append('ended-old', { type: 'step.started', path: 'a', stepId: 'a', kind: 'set' });
      await store.setRunStatus('ended-old', 'succeeded');
      clock.advance(86_400_000);
      await store.createRun(newRun('ended-new'));
      await store.setRunStatus('ended-new', 'interrupted');
      expect(await store.prune('2026-03-02T00:00:00.000Z')).toBe(1);
      expect(await store.getRun('ended-old')).toBeUndefined();
      expect(await store.journal('ended-old')).toEqual([]);
      expect((await store.listRuns()).map((run) => run.id).sort()).toEqual(['ended-new', 'running-old']);
      expect(await store.prune('2026-03-02T00:00:00.000Z')).toBe(0);
    });

    it('lists runs started at or before `until`, newest first (the server pages with it)', async () => {
      for (const [id, startedAt] of [
        ['a', '2026-03-01T10:00:00.000Z'],
        ['b', '2026-03-01T11:00:00.000Z'],
        ['c', '2026-03-01T11:00:00.000Z'],
        ['d', '2026-03-01T12:00:00.000Z'],
      ] as const)
        await store.createRun(newRun(id, { startedAt }));
      expect((await store.listRuns({ until: '2026-03-01T11:00:00.000Z' })).map((run) => run.id)).toEqual([
        'c',
        'b',
        'a',
      ]);
      expect((await store.listRuns({ until: '2026-03-01T11:00:00.000Z', limit: 1 })).map((run) => run.id)).toEqual([
        'c',
      ]);
    });

    it('keeps a waiting run with what it waits for, lists it when due, and ends the wait once', async () => {
      await store.createRun(newRun('w1'));
      const wait = {
        reason: 'approval' as const,
        path: 'gate',
        since: '2026-03-01T10:00:00.000Z',
        timeoutAt: '2026-03-01T11:00:00.000Z',
        approvers: ['alice'],
        onTimeout: 'fail' as const,
      };
      await store.append('w1', { type: 'run.waiting', path: 'gate', wait });
      await store.suspendRun('w1', wait);
      const waiting = await store.getRun('w1');
      expect(waiting).toMatchObject({ status: 'waiting', wait });
      expect(waiting?.endedAt).toBeUndefined();
      expect((await store.listRuns({ status: 'waiting' })).map((run) => run.id)).toEqual(['w1']);
      // Due once its timeout passed, not before.
      expect(await store.listDueWaits('2026-03-01T10:59:59.000Z')).toEqual([]);
      expect((await store.listDueWaits('2026-03-01T11:00:00.000Z')).map((run) => run.id)).toEqual(['w1']);

      const decision = {
        type: 'approval.decided' as const,
        path: 'gate',
        decision: 'approved' as const,
        by: 'alice',
        at: '2026-03-01T10:30:00.000Z',
      };
      const timedOut = { ...decision, decision: 'timedOut' as const, by: 'timeout' };
      const ending = { path: 'gate', at: decision.at, decision, due: timedOut, next: 'queued' as const };
      const [first, second] = await Promise.all([
        store.endWait('w1', ending),
        store.endWait('w1', { ...ending, decision: { ...decision, by: 'bob' } }),
      ]);
      expect([first, second].sort()).toEqual(['decided', 'notWaiting']);
      const decided = await store.getRun('w1');
      expect(decided?.status).toBe('queued');
      expect(decided?.wait).toBeUndefined();
      const decisions = (await store.journal('w1')).filter((entry) => entry.event.type === 'approval.decided');
      expect(decisions).toHaveLength(1);
      expect(await store.listDueWaits('2026-03-02T00:00:00.000Z')).toEqual([]);
      // Resumed: running again, nothing of the wait left.
      await store.markResumed('w1');
      expect(await store.getRun('w1')).toMatchObject({ status: 'running', resumes: 1 });
    });

    it('ends a wait by its due time, in the transaction that would record a decision', async () => {
      await store.createRun(newRun('d1'));
      const wait = {
        reason: 'approval' as const,
        path: 'gate',
        since: '2026-03-01T10:00:00.000Z',
        timeoutAt: '2026-03-01T11:00:00.000Z',
        onTimeout: 'fail' as const,
      };
      await store.suspendRun('d1', wait);
      const decision = {
        type: 'approval.decided' as const,
        path: 'gate',
        decision: 'approved' as const,
        by: 'alice',
        at: '2026-03-01T11:00:00.000Z',
      };
      const due = { ...decision, decision: 'timedOut' as const, by: 'timeout' };
      // Before the due time: a sweep or a resume ends nothing; a wait at another step is not this one.
      expect(await store.endWait('d1', { path: 'gate', at: '2026-03-01T10:59:59.999Z', due, next: 'queued' })).toBe(
        'notDue',
      );
      expect(await store.endWait('d1', { path: 'other', at: decision.at, decision, due, next: 'queued' })).toBe(
        'notWaiting',
      );
      expect((await store.getRun('d1'))?.status).toBe('waiting');
      // A decision at the due time itself comes too late: the timeout is recorded instead.
      expect(await store.endWait('d1', { path: 'gate', at: decision.at, decision, due, next: 'interrupted' })).toBe(
        'due',
      );
      expect(await store.getRun('d1')).toMatchObject({ status: 'interrupted' });
      expect((await store.journal('d1')).map((entry) => entry.event)).toEqual([due]);
      expect(await store.endWait('d1', { path: 'gate', at: decision.at, due, next: 'queued' })).toBe('notWaiting');
    });

    it("keeps an approval short of the gate's required in its wait, only on the count its decider read", async () => {
      await store.createRun(newRun('k1'));
      const wait = {
        reason: 'approval' as const,
        path: 'gate',
        since: '2026-03-01T10:00:00.000Z',
        timeoutAt: '2026-03-01T11:00:00.000Z',
        required: 2,
      };
      await store.suspendRun('k1', wait);
      const alice = { decision: 'approved' as const, by: 'alice', at: '2026-03-01T10:10:00.000Z' };
      const given = { type: 'approval.given' as const, path: 'gate', of: 2, ...alice };
      const due = {
        type: 'approval.decided' as const,
        path: 'gate',
        decision: 'timedOut' as const,
        by: 'timeout',
        at: alice.at,
      };
      const keeping = {
        path: 'gate',
        at: alice.at,
        decision: given,
        due,
        next: 'waiting' as const,
        approvalsSeen: 0,
        keep: { ...wait, approvals: [alice] },
      };
      // Two at once on the same count: one is kept, the other finds the count changed.
      const outcomes = await Promise.all([store.endWait('k1', keeping), store.endWait('k1', keeping)]);
      expect(outcomes.sort()).toEqual(['changed', 'kept']);
      const kept = await store.getRun('k1');
      expect(kept).toMatchObject({ status: 'waiting', wait: { path: 'gate', approvals: [alice] } });
      expect(await store.listDueWaits('2026-03-01T11:00:00.000Z')).toMatchObject([{ id: 'k1' }]);
      const bob = {
        type: 'approval.decided' as const,
        path: 'gate',
        decision: 'approved' as const,
        by: 'bob',
        at: alice.at,
        approvals: [alice],
      };
      expect(
        await store.endWait('k1', { path: 'gate', at: alice.at, decision: bob, due, next: 'queued', approvalsSeen: 1 }),
      ).toBe('decided');
      expect(await store.getRun('k1')).toMatchObject({ status: 'queued' });
      expect((await store.journal('k1')).map((entry) => entry.event)).toEqual([given, bob]);
    });

    it('cancels a waiting run at once, asks a running one to stop, and leaves an ended one', async () => {
      await store.createRun(newRun('c1'));
      await store.suspendRun('c1', {
        reason: 'window',
        path: 'systems',
        since: '2026-03-01T10:00:00.000Z',
        until: '2026-03-07T00:00:00.000Z',
      });
      expect(await store.cancelRun('c1', 'alice')).toEqual({ outcome: 'cancelled' });
      const cancelled = await store.getRun('c1');
      expect(cancelled).toMatchObject({ status: 'cancelled', error: { code: 'RUN_CANCELLED' } });
      expect(cancelled?.endedAt).toBe('2026-03-01T10:00:00.000Z');
      expect(cancelled?.wait).toBeUndefined();
      // No longer waiting: a decision arriving late changes nothing.
      expect(
        await store.endWait('c1', {
          path: 'systems',
          at: '2026-03-01T10:00:00.000Z',
          decision: { type: 'approval.decided', path: 'systems', decision: 'approved', by: 'x', at: 'now' },
          due: { type: 'wait.ended', path: 'systems', reason: 'window', at: 'now' },
          next: 'queued',
        }),
      ).toBe('notWaiting');

      await store.createRun(newRun('c2'));
      expect(await store.cancelRun('c2', 'bob')).toEqual({ outcome: 'requested' });
      expect(await store.getRun('c2')).toMatchObject({
        status: 'running',
        cancelRequested: { by: 'bob', at: '2026-03-01T10:00:00.000Z' },
      });
      expect((await store.journal('c2')).map((entry) => entry.event)).toEqual([
        { type: 'run.cancelled', path: '', by: 'bob', requested: true },
      ]);

      await store.createRun(newRun('c3'));
      await store.setRunStatus('c3', 'succeeded');
      expect(await store.cancelRun('c3', 'bob')).toEqual({ outcome: 'ended', status: 'succeeded' });
      await expect(store.cancelRun('nope', 'bob')).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
    });

    it('ends a run cancelled when its cancel was recorded before its driver wrote its end, and refuses one after', async () => {
      const mail = (runId: string) => ({
        key: `${runId}/succeeded/r0/ops`,
        runId,
        event: 'succeeded',
        segment: 'r0',
        channel: 'ops',
        message: {},
      });
      // The driver's last step finished; the cancel comes before it writes the end: the cancel wins.
      await store.createRun(newRun('late'));
      expect(await store.cancelRun('late', 'alice')).toEqual({ outcome: 'requested' });
      expect(await store.setRunStatus('late', 'succeeded', { outputs: { n: 1 }, notifications: [mail('late')] })).toBe(
        'cancelled',
      );
      expect(await store.getRun('late')).toMatchObject({
        status: 'cancelled',
        outputs: { n: 1 },
        error: { code: 'RUN_CANCELLED', message: 'run late was cancelled by alice' },
      });
      expect(await store.listNotifications({ runId: 'late' })).toEqual([]);
      // A driver going to wait: the same.
      await store.createRun(newRun('late-wait'));
      await store.cancelRun('late-wait', 'alice');
      expect(await store.suspendRun('late-wait', { reason: 'approval', path: 'gate', since: 'now' })).toBe('cancelled');
      expect(await store.getRun('late-wait')).toMatchObject({ status: 'cancelled', error: { code: 'RUN_CANCELLED' } });
      // The end written first: the cancel is refused, and journals nothing.
      await store.createRun(newRun('early'));
      expect(await store.setRunStatus('early', 'succeeded', { notifications: [mail('early')] })).toBe('succeeded');
      expect(await store.cancelRun('early', 'alice')).toEqual({ outcome: 'ended', status: 'succeeded' });
      expect(await store.journal('early')).toEqual([]);
      expect(await store.listNotifications({ runId: 'early' })).toHaveLength(1);
    });
  });
}
