// Team mode: a queued run waits at its gate with no worker holding it; `approve` queues it again
// and a worker resumes it; a run a worker drives is cancelled from another process (the worker
// sees the request at its heartbeat and ends it `cancelled`). Built CLI, real PostgreSQL.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testPostgresUrl } from '../support/postgres-cluster.js';
import { startTeam, until, type Team } from './team-harness.js';

const adminUrl = testPostgresUrl();
const dir = mkdtempSync(join(tmpdir(), 'fleetbook-team-approvals-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function playbookFile(name: string, yaml: string): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, yaml);
  return file;
}

async function queue(team: Team, file: string): Promise<string> {
  const queued = await team.command(['run', file, '--queue', '--json']);
  expect(queued.code, queued.stderr).toBe(0);
  return (JSON.parse(queued.stdout.trim().split('\n').at(-1) ?? '{}') as { runId: string }).runId;
}

describe.skipIf(!adminUrl)('team mode: approvals and cancel', () => {
  let team: Team;
  beforeEach(async () => {
    team = await startTeam(adminUrl ?? '');
  }, 60_000);
  afterEach(async () => {
    await team?.close();
  });

  it('a run waits with no worker holding it; approve queues it again and a worker continues it', async () => {
    const gated = playbookFile(
      'gated',
      `name: gated
steps:
  - id: gate
    approval: { message: go?, inputs: { size: { type: integer, default: 1 } } }
  - id: systems
    call: privateCloud.listSystems
outputs:
  by: \${{ steps.gate.outputs.approvedBy }}
  size: \${{ steps.gate.outputs.inputs.size }}
`,
    );
    const runId = await queue(team, gated);
    const first = team.fleetbook(['worker', '--exit-when-idle', '--poll', '50ms']);
    expect((await first.exited).code).toBe(0);
    expect(await team.run(runId)).toMatchObject({ status: 'waiting', wait: { reason: 'approval', path: 'gate' } });
    const waiting = await team.command(['runs', 'list', '--status', 'waiting', '--json']);
    expect(waiting.stdout).toContain(runId);

    const approved = await team.command(['approve', runId, '-i', 'size=3', '--comment', 'ok', '--json']);
    expect(approved.code, approved.stderr).toBe(0);
    expect(JSON.parse(approved.stdout.trim())).toMatchObject({
      runId,
      status: 'queued',
      decision: { by: userInfo().username },
    });
    expect((await team.run(runId))?.status).toBe('queued');

    const second = team.fleetbook(['worker', '--exit-when-idle', '--poll', '50ms']);
    expect((await second.exited).code).toBe(0);
    expect(await team.run(runId)).toMatchObject({
      status: 'succeeded',
      outputs: { by: userInfo().username, size: 3 },
    });
  });

  it("a worker's sweep ends a gate whose timeout passed and continues the run (onTimeout: continue)", async () => {
    const timed = playbookFile(
      'timed',
      `name: timed
steps:
  - id: gate
    approval: { message: go?, timeout: 1s, onTimeout: continue }
outputs:
  timedOut: \${{ steps.gate.outputs.timedOut }}
`,
    );
    const runId = await queue(team, timed);
    const first = team.fleetbook(['worker', '--exit-when-idle', '--poll', '50ms']);
    expect((await first.exited).code).toBe(0);
    const waiting = await team.run(runId);
    expect(waiting).toMatchObject({ status: 'waiting', wait: { timeoutAt: expect.any(String) } });
    // The gate's timeout is 1 s of wall time (the worker's clock): the next worker starts once it passed.
    const timeoutAt = Date.parse(waiting?.wait?.timeoutAt ?? '');
    await until(async () => Date.now() > timeoutAt, 5_000, 'the gate to time out');
    const second = team.fleetbook(['worker', '--exit-when-idle', '--poll', '50ms']);
    expect((await second.exited).code).toBe(0);
    expect(second.stdout()).toContain('"event":"wait.ended"');
    expect(await team.run(runId)).toMatchObject({ status: 'succeeded', outputs: { timedOut: true } });
  });

  it("a worker's run is cancelled from another process: it stops at a journaled point and ends cancelled", async () => {
    const slow = playbookFile(
      'slow',
      `name: slow
steps:
  - id: each
    forEach: [1, 2, 3, 4, 5, 6, 7, 8]
    as: n
    steps:
      - id: work
        call: privateCloud.listSystems
      - sleep: 1s
`,
    );
    const runId = await queue(team, slow);
    const worker = team.fleetbook(['worker', '--exit-when-idle', '--poll', '50ms']);
    await until(
      async () =>
        (await team.journal(runId)).some((entry) => entry.event.type === 'item.started' && entry.event.index >= 1),
      30_000,
      'the second item to start',
    );
    const cancelled = await team.command(['runs', 'cancel', runId, '--json']);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(JSON.parse(cancelled.stdout.trim())).toEqual({ runId, outcome: 'requested' });
    expect((await worker.exited).code).toBe(0);
    expect(await team.run(runId)).toMatchObject({ status: 'cancelled', error: { code: 'RUN_CANCELLED' } });
    const journal = await team.journal(runId);
    const itemsStarted = journal.filter((entry) => entry.event.type === 'item.started').length;
    expect(itemsStarted).toBeLessThan(8);
    // No item started after the worker saw the cancellation.
    const reads = (await team.requestLog()).filter((entry) => entry.operationId === 'privateCloud.listSystems');
    expect(reads).toHaveLength(itemsStarted);
  });
});
