// Daemons on a shared store: one leader by the store's advisory lock, fires queued (not run) by
// it alone, and a standby leading once the leader stops, without a fire twice.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { captureLogs } from '../../src/api/testing.js';
import { startDaemon, type Daemon } from '../../src/scheduler/daemon.js';
import { createFireQueuer } from '../../src/scheduler/fire-queuer.js';
import { createManualClock, type ManualClock } from '../../src/scheduler/testing.js';
import { createPostgresRunStore } from '../../src/store/postgres/index.js';
import type { QueueStore } from '../../src/store/types.js';
import { createTestDatabase, testPostgresUrl } from '../support/postgres-cluster.js';

const adminUrl = testPostgresUrl();
const five = join(import.meta.dirname, '..', 'scheduler', 'fixtures', 'five');

/**
 * Moves the clocks together in 5 s steps; after each step, waits until every daemon has
 * nothing under way (its leadership round trips and the fires it queued), not for wall time.
 */
async function advanceTogether(clocks: ManualClock[], daemons: readonly Daemon[], iso: string): Promise<void> {
  const target = Date.parse(iso);
  for (let at = Math.min(...clocks.map((clock) => clock.now())) + 5000; ; at = Math.min(at + 5000, target)) {
    for (const clock of clocks) if (clock.now() < at) await clock.advanceTo(at);
    await Promise.all(daemons.map((daemon) => daemon.idle()));
    if (at >= target) return;
  }
}

describe.skipIf(!adminUrl)('daemons in team mode', () => {
  let url: string;
  const stores: QueueStore[] = [];
  const daemons: Daemon[] = [];
  beforeEach(async () => {
    url = await createTestDatabase(adminUrl ?? '');
  });
  afterEach(async () => {
    for (const daemon of daemons.splice(0)) await daemon.stop();
    for (const store of stores.splice(0)) await store.close();
  });

  it('one leads and only queues the fires; a standby takes over when it stops, each fire queued once', async () => {
    const start = Date.parse('2026-03-01T10:00:30.000Z');
    const clocks = [createManualClock(start), createManualClock(start)];
    for (const clock of clocks) {
      const store = await createPostgresRunStore({ url, now: () => new Date(clock.now()) });
      stores.push(store);
      const { logger } = captureLogs();
      daemons.push(
        await startDaemon({
          playbooksDir: five,
          store,
          logger,
          clock,
          watch: false,
          leaseTtlMs: 15_000,
          teamLeadership: store,
          execute: createFireQueuer({ store, logger, env: {} }),
        }),
      );
    }
    await advanceTogether(clocks, daemons, '2026-03-01T10:11:00.000Z');
    expect(daemons.map((daemon) => daemon.isLeader()).filter(Boolean)).toHaveLength(1);
    const queued = async () =>
      (await stores[0]!.listRuns({ limit: 100 })).filter((run) => run.trigger.kind === 'schedule');
    expect((await queued()).map((run) => run.status)).toEqual(['queued', 'queued']);

    const leader = daemons.findIndex((daemon) => daemon.isLeader());
    const standby = 1 - leader;
    await daemons[leader]!.stop();
    await advanceTogether(clocks, daemons, '2026-03-01T10:21:00.000Z');
    expect(daemons[standby]!.isLeader()).toBe(true);
    const runs = await queued();
    expect(runs.map((run) => run.status)).toEqual(['queued', 'queued', 'queued', 'queued']);
  });
});
