import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/index.js';
import { loadPlaybook } from '../../src/playbook/index.js';
import { createFireQueuer } from '../../src/scheduler/fire-queuer.js';
import type { FireRequest } from '../../src/scheduler/scheduler.js';
import { createPostgresRunStore } from '../../src/store/postgres/index.js';
import type { QueueStore } from '../../src/store/types.js';
import { createTestDatabase, testPostgresUrl } from '../support/postgres-cluster.js';

const adminUrl = testPostgresUrl();
const nightly = join(import.meta.dirname, '..', 'scheduler', 'fixtures', 'nightly', 'nightly-subscription-report.yaml');

describe.skipIf(!adminUrl)('one scheduler among many candidates', () => {
  let url: string;
  const opened: QueueStore[] = [];
  const open = async () => {
    const store = await createPostgresRunStore({ url });
    opened.push(store);
    return store;
  };
  beforeEach(async () => {
    url = await createTestDatabase(adminUrl ?? '');
  });
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });

  it('grants the leadership to one process; the server frees it when its connection dies', async () => {
    const [a, b] = [await open(), await open()];
    const leader = await a.tryLeadership('scheduler');
    expect(leader).toBeDefined();
    expect(await b.tryLeadership('scheduler')).toBeUndefined();
    expect(await leader?.stillHeld()).toBe(true);
    // The leader's process dies (its connection goes): no lease to wait out.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()`,
    );
    await admin.end();
    await expect.poll(() => leader?.stillHeld(), { timeout: 5000 }).toBe(false);
    const next = await b.tryLeadership('scheduler');
    expect(next).toBeDefined();
    expect(await a.tryLeadership('scheduler')).toBeUndefined();
    await next?.release();
    expect(await a.tryLeadership('scheduler')).toBeDefined();
  });

  it('records each fire once, whoever records it', async () => {
    const [a, b] = [await open(), await open()];
    expect(await a.recordFire('nightly', '2026-03-01T05:00:00Z', 'run-1')).toBe(true);
    expect(await b.recordFire('nightly', '2026-03-01T05:00:00.000Z', 'run-2')).toBe(false);
    expect(await b.recordFire('nightly', '2026-03-02T05:00:00.000Z', 'run-3')).toBe(true);
    expect(await b.recordFire('weekly', '2026-03-01T05:00:00.000Z', 'run-4')).toBe(true);
  });

  it('two leaders forced at once (the lock bypassed) queue each of 100 fires once', async () => {
    const loaded = loadPlaybook(nightly);
    const playbook = loaded.playbook;
    if (!playbook) throw new Error('fixture did not load');
    const schedule = playbook.schedules[0];
    if (!schedule) throw new Error('fixture has no schedule');
    const logger = createLogger({ level: 'silent' });
    const leaders = [await open(), await open()].map((store) => ({
      store,
      execute: createFireQueuer({ store, logger, env: {} }),
    }));
    const fires = Array.from(
      { length: 100 },
      (_, index) => new Date(Date.parse('2026-03-01T05:00:00Z') + index * 86_400_000),
    );
    // Each leader makes its own run id for a fire, as two schedulers would.
    const request = (scheduledAt: Date, leader: number): FireRequest => ({
      playbook,
      schedule,
      runId: `fire-${scheduledAt.getTime()}-${leader}`,
      scheduledAt,
      catchUp: false,
      resume: false,
      signal: new AbortController().signal,
    });
    const outcomes = await Promise.all(
      fires.flatMap((at) => leaders.map((leader, index) => leader.execute(request(at, index)))),
    );
    expect(outcomes.every((outcome) => outcome.status === 'queued')).toBe(true);
    const runs = await leaders[0]!.store.listRuns({ limit: 1000 });
    expect(runs).toHaveLength(100);
    expect(runs.every((run) => run.status === 'queued' && run.trigger.kind === 'schedule')).toBe(true);
    const firesQueued = new Set(runs.map((run) => run.id.split('-')[1]));
    expect(firesQueued.size).toBe(100);
  });
});
