/**
 * Door × policy: the doors a run goes on by, and the pages' doors, through the door itself: the
 * pages' "Start run", "Trigger now", Approve and Cancel forms (a session's form posts), the API's
 * resume and approve, `fleetbook schedules trigger` and `fleetbook approve`. One server on a
 * clock moved by hand (its sweep of due waits every 2 h of it), whose runs' ends and waits go
 * to a webhook: each is delivered once; a secret input never shows in a page, an answer, the
 * journal or the CLI's output, `[REDACTED]` in its place; a gate's deadline holds; a run is
 * cancelled from its page; deciding in a page takes the operator role and the approver's name.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPlaybook } from '../../src/playbook/index.js';
import { createManualClock, type ManualClock } from '../../src/scheduler/testing.js';
import { openRunStore, RunStatus } from '../../src/store/index.js';
import { startHttpReceiver, type HttpReceiver } from '../notifications/receivers.js';
import { jsonLines, runCli } from '../support/cli.js';
import { pageSession, startTestServer, type TestServer } from '../server/harness.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const SECRET = 'tok-5ecret-door-7731';
const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

const GATED = `name: gated
inputs:
  token: { type: string, secret: true }
steps:
  - id: gate
    approval: { message: "deploy?", approvers: ["on-call operator"] }
  - id: use
    log: "deploying with \${{ inputs.token }}"
outputs:
  used: "\${{ inputs.token }}"
`;

const TWICE = `name: twice
steps:
  - id: first
    approval: { message: "first half?" }
  - id: second
    approval: { message: "second half?" }
`;

const TIMED = `name: timed
schedules:
  - id: timed-nightly
    cron: "0 2 * * *"
    overlap: allow
steps:
  - id: gate
    approval: { message: "go?", timeout: 1h, onTimeout: fail }
  - id: rest
    log: "rest updated"
`;

const ROTATE_SECRET = 'rot-5ecret-schedule-2290';
const ROTATE = `name: rotate
inputs:
  token: { type: string, secret: true }
schedules:
  - id: rotate-nightly
    cron: "0 3 * * *"
    overlap: allow
    inputs: { token: ${ROTATE_SECRET} }
steps:
  - id: use
    log: "rotating with \${{ inputs.token }}"
outputs:
  used: "\${{ inputs.token }}"
`;

const RESUMABLE = `name: resumable
inputs:
  token: { type: string, secret: true }
steps:
  - id: note
    log: "resumed with \${{ inputs.token }}"
`;

// Frozen from today (UTC) on: a run of it interrupted before the freeze began is resumed inside it.
const FROZEN = `name: frozen
inputs:
  token: { type: string, secret: true }
freeze: [{ from: ${dateOf(Date.now())}, to: ${dateOf(Date.now() + DAY)}, reason: change freeze }]
steps:
  - id: note
    log: "resumed with \${{ inputs.token }}"
  - id: hosts
    forEach: ["hci-1", "hci-2"]
    as: host
    steps:
      - id: update
        log: "updating \${{ host }}"
`;

let t: TestServer;
let clock: ManualClock;
let receiver: HttpReceiver;
beforeAll(async () => {
  receiver = await startHttpReceiver(() => 200);
  clock = createManualClock(Date.now());
  t = await startTestServer(
    {
      'gated.yaml': GATED,
      'twice.yaml': TWICE,
      'timed.yaml': TIMED,
      'resumable.yaml': RESUMABLE,
      'frozen.yaml': FROZEN,
      'rotate.yaml': ROTATE,
    },
    { clock, waitSweepMs: 2 * HOUR, webhook: { url: receiver.url, on: ['succeeded', 'failed', 'waiting'] } },
  );
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

/** Resolves once run `runId` is in one of `states` (a bounded poll of the store). */
async function until(runId: string, states: string[]): Promise<string> {
  for (let tries = 0; tries < 500; tries += 1) {
    const status = (await t.store.getRun(runId))?.status;
    if (status && states.includes(status)) return status;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`run ${runId} never became ${states.join(' or ')}`);
}

/**
 * The webhook's deliveries of run `runId` once it holds `events` of it (a bounded wait): the
 * events delivered, in order, after a look that nothing else came, each key delivered once.
 */
