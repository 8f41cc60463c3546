/**
 * Scoped roles through the API: a token made with `fleetbook tokens create --role operator
 * --playbooks "*-report*"` starts, approves, denies, cancels and resumes runs of the playbooks
 * its patterns match, and is a viewer for every other playbook (403, saying why) and for what
 * belongs to no playbook (the token list of an admin token scoped the same way).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { startTestServer, type TestServer } from './harness.js';

const gated = (name: string) => `name: ${name}
steps:
  - id: gate
    approval:
      message: "go on?"
  - id: done
    log: "done"
`;

let t: TestServer;
let reports: string;
let reportsAdmin: string;

beforeAll(async () => {
  t = await startTestServer({
    'weekly-report.yaml': gated('weekly-report'),
    'rolling-update.yaml': gated('rolling-update'),
  });
  const made = await runCli(
    ['tokens', 'create', '--role', 'operator', '--name', 'reports bot', '--playbooks', '*-report*', '-o', 'json'],
    { env: { FLEETBOOK_HOME: t.dir } },
  );
  expect(made.code, made.stderr).toBe(0);
  reports = (JSON.parse(made.stdout) as { token: string; playbooks: string[] }).token;
  expect(JSON.parse(made.stdout)).toMatchObject({ role: 'operator', playbooks: ['*-report*'] });
  const admin = await runCli(
    ['tokens', 'create', '--role', 'admin', '--name', 'reports admin', '--playbooks', 'weekly-*', '-o', 'json'],
    { env: { FLEETBOOK_HOME: t.dir } },
  );
  reportsAdmin = (JSON.parse(admin.stdout) as { token: string }).token;
});
afterAll(async () => {
  await t.close();
});

async function waiting(playbook: string, token = t.tokens.operator): Promise<string> {
  const started = await t.api('POST', '/api/v1/runs', { token, body: { playbook } });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  const runId = (started.body as { run: { id: string } }).run.id;
  for (;;) {
    const run = await t.store.getRun(runId);
    if (run?.status === 'waiting') return runId;
    if (run && run.status !== 'running') throw new Error(`run ended ${run.status}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const errorOf = (answer: { body: unknown }) => (answer.body as { error: { code: string; message: string } }).error;

describe('a token scoped to "*-report*"', () => {
  it('starts a run of weekly-report, and is refused one of rolling-update (403 ROLE_FORBIDDEN)', async () => {
    await waiting('weekly-report', reports);
    const refused = await t.api('POST', '/api/v1/runs', { token: reports, body: { playbook: 'rolling-update' } });
    expect(refused.status).toBe(403);
    expect(errorOf(refused)).toMatchObject({
      code: 'ROLE_FORBIDDEN',
      message: 'reports bot (role viewer for rolling-update) may not start runs: that takes the operator role',
    });
    expect((await t.store.listRuns({ playbook: 'rolling-update', limit: 10 })).length).toBe(0);
  });

  it('approves, denies and cancels runs of weekly-report only', async () => {
    const report = await waiting('weekly-report');
    const approved = await t.api('POST', `/api/v1/runs/${report}/approve`, { token: reports, body: {} });
    expect(approved.status, JSON.stringify(approved.body)).toBe(202);
    const update = await waiting('rolling-update');
    for (const action of ['approve', 'deny', 'cancel']) {
      const answer = await t.api('POST', `/api/v1/runs/${update}/${action}`, {
        token: reports,
        body: action === 'deny' ? { comment: 'no' } : {},
      });
      expect(answer.status, action).toBe(403);
      expect(errorOf(answer)).toEqual({
        code: 'FORBIDDEN',
        message:
          'this needs the operator role for the playbook rolling-update; reports bot is viewer there (operator on playbooks matching *-report* (viewer elsewhere))',
      });
    }
    expect((await t.store.getRun(update))?.status).toBe('waiting');
    const cancelled = await t.api('POST', `/api/v1/runs/${await waiting('weekly-report')}/cancel`, {
      token: reports,
      body: {},
    });
    expect(cancelled.status).toBe(202);
  });

  it('is refused the resume of a run of another playbook', async () => {
    const update = await waiting('rolling-update');
    await t.store.setRunStatus(update, 'interrupted');
    const answer = await t.api('POST', `/api/v1/runs/${update}/resume`, { token: reports, body: {} });
    expect(answer.status).toBe(403);
    expect(errorOf(answer).code).toBe('FORBIDDEN');
    expect((await t.store.getRun(update))?.status).toBe('interrupted');
  });

  it('reads every run as a viewer', async () => {
    const listed = await t.api('GET', '/api/v1/runs?playbook=rolling-update', { token: reports });
    expect(listed.status).toBe(200);
  });

  it('an admin token scoped to some playbooks is a viewer for what belongs to none: the token list', async () => {
    const answer = await t.api('GET', '/api/v1/tokens', { token: reportsAdmin });
    expect(answer.status).toBe(403);
    const listed = await t.api('GET', '/api/v1/tokens', { token: t.tokens.admin });
    expect((listed.body as { tokens: unknown[] }).tokens).toContainEqual(
      expect.objectContaining({ name: 'reports bot', role: 'operator', playbooks: ['*-report*'] }),
    );
  });

  it('`tokens create --playbooks` refuses a viewer and a pattern that is no name pattern (exit 2)', async () => {
    const env = { FLEETBOOK_HOME: t.dir };
    const viewer = await runCli(['tokens', 'create', '--role', 'viewer', '--name', 'v', '--playbooks', 'a*'], { env });
    expect(viewer.code).toBe(2);
    expect(viewer.stderr).toContain('--playbooks limits a role above viewer');
    const odd = await runCli(['tokens', 'create', '--role', 'operator', '--name', 'o', '--playbooks', 'a/b'], { env });
    expect(odd.code).toBe(2);
    expect(odd.stderr).toContain(
      "--playbooks takes playbook name patterns (letters, digits, '.', '_', '-', '*' for any text), comma-separated; got 'a/b'.",
    );
  });
});
