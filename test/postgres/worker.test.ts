// Queue and workers against a real PostgreSQL server and the simulator, each worker a process of
// the built CLI (`npm run build` first). The request log of the simulator is the proof that no
// write was sent twice.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RequestLogEntry } from '../../src/simulator/index.js';
import { testPostgresUrl } from '../support/postgres-cluster.js';
import { startTeam, until, type Team } from './team-harness.js';

const adminUrl = testPostgresUrl();
const rollingUpdate = join(import.meta.dirname, '..', 'resume', 'fixtures', 'rolling-update.yaml');
/** Prechecks that outlast any pause of a worker here (the file says why). */
const world = join(import.meta.dirname, 'fixtures', 'long-prechecks.world.yaml');
const WRITES = [
  'privateCloud.runSoftwarePrechecks',
  'privateCloud.runSoftwareUpdate',
  'privateCloud.resumeSoftwareUpdate',
];

/** Writes the platform accepted (or may have: a dropped connection) more than once for one path. */
function acceptedTwice(log: readonly RequestLogEntry[]): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const entry of log) {
    if (entry.method !== 'POST' || !WRITES.includes(entry.operationId) || (entry.status >= 400 && entry.status < 500))
      continue;
    counts.set(entry.path, (counts.get(entry.path) ?? 0) + 1);
  }
  return [...counts].filter(([, count]) => count > 1);
}

async function queue(team: Team): Promise<string> {
  const queued = await team.command(['run', rollingUpdate, '--queue', '--json']);
  expect(queued.code, queued.stderr).toBe(0);
  const line = JSON.parse(queued.stdout.trim().split('\n').at(-1) ?? '{}') as {
    event: string;
    runId: string;
    status: string;
  };
  expect(line).toMatchObject({ event: 'run.queued', status: 'queued' });
  return line.runId;
}

