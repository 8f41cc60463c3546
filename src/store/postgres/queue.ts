import { fencedView } from '../fenced-view.js';
import { normaliseTimestamp } from '../payload.js';
import { assertLeaseTtl, rowToRun, type RunRow } from '../run-row.js';
import type { RunClaim, RunQueue } from '../types.js';
import { RunStatus } from '../types.js';
import { type PostgresContext } from './open.js';
import {
  SQL_CLAIM_RUN,
  SQL_RECORD_FIRE,
  SQL_RENEW_CLAIM,
  SQL_REQUEUE_RUN,
  SQL_STILL_LEADER,
  SQL_TRY_LEADERSHIP,
} from './sql.js';

function leadershipMethods(context: PostgresContext): Pick<RunQueue, 'tryLeadership'> {
  const { serial, driver, url, options, leaderships } = context;
  return {
    tryLeadership: (name) =>
      serial(async () => {
        // Its own connection, outside the pool: the lock lives exactly as long as it does.
        const client = new driver.Client({
          connectionString: url,
          connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
        });
        let lost = false;
        client.on('error', () => (lost = true));
        client.on('end', () => (lost = true));
        await client.connect();
        const held = (await client.query<{ held: boolean }>(SQL_TRY_LEADERSHIP, [name])).rows[0]?.held === true;
        if (!held) {
          await client.end().catch(() => undefined);
          return undefined;
        }
        leaderships.add(client);
        // A daemon checks on a timer and before each fire: checks that overlap share the one in
        // flight, since a second query on this client while one runs is what pg warns against.
        let checking: Promise<boolean> | undefined;
        const check = async (): Promise<boolean> => {
          if (lost) return false;
          try {
            return (await client.query<{ held: boolean }>(SQL_STILL_LEADER, [name])).rows[0]?.held === true;
          } catch {
            return false;
          }
        };
        return {
          stillHeld() {
            checking ??= check().finally(() => (checking = undefined));
            return checking;
          },
          async release() {
            leaderships.delete(client);
            await client.end().catch(() => undefined);
          },
        };
      }),
  };
}

/** The queue of team mode: runs queued, claimed by workers, and schedule fires. */
function queueMethods(context: PostgresContext): Omit<RunQueue, 'tryLeadership'> {
  const { resolved, serial, query, commit, insertRun, self } = context;
  return {
    enqueueRun: (run) => insertRun(run, RunStatus.queued),

    claimRun: (owner, ttlMs) =>
      serial(async () => {
        assertLeaseTtl(ttlMs);
        const nowMs = resolved.now().getTime();
        const row = (
          await query<RunRow & { fence: string; previous: string | null }>(SQL_CLAIM_RUN, [owner, nowMs, nowMs + ttlMs])
        ).rows[0];
        if (!row) return undefined;
        const claim: RunClaim = { run: rowToRun(row), fence: Number(row.fence) };
        if (row.previous !== null) claim.previousOwner = row.previous;
        return claim;
      }),

    renewClaim: (runId, fence, ttlMs) =>
      serial(async () => {
        assertLeaseTtl(ttlMs);
        return (await query(SQL_RENEW_CLAIM, [runId, fence, resolved.now().getTime() + ttlMs])).rowCount === 1;
      }),

    requeueRun: (runId, fence) =>
      serial(async () => {
        await commit();
        return (await query(SQL_REQUEUE_RUN, [runId, fence])).rowCount === 1;
      }),

    fenced: (runId, fence) => fencedView(self(), runId, fence),

    recordFire: (scheduleKey, fireAt, runId) =>
      serial(
        async () =>
          (
            await query(SQL_RECORD_FIRE, [
              scheduleKey,
              normaliseTimestamp(fireAt, 'fireAt'),
              runId,
              resolved.now().toISOString(),
            ])
          ).rowCount === 1,
      ),
  };
}

/** The team store's queue of runs, its fired schedules and the scheduler's leadership. */
export function postgresQueue(context: PostgresContext): RunQueue {
  return { ...queueMethods(context), ...leadershipMethods(context) };
}
