// The server on the shared PostgreSQL store: an approval at or after its gate's deadline is
// refused (409 APPROVAL_TIMED_OUT) by the transaction that records the timeout instead, and a
// worker then ends the run as the gate's onTimeout says. The server's clock is moved by hand;
// the run reaches its gate through an in-process worker sharing the server's store.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadQueuedPlaybook } from '../../src/cli/commands/worker-action.js';
import { runWorker } from '../../src/scheduler/index.js';
import { createManualClock } from '../../src/scheduler/testing.js';
import { createPostgresRunStore, isQueueStore, type RunRecord } from '../../src/store/index.js';
import { startTestServer, type TestServer } from '../server/harness.js';
import { createTestDatabase, testPostgresUrl } from '../support/postgres-cluster.js';

const adminUrl = testPostgresUrl();

const TIMED = `name: timed
steps:
  - id: gate
    approval: { message: "go?", timeout: 1h, onTimeout: fail }
  - id: rest
    log: "rest updated"
`;

describe.skipIf(!adminUrl)('approvals on a server with the PostgreSQL store', () => {
  let t: TestServer;
  const clock = createManualClock(Date.now());
  beforeAll(async () => {
    const store = await createPostgresRunStore({ url: await createTestDatabase(adminUrl ?? '', 'fleetbook_decide') });
    // The server's own sweep (every 2 h of its clock) comes after the decision at the 1 h deadline.
    t = await startTestServer({ 'timed.yaml': TIMED }, { store, clock, waitSweepMs: 2 * 3_600_000 });
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A worker in this process, on the server's store, driving the queue until it is empty. */
  async function drain(): Promise<void> {
    const store = t.server.store;
    if (!isQueueStore(store)) throw new Error('the server does not serve a queue store');
    await runWorker({
      store,
      client: t.client,
      logger: t.logger,
      secrets: t.secrets,
      exitWhenIdle: true,
      pollMs: 20,
      loadPlaybook: (run) => loadQueuedPlaybook(run, {}),
      secretInputsOf: () => ({}),
      outputsDir: join(t.dir, 'outputs'),
    });
  }

  it('refuses an approval at the deadline with 409 APPROVAL_TIMED_OUT; the run ends as onTimeout says', async () => {
    const started = await t.api('POST', '/api/v1/runs', { token: t.tokens.operator, body: { playbook: 'timed' } });
    expect(started.status).toBe(202);
    const runId = (started.body as { run: RunRecord }).run.id;
    await drain();
    const waiting = await t.store.getRun(runId);
    expect(waiting).toMatchObject({ status: 'waiting', wait: { path: 'gate', timeoutAt: expect.any(String) } });

    await clock.advanceTo(Date.parse(waiting?.wait?.timeoutAt ?? ''));
    const late = await t.api('POST', `/api/v1/runs/${runId}/approve`, {
      token: t.tokens.operator,
      body: { comment: 'late' },
    });
    expect(late).toMatchObject({ status: 409, body: { error: { code: 'APPROVAL_TIMED_OUT' } } });
    // The refusing transaction recorded the timeout and queued the run for a worker.
    expect((await t.store.getRun(runId))?.status).toBe('queued');
    const decided = (await t.store.journal(runId)).filter((entry) => entry.event.type === 'approval.decided');
    expect(decided.map((entry) => entry.event)).toEqual([
      { type: 'approval.decided', path: 'gate', decision: 'timedOut', by: 'timeout', at: waiting?.wait?.timeoutAt },
    ]);

    await drain();
    expect(await t.store.getRun(runId)).toMatchObject({ status: 'failed', error: { code: 'APPROVAL_TIMED_OUT' } });
  });
});