describe.skipIf(!adminUrl)('fleetbook run --queue and fleetbook worker', () => {
  let team: Team;
  // A fresh simulated world per test: a rolling update leaves nothing to update after it.
  beforeEach(async () => {
    team = await startTeam(adminUrl ?? '', { simulatorArgs: ['--world', world] });
    // Writes held 100 ms by the simulator: a kill aimed at a write in flight lands in it.
    const faults = await fetch(`${team.simulatorUrl}/_sim/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rules: WRITES.map((route) => ({ route, latencyMs: 100 })) }),
    });
    expect(faults.status).toBe(200);
  }, 60_000);
  afterEach(async () => {
    await team?.close();
  });

  it('queues a run that two workers share out: one drives it to the end, the other finds nothing', async () => {
    const runId = await queue(team);
    expect((await team.run(runId))?.status).toBe('queued');
    const listed = await team.command(['runs', 'list', '--json']);
    expect(listed.stdout).toContain(runId);
    const workers = [
      team.fleetbook(['worker', '--exit-when-idle', '--poll', '50ms']),
      team.fleetbook(['worker', '--exit-when-idle', '--poll', '50ms']),
    ];
    const ends = await Promise.all(workers.map((worker) => worker.exited));
    expect(ends.map((end) => end.code)).toEqual([0, 0]);
    const run = await team.run(runId);
    expect(run).toMatchObject({ status: 'succeeded', resumes: 0 });
    const claimedBy = workers.filter((worker) => worker.stdout().includes(`"event":"run.claimed"`));
    expect(claimedBy).toHaveLength(1);
    expect(acceptedTwice(await team.requestLog())).toEqual([]);
  });

  it('a SIGKILLed worker loses its run to another, which resumes it from the journal: no write sent twice', async () => {
    const runId = await queue(team);
    const first = team.fleetbook(['worker', '--claim-ttl', '2s', '--poll', '50ms']);
    // Killed with an update sent and its answer not journaled yet: its outcome is unknown.
    await until(
      async () => {
        const last = (await team.journal(runId)).at(-1)?.event;
        return last?.type === 'request.sending' && last.operationId === 'privateCloud.runSoftwareUpdate';
      },
      45_000,
      'an update in flight',
    );
    first.child.kill('SIGKILL');
    const killedAt = Date.now();
    expect((await first.exited).signal).toBe('SIGKILL');
    // Not --exit-when-idle: until the claim lapses, there is nothing it may claim.
    const second = team.fleetbook(['worker', '--claim-ttl', '2s', '--poll', '50ms']);
    await until(async () => second.stdout().includes('"event":"run.resuming"'), 20_000, 'the take-over');
    const takeOverMs = Date.now() - killedAt;
    await until(async () => (await team.run(runId))?.status === 'succeeded', 45_000, 'the end of the run');
    second.child.kill('SIGTERM');
    expect((await second.exited).code, second.stderr()).toBe(0);
    expect(await team.run(runId)).toMatchObject({ status: 'succeeded', resumes: 1 });
    // Taken over within the claim's TTL and a little more.
    expect(takeOverMs).toBeLessThan(2000 + 5000);
    expect(acceptedTwice(await team.requestLog())).toEqual([]);
  });

  it('a worker paused past its claim (presumed dead) cannot write once another took its run over', async () => {
    const runId = await queue(team);
    const paused = team.fleetbook(['worker', '--claim-ttl', '2s', '--poll', '50ms']);
    // Paused once a write it journaled has reached the platform: a worker frozen between
    // journaling a write and sending it sends it when it wakes (no store is asked in between),
    // which is the window docs/team-mode.md describes, not what this test is about.
    await until(
      async () => {
        const journal = (await team.journal(runId)).map((entry) => entry.event);
        const last = journal.at(-1);
        if (last?.type !== 'request.sending' || last.method !== 'POST') return false;
        const journaled = journal.filter((event) => event.type === 'request.sending' && event.method === 'POST');
        const received = (await team.requestLog()).filter(
          (entry) => entry.method === 'POST' && WRITES.includes(entry.operationId),
        );
        return received.length >= journaled.length;
      },
      45_000,
      'a write in flight',
    );
    paused.child.kill('SIGSTOP');
    const other = team.fleetbook(['worker', '--claim-ttl', '2s', '--poll', '50ms']);
    await until(async () => other.stdout().includes('"event":"run.resuming"'), 20_000, 'the take-over');
    // Back from its pause, its next journal append or status change carries a stale token.
    paused.child.kill('SIGCONT');
    await until(
      async () => /STALE_FENCE|"event":"claim.lost"/.test(paused.stdout()),
      20_000,
      'the paused worker to learn it lost the run',
    );
    await until(async () => (await team.run(runId))?.status === 'succeeded', 45_000, 'the end of the run');
    for (const worker of [paused, other]) worker.child.kill('SIGTERM');
    expect((await other.exited).code, other.stderr()).toBe(0);
    expect(acceptedTwice(await team.requestLog())).toEqual([]);
  });

  it('SIGTERM drains: no new claim, the run in flight stops at a journaled point and goes back to the queue', async () => {
    const runId = await queue(team);
    const worker = team.fleetbook(['worker', '--poll', '50ms']);
    await until(
      async () =>
        (await team.journal(runId)).some(
          (entry) => entry.event.type === 'request.sending' && entry.event.method === 'POST',
        ),
      45_000,
      'the first write',
    );
    worker.child.kill('SIGTERM');
    expect((await worker.exited).code, worker.stderr()).toBe(0);
    expect(worker.stdout()).toContain('"event":"run.requeued"');
    const stopped = await team.run(runId);
    expect(stopped?.status).toBe('queued');
    const journaled = (await team.journal(runId)).length;
    // Nothing more is written once it is back in the queue, until another worker claims it.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await team.journal(runId)).length).toBe(journaled);
    const next = team.fleetbook(['worker', '--exit-when-idle', '--poll', '50ms']);
    expect((await next.exited).code, next.stderr()).toBe(0);
    expect(await team.run(runId)).toMatchObject({ status: 'succeeded', resumes: 1 });
    expect(acceptedTwice(await team.requestLog())).toEqual([]);
  });

  it('refuses --queue and worker without a shared store, and a secret given to --queue, with exit 2', async () => {
    const noStore = team.fleetbook(['worker'], {
      FLEETBOOK_STORE: '',
      FLEETBOOK_HOME: join(team.env.TMPDIR ?? '/tmp', 'no-store-home'),
    });
    const ended = await noStore.exited;
    expect(ended.code).toBe(2);
    expect(noStore.stderr()).toContain('needs a shared store');
    const secret = await team.command([
      'run',
      join(import.meta.dirname, '..', 'resume', 'fixtures', 'secret-token.yaml'),
      '--queue',
      '-i',
      'token=s3cr3t-value',
      '-i',
      'hookUrl=http://127.0.0.1:9/hook',
    ]);
    expect(secret.code).toBe(2);
    expect(secret.stderr).toContain('give it to the workers (FLEETBOOK_INPUT_TOKEN)');
    expect(secret.stderr).not.toContain('s3cr3t-value');
  });
});
