/**
 * Approval gates in virtual time against the fake platform: reached (the run ends `waiting`,
 * nothing held), approved (the form's values readable by later steps), denied (the run fails,
 * rescue applies), timed out (each `onTimeout`), and the refusals of `recordApproval`.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../logging/index.js';
import type { Playbook, Step } from '../playbook/index.js';
import { createMemoryRunStore, runLeaseKey, type RunStore } from '../store/index.js';
import { createVirtualClock } from '../timers/index.js';
import { fakeClient, fastRun, playbook, step, summary, t } from './engine.test-kit.js';
import { resumeRun } from './resume-run.js';
import { endDueWaits, recordApproval } from './run-waits.js';

const gate = (extra: Record<string, unknown> = {}): Step =>
  step({
    id: 'gate',
    kind: 'approval',
    message: t('canary ${{ inputs.canary }} looks good?'),
    onTimeout: 'fail',
    ...extra,
  });
const after = step({ id: 'after', kind: 'set', values: t({ by: '${{ steps.gate.outputs.approvedBy }}' }) });
const book = (steps: Step[] = [gate(), after]): Playbook =>
  playbook(steps, {
    inputs: {
      canary: { type: 'string', default: 'sys-1', secret: false, required: false, schema: { type: 'string' } },
    },
  });

const quiet = () =>
  createLogger({ level: 'error', destination: new Writable({ write: (_chunk, _encoding, done) => done() }) });

async function resume(
  playbookToRun: Playbook,
  store: RunStore,
  runId: string,
  now = Date.parse('2026-01-01T00:00:00Z'),
) {
  return resumeRun(playbookToRun, {
    runId,
    store,
    client: fakeClient({}),
    logger: quiet(),
    env: {},
    outputsDir: '/nonexistent/fleetbook-fast-tests',
    clock: createVirtualClock(now),
  });
}

describe('approval gates', () => {
  it('a gate reached without a decision ends the run waiting, journals what it waits for, and holds no lease', async () => {
    const run = await fastRun(book([gate({ approvers: ['alice'], timeoutMs: 3_600_000 }), after]));
    expect(run.result.status).toBe('waiting');
    expect(run.result.error).toBeUndefined();
    const wait = {
      reason: 'approval',
      path: 'gate',
      message: 'canary sys-1 looks good?',
      approvers: ['alice'],
      onTimeout: 'fail',
      since: '2026-01-01T00:00:00.000Z',
      timeoutAt: '2026-01-01T01:00:00.000Z',
    };
    expect(run.result.wait).toEqual(wait);
    expect(run.events.find((event) => event.type === 'run.waiting')).toEqual({
      type: 'run.waiting',
      path: 'gate',
      wait,
    });
    expect(summary(run, 'gate')?.status).toBe('interrupted');
    expect(summary(run, 'after')?.status).toBe('notStarted');
    expect(await run.store.getRun(run.result.runId)).toMatchObject({ status: 'waiting', wait });
    expect(await run.store.leaseHolder(runLeaseKey(run.result.runId))).toBeUndefined();
  });

  it('approved: the run goes on from the gate, which gives who, when, the comment and the form', async () => {
    const form = { batchSize: { type: 'integer', minimum: 1, default: 5 }, note: { type: 'string' } };
    const steps = [gate({ inputs: form }), after];
    const run = await fastRun(book(steps));
    const recorded = await recordApproval(
      run.store,
      { runId: run.result.runId, decision: 'approved', by: 'alice', comment: 'canary fine', inputs: { note: 'go' } },
      () => Date.parse('2026-01-01T00:10:00Z'),
    );
    expect(recorded.status).toBe('interrupted');
    const resumed = await resume(book(steps), run.store, run.result.runId);
    expect(resumed.status).toBe('succeeded');
    const outputs = (await run.store.steps(run.result.runId)).find((record) => record.path === 'gate')?.outputs;
    expect(outputs).toEqual({
      approved: true,
      approvedBy: 'alice',
      at: '2026-01-01T00:10:00.000Z',
      comment: 'canary fine',
      inputs: { batchSize: 5, note: 'go' },
    });
    expect((await run.store.steps(run.result.runId)).find((record) => record.path === 'after')?.outputs).toEqual({
      by: 'alice',
    });
  });

  it('denied: the gate fails with the comment, the rescue of its block applies, the run fails', async () => {
    const guarded = step({
      id: 'guarded',
      kind: 'block',
      steps: [gate()],
      rescue: [step({ id: 'rolledBack', kind: 'set', values: t({ done: true }) })],
    });
    const failing = [gate(), after];
    const run = await fastRun(book(failing));
    await recordApproval(
      run.store,
      { runId: run.result.runId, decision: 'denied', by: 'bob', comment: 'canary slow' },
      () => 0,
    );
    const resumed = await resume(book(failing), run.store, run.result.runId);
    expect(resumed.status).toBe('failed');
    expect(resumed.error).toMatchObject({
      code: 'APPROVAL_DENIED',
      message: 'approval gate was denied by bob: canary slow',
    });

    const rescued = await fastRun(book([guarded]));
    expect(rescued.result.status).toBe('waiting');
    expect(rescued.result.wait?.path).toBe('guarded.gate');
    await recordApproval(
      rescued.store,
      { runId: rescued.result.runId, decision: 'denied', by: 'bob', comment: 'no' },
      () => 0,
    );
    const afterRescue = await resume(book([guarded]), rescued.store, rescued.result.runId);
    expect(afterRescue.status).toBe('succeeded');
    expect(afterRescue.steps.find((line) => line.path === 'guarded.rolledBack')?.status).toBe('succeeded');
  });

  it.each([
    ['fail', 'failed', 'failed'],
    ['continue', 'succeeded', 'succeeded'],
    ['skip', 'skipped', 'succeeded'],
  ] as const)('timed out with onTimeout %s: the gate ends %s, the run %s', async (onTimeout, gateStatus, runStatus) => {
    const steps = [gate({ onTimeout, timeoutMs: 60_000 }), step({ id: 'next', kind: 'set', values: t({ ok: true }) })];
    const run = await fastRun(book(steps));
    // Not yet due: nothing ends.
    expect(await endDueWaits(run.store, () => Date.parse('2026-01-01T00:00:59Z'))).toEqual([]);
    const ended = await endDueWaits(run.store, () => Date.parse('2026-01-01T00:01:00Z'));
    expect(ended.map((entry) => [entry.run.id, entry.status])).toEqual([[run.result.runId, 'interrupted']]);
    const resumed = await resume(book(steps), run.store, run.result.runId);
    expect(resumed.status).toBe(runStatus);
    const record = (await run.store.steps(run.result.runId)).find((found) => found.path === 'gate');
    expect(record?.status).toBe(gateStatus);
    if (onTimeout === 'fail') expect(resumed.error?.code).toBe('APPROVAL_TIMED_OUT');
    else expect(record?.outputs).toMatchObject({ approved: false, timedOut: true });
  });

  it('a decision at or after the timeout is refused, and the same transaction records the timeout', async () => {
    const steps = [gate({ onTimeout: 'fail', timeoutMs: 60_000, inputs: { size: { type: 'integer' } } }), after];
    const run = await fastRun(book(steps));
    const runId = run.result.runId;
    // The form is not read once the gate timed out: the refusal is the timeout's.
    const late = await recordApproval(
      run.store,
      { runId, decision: 'approved', by: 'alice', inputs: { size: 'three' } },
      () => Date.parse('2026-01-01T00:01:00Z'),
    );
    expect(late.status).toBe('interrupted');
    expect(late.decision).toEqual({ decision: 'timedOut', by: 'timeout', at: '2026-01-01T00:01:00.000Z' });
    expect(late.refused).toMatchObject({
      code: 'APPROVAL_TIMED_OUT',
      exitCode: 2,
      message: `run ${runId}: the gate gate timed out at 2026-01-01T00:01:00.000Z, before this decision (2026-01-01T00:01:00.000Z); a decision after the timeout is refused, and the gate's onTimeout (fail) applies`,
    });
    // Another decider, later still: refused with the same code, nothing more journaled.
    await expect(
      recordApproval(run.store, { runId, decision: 'denied', by: 'bob', comment: 'no' }, () =>
        Date.parse('2026-01-01T00:02:00Z'),
      ),
    ).rejects.toMatchObject({ code: 'APPROVAL_TIMED_OUT' });
    const decided = (await run.store.journal(runId)).filter((entry) => entry.event.type === 'approval.decided');
    expect(decided).toHaveLength(1);
    const resumed = await resume(book(steps), run.store, runId);
    expect(resumed).toMatchObject({ status: 'failed', error: { code: 'APPROVAL_TIMED_OUT' } });
  });

  it('resume before the timeout refuses (still waiting); after it, applies onTimeout', async () => {
    const steps = [gate({ onTimeout: 'continue', timeoutMs: 60_000 }), after];
    const run = await fastRun(book(steps));
    await expect(
      resume(book(steps), run.store, run.result.runId, Date.parse('2026-01-01T00:00:30Z')),
    ).rejects.toMatchObject({
      code: 'RUN_WAITING',
      message: expect.stringContaining('is still waiting for approval of gate'),
    });
    const resumed = await resume(book(steps), run.store, run.result.runId, Date.parse('2026-01-01T00:02:00Z'));
    expect(resumed.status).toBe('succeeded');
  });

  it('a dry run passes the gate as approved and says so', async () => {
    const run = await fastRun(book(), { dryRun: true });
    expect(run.result.status).toBe('succeeded');
    expect(run.lines.some((line) => line.msg === 'dry run: approval gate gate passed as approved')).toBe(true);
  });

  it('refuses twice-approving, a run not waiting, an unknown run, another gate, a non-approver, invalid inputs', async () => {
    const form = { batchSize: { type: 'integer', minimum: 1 } };
    const run = await fastRun(book([gate({ approvers: ['alice'], inputs: form }), after]));
    const runId = run.result.runId;
    const approve = (extra: Partial<Parameters<typeof recordApproval>[1]>) =>
      recordApproval(
        run.store,
        { runId, decision: 'approved', by: 'alice', inputs: { batchSize: 2 }, ...extra },
        () => 0,
      );
    await expect(approve({ runId: 'nope' })).rejects.toMatchObject({ code: 'RUN_NOT_FOUND', exitCode: 2 });
    await expect(approve({ step: 'other' })).rejects.toMatchObject({ code: 'NOT_THE_WAITING_GATE' });
    await expect(approve({ by: 'mallory' })).rejects.toMatchObject({
      code: 'NOT_AN_APPROVER',
      message: `run ${runId}: mallory is not an approver of gate (approvers: users alice; mallory has no groups (a token or the CLI decides by name only))`,
    });
    await expect(approve({ inputs: { batchSize: 0 } })).rejects.toMatchObject({ code: 'INVALID_APPROVAL_INPUTS' });
    // Typed values, as a run's inputs: text is not read as a number (the CLI reads `-i` text first).
    await expect(approve({ inputs: { batchSize: '2' } })).rejects.toMatchObject({
      code: 'INVALID_APPROVAL_INPUTS',
      details: { input: 'batchSize' },
    });
    await expect(approve({ inputs: {} })).rejects.toMatchObject({
      code: 'INVALID_APPROVAL_INPUTS',
      message: expect.stringContaining("input 'batchSize' (integer) is required"),
    });
    const recorded = await approve({ step: 'gate' });
    expect(recorded.decision).toMatchObject({ decision: 'approved', by: 'alice', inputs: { batchSize: 2 } });
    await expect(approve({})).rejects.toMatchObject({ code: 'APPROVAL_ALREADY_DECIDED', exitCode: 2 });
    const done = await fastRun(book([after]));
    await expect(
      recordApproval(done.store, { runId: done.result.runId, decision: 'approved', by: 'alice' }, () => 0),
    ).rejects.toMatchObject({ code: 'RUN_NOT_WAITING' });
  });
});

describe('cancellation asked by another process', () => {
  it('the driver sees it at its heartbeat: no new item starts, the run ends cancelled, resume refuses it', async () => {
    const LIST = 'privateCloud.listSystems';
    const store = createMemoryRunStore();
    const client = fakeClient({ [LIST]: [{ body: {} }] });
    let calls = 0;
    const invoke = client.invoke.bind(client);
    // The second item's call is where `fleetbook runs cancel` lands, from "another process".
    (client as { invoke: typeof client.invoke }).invoke = async (operationId, input) => {
      calls += 1;
      if (calls === 2) {
        const [running] = await store.listRuns({ status: 'running' });
        if (running) expect(await store.cancelRun(running.id, 'ops')).toEqual({ outcome: 'requested' });
      }
      return invoke(operationId, input);
    };
    const loop = step({
      id: 'each',
      kind: 'forEach',
      items: t([0, 1, 2, 3, 4]),
      as: 'n',
      concurrency: t(1),
      steps: [
        step({ id: 'read', kind: 'call', operationId: LIST, with: t({}) }),
        step({ id: 'work', kind: 'sleep', duration: t(10_000) }),
      ],
    });
    const run = await fastRun(playbook([loop]), { client, store, cancelCheckMs: 1000 });
    expect(run.result.status).toBe('cancelled');
    expect(run.result.error).toMatchObject({
      code: 'RUN_CANCELLED',
      message: expect.stringContaining('cancelled by ops'),
    });
    expect(calls).toBe(2);
    expect(run.result.steps.filter((line) => line.kind === 'item').map((line) => line.status)).toEqual([
      'succeeded',
      'interrupted',
      'notStarted',
      'notStarted',
      'notStarted',
    ]);
    expect(await store.getRun(run.result.runId)).toMatchObject({ status: 'cancelled' });
    await expect(resume(playbook([loop]), store, run.result.runId)).rejects.toMatchObject({ code: 'RUN_CANCELLED' });
  });
});

describe('a crash while reaching the gate', () => {
  it('journaled run.waiting but died before the run was marked waiting: resume brings it back to the gate', async () => {
    const store = createMemoryRunStore();
    // The process dies between `run.waiting` and the status change: the run stays `running`, no driver.
    const dying: RunStore = {
      ...store,
      suspendRun: async () => {
        throw new Error('killed');
      },
    };
    const steps = [gate(), after];
    await expect(fastRun(book(steps), { store: dying, runId: 'crashed' })).rejects.toThrow('killed');
    // Recorded running, but no driver holds its lease: read as interrupted (crashed), with no end.
    const crashed = await store.getRun('crashed');
    expect([crashed?.status, crashed?.endedAt]).toEqual(['interrupted', undefined]);
    expect((await store.journal('crashed')).some((entry) => entry.event.type === 'run.waiting')).toBe(true);
    // `fleetbook resume`: the gate runs again, finds no decision, and the run waits (properly now).
    const again = await resume(book(steps), store, 'crashed');
    expect(again.status).toBe('waiting');
    expect(await store.getRun('crashed')).toMatchObject({ status: 'waiting', wait: { path: 'gate' } });
    await recordApproval(store, { runId: 'crashed', decision: 'approved', by: 'alice' }, () => 0);
    const done = await resume(book(steps), store, 'crashed');
    expect(done.status).toBe('succeeded');
  });
});
