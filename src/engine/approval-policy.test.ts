/**
 * A gate's policy in virtual time: `required` distinct approvals (each recorded, the run still
 * waiting until the last), a denial ending the gate, `notRequester`, approvers by group, two
 * approvals at once, and the sentence the CLI and the run page show.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../logging/index.js';
import type { Step } from '../playbook/index.js';
import { approvalProgress } from './approval-policy.js';
import { fakeClient, fastRun, playbook, step, t } from './engine.test-kit.js';
import { resumeRun } from './resume-run.js';
import { recordApproval, type ApprovalRequest } from './run-waits.js';
import { createVirtualClock } from '../timers/index.js';
import type { RunStore } from '../store/index.js';

const gate = (policy: Record<string, unknown>): Step =>
  step({ id: 'gate', kind: 'approval', message: t('go?'), onTimeout: 'fail', ...policy });
const after = step({ id: 'after', kind: 'set', values: t({ approvals: '${{ steps.gate.outputs.approvals }}' }) });
const START = Date.parse('2026-01-01T00:00:00Z');

async function waitingRun(policy: Record<string, unknown>, by = 'bob') {
  const run = await fastRun(playbook([gate(policy), after]), { trigger: { kind: 'manual', by } });
  expect(run.result.status).toBe('waiting');
  const decide = (request: Omit<ApprovalRequest, 'runId'>, at = START + 60_000) =>
    recordApproval(run.store, { runId: run.result.runId, ...request }, () => at);
  return { ...run, runId: run.result.runId, decide };
}

const kinds = async (store: RunStore, runId: string) =>
  (await store.journal(runId)).map(({ event }) => event.type).filter((type) => type.startsWith('approval.'));

describe('approval policies', () => {
  it('required 2: the first approval is recorded and the run waits; the same person again is refused; a second completes', async () => {
    const run = await waitingRun({ approvers: ['alice', 'bob', 'carol'], required: 2 });
    const first = await run.decide({ decision: 'approved', by: 'alice', comment: 'canary fine' });
    expect(first.status).toBe('waiting');
    const waiting = await run.store.getRun(run.runId);
    expect(waiting).toMatchObject({
      status: 'waiting',
      wait: { approvals: [{ by: 'alice', comment: 'canary fine' }] },
    });
    expect(await kinds(run.store, run.runId)).toEqual(['approval.given']);
    await expect(run.decide({ decision: 'approved', by: 'alice' })).rejects.toMatchObject({
      code: 'ALREADY_APPROVED',
      exitCode: 2,
      message: expect.stringContaining('1 of 2 approvals: alice; waiting for bob or carol'),
    });
    const second = await run.decide({ decision: 'approved', by: 'carol' }, START + 120_000);
    expect(second.status).toBe('interrupted');
    expect(await kinds(run.store, run.runId)).toEqual(['approval.given', 'approval.decided']);
    const resumed = await resumeRun(playbook([gate({}), after]), {
      runId: run.runId,
      store: run.store,
      client: fakeClient({}),
      logger: createLogger({ level: 'error', destination: new Writable({ write: (_c, _e, done) => done() }) }),
      env: {},
      outputsDir: '/nonexistent/fleetbook-fast-tests',
      clock: createVirtualClock(START + 180_000),
    });
    expect(resumed.status).toBe('succeeded');
    const finished = (await run.store.journal(run.runId)).findLast(
      ({ event }) => event.type === 'step.finished' && event.path === 'gate',
    )?.event;
    expect(finished).toMatchObject({
      outputs: {
        approved: true,
        approvedBy: 'carol',
        approvals: [
          { decision: 'approved', by: 'alice', comment: 'canary fine', at: '2026-01-01T00:01:00.000Z' },
          { decision: 'approved', by: 'carol', at: '2026-01-01T00:02:00.000Z' },
        ],
      },
    });
  });

  it('a denial by any approver ends the gate, after an approval too', async () => {
    const run = await waitingRun({ approvers: ['alice', 'carol'], required: 2 });
    await run.decide({ decision: 'approved', by: 'alice' });
    const denied = await run.decide({ decision: 'denied', by: 'carol', comment: 'no' });
    expect(denied.decision).toMatchObject({ decision: 'denied', by: 'carol', approvals: [{ by: 'alice' }] });
    expect((await run.store.getRun(run.runId))?.status).toBe('interrupted');
  });

  it('notRequester refuses the person who started the run; another approver decides', async () => {
    const run = await waitingRun({ approvers: ['alice', 'bob'], notRequester: true }, 'bob');
    await expect(run.decide({ decision: 'approved', by: 'bob' })).rejects.toMatchObject({
      code: 'APPROVER_IS_REQUESTER',
      message: expect.stringContaining('bob started this run'),
    });
    await expect(run.decide({ decision: 'denied', by: 'bob', comment: 'x' })).rejects.toMatchObject({
      code: 'APPROVER_IS_REQUESTER',
    });
    expect((await run.decide({ decision: 'approved', by: 'alice' })).status).toBe('interrupted');
  });

  it('approvers by group: a member decides, a user without the group (or without groups) is refused', async () => {
    const run = await waitingRun({ approverGroups: ['change-managers'], approvers: ['alice'] });
    await expect(run.decide({ decision: 'approved', by: 'dave', groups: ['sre'] })).rejects.toMatchObject({
      code: 'NOT_AN_APPROVER',
      message: expect.stringContaining("dave's groups: sre"),
    });
    await expect(run.decide({ decision: 'approved', by: 'erin' })).rejects.toMatchObject({ code: 'NOT_AN_APPROVER' });
    const recorded = await run.decide({ decision: 'approved', by: 'carol', groups: ['sre', 'change-managers'] });
    expect(recorded.decision).toMatchObject({ decision: 'approved', by: 'carol' });
  });

  it('two approvals at once: the same person counts once, two people both count', async () => {
    const same = await waitingRun({ required: 2 });
    const twice = await Promise.allSettled([
      same.decide({ decision: 'approved', by: 'alice' }),
      same.decide({ decision: 'approved', by: 'alice' }),
    ]);
    expect(twice.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(await kinds(same.store, same.runId)).toEqual(['approval.given']);
    const two = await waitingRun({ required: 2 });
    const both = await Promise.all([
      two.decide({ decision: 'approved', by: 'alice' }),
      two.decide({ decision: 'approved', by: 'carol' }),
    ]);
    expect(both.map((recorded) => recorded.status).sort()).toEqual(['interrupted', 'waiting']);
    expect(await kinds(two.store, two.runId)).toEqual(['approval.given', 'approval.decided']);
  });

  it('says how far the gate is and who may still approve', () => {
    const wait = {
      path: 'gate',
      approverGroups: ['change-managers'],
      approvers: ['alice'],
      required: 2,
      notRequester: true,
      approvals: [{ decision: 'approved' as const, by: 'alice', at: '2026-01-01T00:01:00.000Z' }],
    };
    expect(approvalProgress(wait, 'bob')).toBe(
      '1 of 2 approvals: alice; waiting for a change-manager other than alice and bob',
    );
    expect(approvalProgress({ path: 'gate', approvers: ['alice', 'bob'] }, undefined)).toBe(
      '0 of 1 approval; waiting for alice or bob',
    );
    expect(approvalProgress({ path: 'gate', approverGroups: ['sre'] }, 'bob')).toBe(
      '0 of 1 approval; waiting for a member of sre',
    );
  });
});
