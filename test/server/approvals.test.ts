/**
 * Approval gates and cancellation through the API (issue 20's waiting runs): a run that waits
 * at a gate shows it, streams `run.waiting`, is refused a decision by a viewer or a non-approver,
 * goes on to its end once approved (with the approver's name in the journal and the audit
 * line), fails once denied, and a waiting run is cancelled at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/scheduler/testing.js';
import { runCli } from '../support/cli.js';
import { startTestServer, type TestServer } from './harness.js';

const GATED = `name: gated
steps:
  - id: canary
    log: "canary updated"
  - id: gate
    approval:
      message: "canary looks good?"
      approvers: ["on-call operator"]
  - id: rest
    log: "rest updated by \${{ steps.gate.outputs.approvedBy }}"
`;

const FORM = `name: form
steps:
  - id: gate
    approval:
      message: "how many at a time?"
      inputs:
        batchSize: { type: integer, minimum: 1 }
        hosts: { type: array, items: { type: string }, default: [] }
        ticket: { type: string, default: none }
outputs:
  batchSize: \${{ steps.gate.outputs.inputs.batchSize }}
  hosts: \${{ steps.gate.outputs.inputs.hosts }}
  ticket: \${{ steps.gate.outputs.inputs.ticket }}
`;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ 'gated.yaml': GATED, 'form.yaml': FORM });
});
afterAll(async () => {
  await t.close();
});

async function startWaiting(playbook = 'gated', on: TestServer = t): Promise<string> {
  const started = await on.api('POST', '/api/v1/runs', { token: on.tokens.operator, body: { playbook } });
  const runId = (started.body as { run: { id: string } }).run.id;
  for (;;) {
    const run = await on.store.getRun(runId);
    if (run?.status === 'waiting') return runId;
    if (run && run.status !== 'running') throw new Error(`run ended ${run.status}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function settle(runId: string, on: TestServer = t): Promise<string> {
  for (;;) {
    const run = await on.store.getRun(runId);
    if (run && !['running', 'queued', 'interrupted'].includes(run.status)) return run.status;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('approvals and cancellation through the API', () => {
  it('shows the waiting gate, refuses a viewer and a non-approver, and goes on once approved', async () => {
    const runId = await startWaiting();
    const metrics = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${t.tokens.viewer}` } });
    expect(await metrics.text()).toMatch(/^fleetbook_waiting_approvals 1$/m);
    const shown = await t.api('GET', `/api/v1/runs/${runId}`, { token: t.tokens.viewer });
    expect(shown.body).toMatchObject({
      run: { status: 'waiting', wait: { reason: 'approval', path: 'gate', message: 'canary looks good?' } },
    });
    expect((await t.api('POST', `/api/v1/runs/${runId}/approve`, { token: t.tokens.viewer, body: {} })).status).toBe(
      403,
    );
    const notApprover = await t.api('POST', `/api/v1/runs/${runId}/approve`, { token: t.tokens.admin, body: {} });
    expect(notApprover).toMatchObject({ status: 403, body: { error: { code: 'NOT_AN_APPROVER' } } });
    const approved = await t.api('POST', `/api/v1/runs/${runId}/approve`, {
      token: t.tokens.operator,
      body: { comment: 'looks fine' },
    });
    expect(approved.status).toBe(202);
    expect(await settle(runId)).toBe('succeeded');
    const logs = (await t.api('GET', `/api/v1/runs/${runId}/logs`, { token: t.tokens.viewer })).body as {
      lines: Array<{ message: string }>;
    };
    expect(logs.lines.map((line) => line.message)).toEqual(
      expect.arrayContaining(['approved by on-call operator: looks fine', 'rest updated by on-call operator']),
    );
    const again = await t.api('POST', `/api/v1/runs/${runId}/approve`, { token: t.tokens.operator, body: {} });
    expect(again).toMatchObject({ status: 409, body: { error: { code: 'APPROVAL_ALREADY_DECIDED' } } });
    expect(t.logText()).toMatch(/"event":"audit.approved"[^\n]*"by":"on-call operator"/);
  });

  it('reads the form values as typed JSON by the gate’s declared types, as a run’s inputs are read', async () => {
    const runId = await startWaiting('form');
    const approve = (inputs: Record<string, unknown>) =>
      t.api('POST', `/api/v1/runs/${runId}/approve`, { token: t.tokens.operator, body: { inputs } });
    // Text is not a number, as starting a run refuses it; each refusal names the input in the body.
    for (const [inputs, field] of [
      [{ batchSize: 'three' }, 'body/inputs/batchSize'],
      [{ batchSize: '3' }, 'body/inputs/batchSize'],
      [{ batchSize: 3, ticket: 42 }, 'body/inputs/ticket'],
      [{ batchSize: 3, bogus: 1 }, 'body/inputs/bogus'],
    ] as const) {
      const refused = await approve(inputs);
      expect(refused, JSON.stringify(inputs)).toMatchObject({
        status: 400,
        body: { error: { code: 'INVALID_APPROVAL_INPUTS', field } },
      });
      expect((refused.body as { error: { message: string } }).error.message).toContain(`input '${field.slice(12)}'`);
    }
    expect((await t.store.getRun(runId))?.status).toBe('waiting');
    expect((await approve({ batchSize: 3, hosts: ['hci-1', 'hci-2'] })).status).toBe(202);
    expect(await settle(runId)).toBe('succeeded');
    expect((await t.store.getRun(runId))?.outputs).toEqual({ batchSize: 3, hosts: ['hci-1', 'hci-2'], ticket: 'none' });

    // The CLI through the server reads its `-i` text by the same types before sending typed values.
    const other = await startWaiting('form');
    const env = { FLEETBOOK_SERVER: t.url, FLEETBOOK_TOKEN: t.tokens.operator };
    const approved = await runCli(['approve', other, '-i', 'batchSize=2', '-i', 'hosts=["hci-3"]', '-i', 'ticket=7'], {
      env,
    });
    expect(approved.code, approved.stderr).toBe(0);
    expect(await settle(other)).toBe('succeeded');
    expect((await t.store.getRun(other))?.outputs).toEqual({ batchSize: 2, hosts: ['hci-3'], ticket: '7' });
  });

  it('streams the wait as an event, and fails the gate once denied (a comment is required)', async () => {
    const runId = await startWaiting();
    const events = await fetch(`${t.url}/api/v1/runs/${runId}/events`, {
      headers: { authorization: `Bearer ${t.tokens.viewer}` },
    });
    const reader = events.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('event: run.waiting')) text += (await reader.read()).value ?? '';
    const noComment = await t.api('POST', `/api/v1/runs/${runId}/deny`, { token: t.tokens.operator, body: {} });
    expect(noComment).toMatchObject({ status: 400, body: { error: { field: 'body/comment' } } });
    const denied = await t.api('POST', `/api/v1/runs/${runId}/deny`, {
      token: t.tokens.operator,
      body: { comment: 'canary is unhealthy' },
    });
    expect(denied.status).toBe(202);
    expect(await settle(runId)).toBe('failed');
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += chunk.value;
    }
    expect(text).toContain('event: approval.decided');
    expect(text).toMatch(/event: run.ended\ndata: \{[^\n]*"status":"failed"/);
  });

  it('cancels a waiting run at once', async () => {
    const runId = await startWaiting();
    expect((await t.api('POST', `/api/v1/runs/${runId}/cancel`, { token: t.tokens.viewer })).status).toBe(403);
    const cancelled = await t.api('POST', `/api/v1/runs/${runId}/cancel`, { token: t.tokens.operator });
    expect(cancelled.body).toMatchObject({ outcome: 'cancelled', run: { status: 'cancelled' } });
    // Too late: refused, as the CLI refuses it (exit 2), and nothing more journaled.
    const ended = await t.api('POST', `/api/v1/runs/${runId}/cancel`, { token: t.tokens.operator });
    expect(ended.status).toBe(409);
    expect(ended.body).toMatchObject({
      error: { code: 'RUN_ENDED', message: `run ${runId} already ended cancelled; there is nothing to cancel` },
    });
    const journal = (await t.store.journal(runId)).map((entry) => entry.event.type);
    expect(journal.filter((type) => type === 'run.cancelled')).toHaveLength(1);
    expect(t.logText()).toMatch(/"event":"audit.cancelled"[^\n]*"by":"on-call operator"/);
  });

  it('approves and cancels from the CLI through the server (FLEETBOOK_SERVER), as the token’s name', async () => {
    const env = { FLEETBOOK_SERVER: t.url, FLEETBOOK_TOKEN: t.tokens.operator };
    const runId = await startWaiting();
    const approved = await runCli(['approve', runId.slice(0, 8), '--comment', 'from a laptop'], { env });
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain(`run ${runId}: approved on ${t.url}`);
    expect(await settle(runId)).toBe('succeeded');
    const other = await startWaiting();
    const cancelled = await runCli(['runs', 'cancel', other], { env });
    expect(cancelled).toMatchObject({ code: 0, stdout: expect.stringContaining('cancelled') });
    expect((await t.store.getRun(other))?.status).toBe('cancelled');
    // A refusal the server names keeps its code and exit 2.
    const late = await runCli(['deny', other, '--comment', 'too late'], { env });
    expect(late).toMatchObject({ code: 2, stderr: expect.stringContaining('not waiting') });
    const lateCancel = await runCli(['runs', 'cancel', other], { env });
    expect(lateCancel).toMatchObject({ code: 2, stderr: expect.stringContaining('409: run') });
    expect(lateCancel.stderr).toContain('already ended cancelled; there is nothing to cancel');
  });
});

const TIMED = `name: timed
steps:
  - id: gate
    approval: { message: "go?", timeout: 1h, onTimeout: fail }
  - id: rest
    log: "rest updated"
`;

describe("a gate's deadline on the server (its clock moved by hand)", () => {
  const HOUR = 3_600_000;
  let d: TestServer;
  let clock: ReturnType<typeof createManualClock>;
  beforeAll(async () => {
    // The sweep every 2 h of the server's clock: a decision at the 1 h deadline comes before it.
    clock = createManualClock(Date.now());
    d = await startTestServer({ 'timed.yaml': TIMED }, { clock, waitSweepMs: 2 * HOUR });
  });
  afterAll(async () => {
    await d.close();
  });

  const timeoutAt = async (runId: string) => Date.parse((await d.store.getRun(runId))?.wait?.timeoutAt ?? '');
  const decisions = async (runId: string) =>
    (await d.store.journal(runId)).map((entry) => entry.event).filter((event) => event.type === 'approval.decided');

  it('refuses an approval at its deadline (409 APPROVAL_TIMED_OUT) and ends the run as onTimeout says', async () => {
    const runId = await startWaiting('timed', d);
    await clock.advanceTo(await timeoutAt(runId));
    const late = await d.api('POST', `/api/v1/runs/${runId}/approve`, {
      token: d.tokens.operator,
      body: { comment: 'sorry, late' },
    });
    expect(late).toMatchObject({ status: 409, body: { error: { code: 'APPROVAL_TIMED_OUT' } } });
    expect((late.body as { error: { message: string } }).error.message).toContain(
      "a decision after the timeout is refused, and the gate's onTimeout (fail) applies",
    );
    expect(await settle(runId, d)).toBe('failed');
    expect(await d.store.getRun(runId)).toMatchObject({ error: { code: 'APPROVAL_TIMED_OUT' } });
    expect(await decisions(runId)).toEqual([
      expect.objectContaining({ decision: 'timedOut', by: 'timeout', at: new Date(clock.now()).toISOString() }),
    ]);
    // Later deciders are told the same, whoever recorded the timeout.
    const denied = await d.api('POST', `/api/v1/runs/${runId}/deny`, {
      token: d.tokens.operator,
      body: { comment: 'no' },
    });
    expect(denied).toMatchObject({ status: 409, body: { error: { code: 'APPROVAL_TIMED_OUT' } } });
  });

  it('a gate that times out with onTimeout fail ends its run failed with nobody resuming it', async () => {
    const runId = await startWaiting('timed', d);
    // Past the deadline and the sweep after it: the server ends the wait and resumes the run itself.
    await clock.advanceTo((await timeoutAt(runId)) + 2 * HOUR);
    expect(await settle(runId, d)).toBe('failed');
    expect(await d.store.getRun(runId)).toMatchObject({
      status: 'failed',
      resumes: 1,
      error: { code: 'APPROVAL_TIMED_OUT' },
    });
    expect(await decisions(runId)).toEqual([expect.objectContaining({ decision: 'timedOut', by: 'timeout' })]);
    expect(d.logText()).toMatch(new RegExp(`"event":"wait.ended"[^\\n]*"runId":"${runId}"`));
  });
});