async function notified(runId: string, events: number): Promise<string[]> {
  const ofRun = () => receiver.arrivals.filter((arrival) => arrival.body.runId === runId);
  for (let tries = 0; tries < 500 && ofRun().length < events; tries += 1)
    await new Promise((resolve) => setTimeout(resolve, 20));
  const keys = ofRun().map((arrival) => arrival.key);
  expect(new Set(keys).size, `the keys of ${runId}: ${keys.join(', ')}`).toBe(keys.length);
  expect(ofRun().every((arrival) => arrival.answered === 200)).toBe(true);
  return ofRun().map((arrival) => String(arrival.body.event));
}

/** A signed-in page session of `token`: its form posts and page reads, as a browser sends them. */
async function pages(token: string) {
  const session = await pageSession(t.server.app, token);
  const headers = { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded' };
  return {
    post: (url: string, fields: Record<string, string> = {}) =>
      t.server.app.inject({
        method: 'POST',
        url,
        headers,
        payload: new URLSearchParams({ _csrf: session.csrf, ...fields }).toString(),
      }),
    get: async (url: string) => (await t.server.app.inject({ method: 'GET', url, headers })).body,
  };
}

const runOf = (location: unknown) => /^\/runs\/([0-9a-f-]+)$/.exec(String(location))?.[1] ?? '';

describe('the pages: start, trigger, approve and cancel', () => {
  it('ui.start, ui.approve: started and approved in the pages, the secret never shown, each event notified once; only an operator who is an approver decides', async () => {
    const operator = await pages(t.tokens.operator);
    const started = await operator.post('/playbooks/gated/run', { 'input.token': SECRET });
    expect(started.statusCode).toBe(303);
    const runId = runOf(started.headers.location);
    await until(runId, ['waiting']);

    const viewer = await pages(t.tokens.viewer);
    const refused = await viewer.post(`/runs/${runId}/approve`);
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('This needs the operator role; you are viewer.');
    const admin = await pages(t.tokens.admin);
    const notApprover = await admin.post(`/runs/${runId}/approve`);
    expect(notApprover.statusCode).toBe(403);
    expect(notApprover.body).toContain('Not recorded');
    expect(notApprover.body).toContain('ops lead');
    expect((await t.store.getRun(runId))?.status).toBe('waiting');

    const approved = await operator.post(`/runs/${runId}/approve`, { comment: 'ship it' });
    expect(approved.statusCode, approved.body.replace(/[\s\S]*<main/, '')).toBe(303);
    expect(await until(runId, ['succeeded', 'failed'])).toBe('succeeded');
    const page = await operator.get(`/runs/${runId}`);
    expect(page).toContain('deploying with [REDACTED]');
    expect(page).not.toContain(SECRET);
    expect(JSON.stringify(await t.store.journal(runId))).not.toContain(SECRET);
    expect((await t.store.getRun(runId))?.outputs).toEqual({ used: '[REDACTED]' });
    expect(t.logText()).not.toContain(SECRET);
    expect(await notified(runId, 2)).toEqual(['waiting', 'succeeded']);
  });

  it('ui.start, ui.approve: a run started in the page, and one approved there, are cancelled from their page', async () => {
    const operator = await pages(t.tokens.operator);
    const waiting = runOf((await operator.post('/playbooks/twice/run')).headers.location);
    const goingOn = runOf((await operator.post('/playbooks/twice/run')).headers.location);
    await until(waiting, ['waiting']);
    await until(goingOn, ['waiting']);
    const approved = await operator.post(`/runs/${goingOn}/approve`);
    expect(approved.statusCode, approved.body.replace(/[\s\S]*<main/, '')).toBe(303);
    for (;;) {
      const run = await t.store.getRun(goingOn);
      if (run?.status === 'waiting' && run.wait?.path === 'second') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (const runId of [waiting, goingOn]) {
      const cancelled = await operator.post(`/runs/${runId}/cancel`);
      expect(cancelled.statusCode).toBe(303);
      expect(await operator.get(`/runs/${runId}`)).toContain('cancelled');
      expect((await t.store.getRun(runId))?.status).toBe('cancelled');
    }
  });
});

describe("a gate's deadline, whichever door started the run", () => {
  it('ui.approve, ui.trigger, cli.trigger: a decision in the page at the deadline is refused; a triggered run past it ends as onTimeout says, by the server’s sweep', async () => {
    const operator = await pages(t.tokens.operator);
    const triggered = await operator.post('/schedules/timed-nightly/trigger');
    expect(triggered.statusCode).toBe(303);
    const inPage = runOf(triggered.headers.location);
    const fromCli = await runCli(
      [
        'schedules',
        'trigger',
        'timed-nightly',
        '--playbooks',
        join(t.dir, 'playbooks'),
        '--target',
        'simulator',
        '--json',
      ],
      { env: { FLEETBOOK_HOME: t.dir } },
    );
    // Exit 75: the run waits at its gate, and this process does not stay.
    expect(fromCli.code, fromCli.stderr).toBe(75);
    const onCli = String((jsonLines(fromCli.stdout).at(-1)?.result as { runId: string }).runId);
    const decided = runOf((await operator.post('/playbooks/timed/run')).headers.location);
    for (const runId of [inPage, onCli, decided]) await until(runId, ['waiting']);
    expect((await t.store.getRun(onCli))?.trigger).toMatchObject({ kind: 'trigger', scheduleId: 'timed-nightly' });

    await clock.advanceTo(Date.parse((await t.store.getRun(decided))?.wait?.timeoutAt ?? ''));
    const late = await operator.post(`/runs/${decided}/approve`, { comment: 'sorry, late' });
    expect(late.statusCode).toBe(409);
    expect(late.body).toContain('a decision after the timeout is refused, and the gate&#39;s onTimeout (fail) applies');
    expect(await until(decided, ['failed', 'succeeded'])).toBe('failed');

    // Nobody decides the triggered runs: the server's sweep ends their waits and resumes them.
    await clock.advanceBy(3 * HOUR);
    for (const runId of [inPage, onCli]) {
      expect(await until(runId, ['failed', 'succeeded', 'interrupted']), runId).toBe('failed');
      expect(await t.store.getRun(runId)).toMatchObject({ error: { code: 'APPROVAL_TIMED_OUT' }, resumes: 1 });
    }
    expect(await notified(inPage, 2)).toEqual(['waiting', 'failed']);
  });
});

describe('the API: approve, trigger and resume', () => {
  /** The run's log lines as the API answers them, and its outputs. */
  const shown = async (runId: string) => {
    const logs = await t.api('GET', `/api/v1/runs/${runId}/logs`, { token: t.tokens.viewer });
    const run = await t.api('GET', `/api/v1/runs/${runId}`, { token: t.tokens.viewer });
    return JSON.stringify([logs.body, run.body]);
  };

  it('api.approve, api.trigger, ui.trigger: a secret input is redacted in every answer, page and journal; each event notified once', async () => {
    const started = await t.api('POST', '/api/v1/runs', {
      token: t.tokens.operator,
      body: { playbook: 'gated', inputs: { token: SECRET } },
    });
    const gated = (started.body as { run: { id: string } }).run.id;
    await until(gated, ['waiting']);
    const approved = await t.api('POST', `/api/v1/runs/${gated}/approve`, { token: t.tokens.operator, body: {} });
    expect(approved.status).toBe(202);
    expect(await until(gated, ['succeeded', 'failed'])).toBe('succeeded');
    expect(await shown(gated)).toContain('deploying with [REDACTED]');
    expect(await notified(gated, 2)).toEqual(['waiting', 'succeeded']);

    const triggered = await t.api('POST', '/api/v1/schedules/rotate-nightly/trigger', { token: t.tokens.operator });
    const byApi = (triggered.body as { run: { id: string } }).run.id;
    const byPage = runOf(
      (await (await pages(t.tokens.operator)).post('/schedules/rotate-nightly/trigger')).headers.location,
    );
    for (const runId of [byApi, byPage]) {
      expect(await until(runId, ['succeeded', 'failed'])).toBe('succeeded');
      expect(await shown(runId)).toContain('rotating with [REDACTED]');
      expect(await t.store.getRun(runId)).toMatchObject({ outputs: { used: '[REDACTED]' } });
      expect(JSON.stringify(await t.store.journal(runId))).not.toContain(ROTATE_SECRET);
    }
    expect(await (await pages(t.tokens.viewer)).get(`/runs/${byPage}`)).toContain('rotating with [REDACTED]');
    expect(await notified(byPage, 1)).toEqual(['succeeded']);
    for (const text of [...t.answers, t.logText(), JSON.stringify(await t.store.journal(gated))]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(ROTATE_SECRET);
    }
  });

  /**
   * A run of `name` recorded yesterday with a secret input given, and interrupted before its first
   * step (a server stopped with it), as the store keeps it: no secret, no journal.
   */
  async function interruptedRun(name: string): Promise<string> {
    const file = join(t.dir, 'playbooks', `${name}.yaml`);
    const run = await t.store.createRun({
      id: `${name}-${receiver.arrivals.length}-${Date.now()}`,
      playbook: name,
      playbookSource: file,
      playbookHash: loadPlaybook(file).playbook?.hash ?? '',
      inputs: {},
      secretInputNames: ['token'],
      dryRun: false,
      trigger: { kind: 'manual', by: 'on-call operator' },
      startedAt: new Date(Date.now() - DAY).toISOString(),
    });
    await t.store.setRunStatus(run.id, RunStatus.interrupted);
    return run.id;
  }

  it('api.resume: the run goes on with its secret given again, redacted, its end notified once; inside its freeze it starts no item', async () => {
    const runId = await interruptedRun('resumable');
    const resume = (id: string) =>
      t.api('POST', `/api/v1/runs/${id}/resume`, {
        token: t.tokens.operator,
        body: { secretInputs: { token: SECRET } },
      });
    expect((await resume(runId)).status).toBe(202);
    expect(await until(runId, ['succeeded', 'failed'])).toBe('succeeded');
    expect(await shown(runId)).toContain('resumed with [REDACTED]');
    expect(await notified(runId, 1)).toEqual(['succeeded']);

    // Frozen since today: the run goes on under its playbook's freeze as it is now.
    const frozen = await interruptedRun('frozen');
    expect((await resume(frozen)).status).toBe(202);
    expect(await until(frozen, ['waiting', 'succeeded', 'failed'])).toBe('waiting');
    expect((await t.store.getRun(frozen))?.wait).toMatchObject({ reason: 'window', path: 'hosts' });
    expect((await t.store.journal(frozen)).map((entry) => entry.event.type)).not.toContain('item.started');
    expect(await shown(frozen)).toContain('resumed with [REDACTED]');
    for (const text of [await shown(runId), await shown(frozen), JSON.stringify(await t.store.journal(runId))])
      expect(text).not.toContain(SECRET);
  });
});

describe('the command line: approve', () => {
  it('cli.approve: the run goes on in `fleetbook approve` with its secret read again, redacted in its output and the journal', async () => {
    const home = mkdtempSync(join(tmpdir(), 'fleetbook-approve-'));
    try {
      const file = join(home, 'gated.yaml');
      writeFileSync(file, GATED.replace(', approvers: ["on-call operator"]', ''));
      const env = { FLEETBOOK_HOME: home };
      const started = await runCli(['run', file, '--target', 'simulator', '--json', '-i', `token=${SECRET}`], { env });
      expect(started.code, started.stderr).toBe(75);
      const runId = String((jsonLines(started.stdout).at(-1)?.result as { runId: string }).runId);
      const approved = await runCli(['approve', runId, '--comment', 'go', '--json'], {
        env: { ...env, FLEETBOOK_INPUT_TOKEN: SECRET },
      });
      expect(approved.code, approved.stderr).toBe(0);
      expect(approved.stdout).toContain('deploying with [REDACTED]');
      expect(jsonLines(approved.stdout).at(-1)?.result).toMatchObject({
        status: 'succeeded',
        outputs: { used: '[REDACTED]' },
      });
      const store = await openRunStore({ env });
      try {
        expect(JSON.stringify(await store.journal(runId))).not.toContain(SECRET);
      } finally {
        await store.close();
      }
      for (const text of [started.stdout, started.stderr, approved.stdout, approved.stderr])
        expect(text).not.toContain(SECRET);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
