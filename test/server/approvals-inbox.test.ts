/**
 * `GET /api/v1/approvals`: every gate waiting for a decision the token may give. A gate naming
 * its approvers is in their inbox only; one naming none is in every operator's; a viewer's is
 * empty; a decided gate leaves it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';

const gates = (approvers: string) => `name: gated${approvers ? '-lead' : ''}
steps:
  - id: gate
    approval:
      message: "Roll out to the fleet?"
      timeout: 2h
      onTimeout: fail${approvers ? `\n      approvers: [${approvers}]` : ''}
  - log: done
`;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ 'gated.yaml': gates(''), 'gated-lead.yaml': gates('"ops lead"') });
});
afterAll(async () => {
  await t.close();
});

async function waitingRun(playbook: string): Promise<string> {
  const started = await t.api('POST', '/api/v1/runs', { token: t.tokens.operator, body: { playbook } });
  const runId = (started.body as { run: { id: string } }).run.id;
  while ((await t.store.getRun(runId))?.status !== 'waiting') await t.logged(runId);
  return runId;
}

type Inbox = { approvals: Array<Record<string, unknown>> };
const inbox = async (token: string) =>
  ((await t.api('GET', '/api/v1/approvals', { token })).body as Inbox).approvals.map((row) => row.runId);

describe('the approvals inbox', () => {
  it('lists the gates each token may decide, with run, gate, message, since, deadline and who started it', async () => {
    const open = await waitingRun('gated');
    const lead = await waitingRun('gated-lead');
    const answer = await t.api('GET', '/api/v1/approvals', { token: t.tokens.operator });
    expect(answer.status).toBe(200);
    expect((answer.body as Inbox).approvals).toEqual([
      {
        runId: open,
        playbook: 'gated',
        gate: 'gate',
        message: 'Roll out to the fleet?',
        since: expect.any(String),
        deadline: expect.any(String),
        onTimeout: 'fail',
        startedBy: 'on-call operator',
        link: `/runs/${open}#approval-title`,
      },
    ]);
    expect(await inbox(t.tokens.admin)).toEqual([open, lead]);
    expect(await inbox(t.tokens.viewer)).toEqual([]);
    const approved = await t.api('POST', `/api/v1/runs/${open}/approve`, { token: t.tokens.admin });
    expect(approved.status).toBe(202);
    expect(await inbox(t.tokens.admin)).toEqual([lead]);
    expect((await t.api('GET', '/api/v1/approvals')).status).toBe(401);
  });
});
