/**
 * A decision taken by a server that cannot continue the run: the run was started, with a secret
 * input, by a server that has since restarted (secrets are kept in memory only, never stored).
 * The decision is recorded and said to be; the run waits for its secret, given again through
 * the API's resume, and then goes on.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RunStatus } from '../../src/store/index.js';
import { pageSession, secondServer, startTestServer, type TestServer } from '../server/harness.js';

const SECRET = 'tok-restart-5ecret-4410';
const GATED = `name: gated
inputs:
  token: { type: string, secret: true }
steps:
  - id: gate
    approval: { message: "deploy?" }
  - id: use
    log: "deploying with \${{ inputs.token }}"
`;

let first: TestServer;
/** The same server restarted: the same store file and playbooks, nothing in memory. */
let restarted: Awaited<ReturnType<typeof secondServer>>;
beforeAll(async () => {
  first = await startTestServer({ 'gated.yaml': GATED });
  restarted = await secondServer(first);
});
afterAll(async () => {
  await restarted.close();
  await first.close();
});

/** A request to the restarted server's API with `token`. */
async function api(method: 'POST', url: string, token: string, body: unknown) {
  const answer = await restarted.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
  return { status: answer.statusCode, body: answer.json() as unknown };
}

/** Resolves once run `runId` is `status` (a bounded poll of the store). */
async function reaches(runId: string, status: RunStatus): Promise<void> {
  for (let tries = 0; tries < 400; tries += 1) {
    if ((await first.store.getRun(runId))?.status === status) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`run ${runId} never reached ${status}: ${(await first.store.getRun(runId))?.status}`);
}

async function started(): Promise<string> {
  const answer = await first.api('POST', '/api/v1/runs', {
    token: first.tokens.operator,
    body: { playbook: 'gated', inputs: { token: SECRET } },
  });
  const runId = (answer.body as { run: { id: string } }).run.id;
  await reaches(runId, RunStatus.waiting);
  return runId;
}

it('api.approve after a restart: recorded and said so; the run goes on once its secret is given again', async () => {
  const runId = await started();
  const approved = await api('POST', `/api/v1/runs/${runId}/approve`, first.tokens.operator, {});
  expect(approved.status).toBe(400);
  expect(approved.body).toMatchObject({ error: { code: 'SECRET_INPUT_MISSING' } });
  expect(JSON.stringify(approved.body)).toContain('the approval is recorded');
  expect((await first.store.getRun(runId))?.status).toBe(RunStatus.interrupted);

  const resumed = await api('POST', `/api/v1/runs/${runId}/resume`, first.tokens.operator, {
    secretInputs: { token: SECRET },
  });
  expect(resumed.status, JSON.stringify(resumed.body)).toBeLessThan(300);
  await reaches(runId, RunStatus.succeeded);
});

it('ui.approve after a restart: the page says the decision is recorded, not that it is not', async () => {
  const runId = await started();
  const session = await pageSession(restarted.app, first.tokens.operator);
  const page = await restarted.app.inject({
    method: 'POST',
    url: `/runs/${runId}/approve`,
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
    payload: new URLSearchParams({ _csrf: session.csrf, comment: 'go' }).toString(),
  });
  expect(page.statusCode).toBe(409);
  expect(page.body).toContain('Recorded, not continued');
  expect(page.body).toContain('the approval is recorded');
  expect(page.body).not.toContain(SECRET);
});
