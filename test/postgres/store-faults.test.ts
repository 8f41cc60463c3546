// A database that goes away mid-run: the run stops at a journaled point (exit 1, a clear message),
// and once the server is back `fleetbook resume` finishes it with no write sent twice. The server
// is a cluster of this file's own, since it is stopped (as a crash would stop it) mid-test.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  findPostgresBin,
  startPostgresCluster,
  testPostgresUrl,
  type PostgresCluster,
} from '../support/postgres-cluster.js';
import { startTeam, until, type Team } from './team-harness.js';

const installed = testPostgresUrl() !== undefined;
const rollingUpdate = join(import.meta.dirname, '..', 'resume', 'fixtures', 'rolling-update.yaml');
const WRITES = [
  'privateCloud.runSoftwarePrechecks',
  'privateCloud.runSoftwareUpdate',
  'privateCloud.resumeSoftwareUpdate',
];

describe.skipIf(!installed)('the shared store goes away mid-run', () => {
  let cluster: PostgresCluster;
  let team: Team;
  beforeAll(async () => {
    cluster = await startPostgresCluster(findPostgresBin() ?? '');
    team = await startTeam(cluster.adminUrl);
  }, 60_000);
  afterAll(async () => {
    await team?.close();
    cluster?.stop();
  });

  it('stops the run at a journaled point with exit 1; resumed once the server is back, it ends with no write sent twice', async () => {
    const run = team.fleetbook(['run', rollingUpdate, '--json']);
    let runId = '';
    await until(
      async () => {
        runId ||= /"runId":"([0-9a-f-]+)"/.exec(run.stdout())?.[1] ?? '';
        return (
          runId !== '' &&
          (await team.journal(runId)).some(
            (entry) => entry.event.type === 'request.answered' && entry.event.httpStatus === 202,
          )
        );
      },
      45_000,
      'the first accepted write',
    );
    cluster.pause();
    const ended = await run.exited;
    expect(ended.code).toBe(1);
    expect(run.stdout() + run.stderr()).toMatch(
      /The run store postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/\w+ failed/,
    );
    expect(run.stderr(), run.stderr()).not.toMatch(/\n\s+at /);
    cluster.resume();
    const resumed = await team.command(['resume', runId, '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(await team.run(runId)).toMatchObject({ status: 'succeeded', resumes: 1 });
    const counts = new Map<string, number>();
    for (const entry of await team.requestLog()) {
      if (entry.method === 'POST' && WRITES.includes(entry.operationId) && !(entry.status >= 400 && entry.status < 500))
        counts.set(entry.path, (counts.get(entry.path) ?? 0) + 1);
    }
    expect([...counts].filter(([, count]) => count > 1)).toEqual([]);
  });
});
