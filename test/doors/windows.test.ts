/**
 * Door × policy: windows and freezes, and the role that may ignore them. A playbook whose freeze
 * covers today is refused at every door that starts a run, through the door itself: the CLI's
 * `run`, `run --queue` and `schedules trigger` (exit 2, OUTSIDE_WINDOW, nothing recorded), the
 * API's start and trigger (409 OUTSIDE_WINDOW) and the pages' "Start run" and "Trigger now" (a
 * page that says why). Ignoring the window takes the admin role and a reason, recorded in the run.
 * The daemon's fires are skipped by the same rule (test/scheduler/windows.test.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRunStore } from '../../src/store/index.js';
import { runCli } from '../support/cli.js';
import { pageSession, startTestServer, type TestServer } from '../server/harness.js';

const DAY = 86_400_000;
const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const FREEZE = `{ from: ${dateOf(Date.now() - DAY)}, to: ${dateOf(Date.now() + DAY)}, reason: year-end freeze }`;

const frozen = `name: frozen
freeze: [${FREEZE}]
schedules:
  - id: nightly
    cron: "0 2 * * *"
steps:
  - id: hello
    log: hello
`;

let dir: string;
let t: TestServer;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-doors-'));
  writeFileSync(join(dir, 'frozen.yaml'), frozen);
  t = await startTestServer({ 'frozen.yaml': frozen });
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

const env = () => ({ FLEETBOOK_HOME: join(dir, 'home') });

async function runsOfHome(): Promise<number> {
  const store = await openRunStore({ env: env() });
  try {
    return (await store.listRuns()).length;
  } finally {
    await store.close();
  }
}

describe('a freeze holds at every door that starts a run', () => {
  it('cli.run, cli.queue, cli.trigger: exit 2 OUTSIDE_WINDOW naming the freeze, nothing recorded', async () => {
    const file = join(dir, 'frozen.yaml');
    for (const args of [
      ['run', file, '--target', 'simulator'],
      ['run', file, '--queue'],
      ['schedules', 'trigger', file, '--target', 'simulator'],
      ['schedules', 'trigger', 'nightly', '--playbooks', dir, '--target', 'simulator'],
    ]) {
      const { code, stderr } = await runCli(args, { env: env() });
      expect(code, args.join(' ')).toBe(2);
      expect(stderr, args.join(' ')).toContain('may not start now: inside the freeze');
      expect(stderr, args.join(' ')).toContain('(year-end freeze)');
      expect(stderr).not.toMatch(/\n\s+at /);
    }
    expect(await runsOfHome()).toBe(0);
  });

  it('api.start, api.trigger: 409 OUTSIDE_WINDOW, nothing recorded', async () => {
    const started = await t.api('POST', '/api/v1/runs', { token: t.tokens.operator, body: { playbook: 'frozen' } });
    expect(started).toMatchObject({ status: 409, body: { error: { code: 'OUTSIDE_WINDOW' } } });
    expect((started.body as { error: { message: string } }).error.message).toContain('inside the freeze');
    const triggered = await t.api('POST', '/api/v1/schedules/nightly/trigger', { token: t.tokens.operator });
    expect(triggered).toMatchObject({ status: 409, body: { error: { code: 'OUTSIDE_WINDOW' } } });
    expect(await t.store.listRuns({ playbook: 'frozen' })).toEqual([]);
  });

  it('ui.start, ui.trigger: the page says why, nothing recorded', async () => {
    const app = t.server.app;
    const session = await pageSession(app, t.tokens.operator);
    const form = (url: string) =>
      app.inject({
        method: 'POST',
        url,
        headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ _csrf: session.csrf }).toString(),
      });
    const started = await form('/playbooks/frozen/run');
    expect(started.statusCode).toBe(400);
    expect(started.body).toContain('may not start now: inside the freeze');
    const triggered = await form('/schedules/nightly/trigger');
    expect(triggered.statusCode).toBe(409);
    expect(triggered.body).toContain('may not start now: inside the freeze');
    expect(await t.store.listRuns({ playbook: 'frozen' })).toEqual([]);
  });
});

describe('a rerun is admitted as a start is', () => {
  it('cli.rerun, api.rerun, ui.rerun: a rerun inside the freeze is refused, naming it, nothing recorded', async () => {
    // Runs started by an admin ignoring the freeze, then run again without ignoring it.
    const started = await runCli(
      ['run', join(dir, 'frozen.yaml'), '--target', 'simulator', '--ignore-window', 'rehearsal', '--json'],
      { env: env() },
    );
    expect(started.code, started.stderr).toBe(0);
    const cliRun = String((started.stdout.match(/"runId":"([^"]+)"/) ?? [])[1]);
    const cli = await runCli(['rerun', cliRun, '--target', 'simulator'], { env: env() });
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain('may not start now: inside the freeze');
    expect(cli.stderr).not.toMatch(/\n\s+at /);
    expect(await runsOfHome()).toBe(1);

    const admin = await t.api('POST', '/api/v1/runs', {
      token: t.tokens.admin,
      body: { playbook: 'frozen', ignoreWindow: { reason: 'rehearsal' } },
    });
    const runId = (admin.body as { run: { id: string } }).run.id;
    const before = (await t.store.listRuns({ playbook: 'frozen' })).length;
    const api = await t.api('POST', `/api/v1/runs/${runId}/rerun`, { token: t.tokens.operator });
    expect(api).toMatchObject({ status: 409, body: { error: { code: 'OUTSIDE_WINDOW' } } });
    const app = t.server.app;
    const session = await pageSession(app, t.tokens.operator);
    const page = await app.inject({
      method: 'POST',
      url: `/runs/${runId}/rerun`,
      headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: session.csrf }).toString(),
    });
    expect(page.statusCode).toBe(409);
    expect(page.body).toContain('may not start now: inside the freeze');
    expect(await t.store.listRuns({ playbook: 'frozen' })).toHaveLength(before);
  });
});

describe('ignoring a window takes the admin role and a reason', () => {
  it('through the API: an operator is refused (403 ROLE_FORBIDDEN), an admin starts it, recorded with the reason', async () => {
    const ignoreWindow = { reason: 'hotfix for INC-4711' };
    const refused = await t.api('POST', '/api/v1/runs', {
      token: t.tokens.operator,
      body: { playbook: 'frozen', ignoreWindow },
    });
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'ROLE_FORBIDDEN' } } });
    const empty = await t.api('POST', '/api/v1/runs', {
      token: t.tokens.admin,
      body: { playbook: 'frozen', ignoreWindow: { reason: '' } },
    });
    expect(empty.status).toBe(400);
    const started = await t.api('POST', '/api/v1/runs', {
      token: t.tokens.admin,
      body: { playbook: 'frozen', ignoreWindow },
    });
    expect(started.status).toBe(202);
    const runId = (started.body as { run: { id: string } }).run.id;
    const run = await t.store.getRun(runId);
    expect(run?.trigger).toMatchObject({ kind: 'manual', by: 'ops lead' });
    expect(run?.trigger.ignoredWindow).toContain('inside the freeze');
    expect(run?.trigger.ignoredWindow).toContain('ignored by ops lead: hotfix for INC-4711');
    const audit = t
      .logText()
      .split('\n')
      .filter((line) => line.includes('"audit.runStarted"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((line) => line.runId === runId);
    expect(audit).toMatchObject({ by: 'ops lead', ignoredWindow: expect.stringContaining('INC-4711') });
  });

  it('on the command line: --ignore-window with a reason, recorded in the run', async () => {
    const { code } = await runCli(
      ['run', join(dir, 'frozen.yaml'), '--target', 'simulator', '--ignore-window', 'change CHG-99 approved', '--json'],
      { env: env() },
    );
    expect(code).toBe(0);
    const store = await openRunStore({ env: env() });
    try {
      const [run] = await store.listRuns({ playbook: 'frozen' });
      expect(run?.trigger.ignoredWindow).toMatch(/inside the freeze .*; ignored by .+: change CHG-99 approved$/);
    } finally {
      await store.close();
    }
  });
});
