/**
 * "Trigger now" through the API (`POST /api/v1/schedules/{key}/trigger`): the schedule's run
 * with its inputs, recorded as triggered by hand by the token's name, 202 + Location; its
 * overlap policy against the previous run, as `fleetbook schedules trigger` applies it (skip:
 * 409 SCHEDULE_BUSY, cancel-running: the previous run cancelled); operator and up; 404 for an
 * unknown schedule. Every answer is checked against the API description (harness.ts). The
 * pages' "Trigger now" buttons: shown to an operator (not a viewer), with the session's CSRF
 * token; a refusal shown as a page that says why.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageSession, startTestServer, type TestServer } from './harness.js';

function scheduled(overlap: string): string {
  return `name: nightly-${overlap}
inputs:
  region: { type: string, default: us-west, description: where }
schedules:
  - id: nightly-${overlap}
    cron: "0 2 * * *"
    overlap: ${overlap}
    inputs: { region: eu-central }
steps:
  - id: systems
    call: privateCloud.listSystems
    region: \${{ inputs.region }}
outputs:
  region: \${{ inputs.region }}
`;
}

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ 'skip.yaml': scheduled('skip'), 'cancel.yaml': scheduled('cancel-running') });
});
afterAll(async () => {
  await t.close();
});

/** A previous run of the schedule, waiting at a gate, as the schedule's state names it (a scheduler fire). */
async function previousWaitingRun(scheduleKey: string, runId: string): Promise<void> {
  await t.store.createRun({
    id: runId,
    playbook: scheduleKey,
    playbookSource: 'p.yaml',
    playbookHash: 'h',
    inputs: {},
    secretInputNames: [],
    dryRun: false,
    trigger: { kind: 'schedule', scheduleId: scheduleKey },
    startedAt: new Date().toISOString(),
  });
  await t.store.suspendRun(runId, { reason: 'approval', path: 'gate', since: new Date().toISOString() });
  await t.store.patchScheduleState(scheduleKey, { lastRunId: runId });
}

async function settle(runId: string): Promise<Record<string, unknown>> {
  for (;;) {
    const { body } = await t.api('GET', `/api/v1/runs/${runId}`, { token: t.tokens.viewer });
    const run = (body as { run: Record<string, unknown> }).run;
    if (run.status !== 'running' && run.status !== 'queued') return run;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('trigger a schedule now through the API', () => {
  it('runs it with its inputs for an operator, recorded as triggered by the token, with an audit line', async () => {
    expect((await t.api('POST', '/api/v1/schedules/nightly-skip/trigger', { token: t.tokens.viewer })).status).toBe(
      403,
    );
    const unknown = await t.api('POST', '/api/v1/schedules/nope/trigger', { token: t.tokens.operator });
    expect(unknown).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } });

    const triggered = await t.api('POST', '/api/v1/schedules/nightly-skip/trigger', { token: t.tokens.operator });
    expect(triggered.status).toBe(202);
    const { run } = triggered.body as { outcome: string; run: { id: string } };
    expect(triggered.body).toMatchObject({ outcome: 'started' });
    expect(triggered.headers.get('location')).toBe(`/api/v1/runs/${run.id}`);
    const ended = await settle(run.id);
    expect(ended).toMatchObject({
      status: 'succeeded',
      inputs: { region: 'eu-central' },
      outputs: { region: 'eu-central' },
      trigger: { kind: 'trigger', scheduleId: 'nightly-skip', by: 'on-call operator' },
    });
    expect(t.logText()).toMatch(
      new RegExp(`"event":"audit.scheduleTriggered"[^\\n]*"by":"on-call operator"[^\\n]*"runId":"${run.id}"`),
    );
  });

  it('overlap skip: 409 SCHEDULE_BUSY while the previous run goes on; cancel-running: cancels it first', async () => {
    await previousWaitingRun('nightly-skip', 'previous-skip');
    const refused = await t.api('POST', '/api/v1/schedules/nightly-skip/trigger', { token: t.tokens.operator });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error: { code: 'SCHEDULE_BUSY' } });
    expect((refused.body as { error: { message: string } }).error.message).toContain(
      'its previous run previous-skip is still waiting and its overlap policy is skip',
    );
    expect((await t.store.getRun('previous-skip'))?.status).toBe('waiting');

    await previousWaitingRun('nightly-cancel-running', 'previous-cancel');
    const replaced = await t.api('POST', '/api/v1/schedules/nightly-cancel-running/trigger', {
      token: t.tokens.admin,
    });
    expect(replaced.status).toBe(202);
    expect(replaced.body).toMatchObject({ outcome: 'started', cancelled: 'previous-cancel' });
    expect((await t.store.getRun('previous-cancel'))?.status).toBe('cancelled');
    const { run } = replaced.body as { run: { id: string } };
    expect(await settle(run.id)).toMatchObject({ status: 'succeeded', trigger: { by: 'ops lead' } });
  });
});

describe('"Trigger now" on the pages', () => {
  it('shows the button to an operator only, starts the run, and says why the overlap policy refused', async () => {
    const app = t.server.app;
    const viewer = await pageSession(app, t.tokens.viewer);
    const viewerPage = await app.inject({ method: 'GET', url: '/schedules', headers: { cookie: viewer.cookie } });
    expect(viewerPage.body).not.toContain('Trigger nightly-skip now');
    const operator = await pageSession(app, t.tokens.operator);
    for (const url of ['/schedules', '/playbooks/nightly-skip']) {
      const page = await app.inject({ method: 'GET', url, headers: { cookie: operator.cookie } });
      expect(page.body, url).toContain('action="/schedules/nightly-skip/trigger"');
      expect(page.body, url).toContain('Trigger nightly-skip now');
    }
    const post = (session: { cookie: string; csrf: string }, key: string, csrf = session.csrf) =>
      app.inject({
        method: 'POST',
        url: `/schedules/${key}/trigger`,
        headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ _csrf: csrf }).toString(),
      });
    expect((await post(viewer, 'nightly-cancel-running')).statusCode).toBe(403);
    expect((await post(operator, 'nightly-cancel-running', 'forged')).statusCode).toBe(403);

    // The previous run still waits (left by the test above) and the policy is skip: a page says so.
    const refused = await post(operator, 'nightly-skip');
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('Not triggered');
    expect(refused.body).toContain('its overlap policy is skip');

    const started = await post(operator, 'nightly-cancel-running');
    expect(started.statusCode).toBe(303);
    const runId = /^\/runs\/([0-9a-f-]{36})$/.exec(String(started.headers.location))?.[1] ?? '';
    expect((await t.store.getRun(runId))?.trigger).toEqual({
      kind: 'trigger',
      scheduleId: 'nightly-cancel-running',
      by: 'on-call operator',
    });
    expect((await post(operator, 'nope')).statusCode).toBe(404);
  });
});
