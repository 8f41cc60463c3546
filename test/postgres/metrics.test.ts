// Metrics across processes in team mode (built CLI, `npm run build` first): a run driven by a
// `fleetbook worker` process shows in the `/metrics` run counts of a `fleetbook server` that
// drove none of it (read from the shared store), and the worker's own `--metrics-port` shows the
// step durations and platform exchanges of that run (per-process figures).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testPostgresUrl } from '../support/postgres-cluster.js';
import { startTeam, until, type FleetbookProcess, type Team } from './team-harness.js';

const adminUrl = testPostgresUrl();
const dir = mkdtempSync(join(tmpdir(), 'fleetbook-team-metrics-'));
const playbooks = join(dir, 'playbooks');

/** The `url` of the JSON log line `event` a process wrote, once it is there. */
async function loggedUrl(process_: FleetbookProcess, event: string): Promise<string> {
  let url: string | undefined;
  await until(
    async () => {
      for (const line of process_.stdout().split('\n')) {
        if (!line.includes(`"${event}"`)) continue;
        url = (JSON.parse(line) as { url?: string }).url;
      }
      return url !== undefined;
    },
    30_000,
    `${event} in the log (stderr: ${process_.stderr()})`,
  );
  return url ?? '';
}

describe.skipIf(!adminUrl)('metrics across processes', () => {
  let team: Team;
  beforeAll(async () => {
    team = await startTeam(adminUrl ?? '');
    mkdirSync(playbooks);
    writeFileSync(
      join(playbooks, 'inventory.yaml'),
      `name: inventory
steps:
  - id: systems
    call: privateCloud.listSystems
  - id: pause
    sleep: 50ms
`,
    );
  }, 60_000);
  afterAll(async () => {
    await team?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("counts a worker's run in the server's /metrics, and times its steps on the worker's", async () => {
    const created = await team.command(['tokens', 'create', '--role', 'viewer', '--name', 'prometheus']);
    expect(created.code, created.stderr).toBe(0);
    const token = /fbk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}/.exec(created.stdout)?.[0] ?? '';
    const server = team.fleetbook(['server', '--port', '0', '--no-worker', '--playbooks', playbooks]);
    const worker = team.fleetbook(['worker', '--metrics-port', '0', '--poll', '50ms']);
    const serverUrl = await loggedUrl(server, 'server.listening');
    const workerMetrics = await loggedUrl(worker, 'metrics.listening');
    expect(workerMetrics).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);

    const queued = await team.command(['run', join(playbooks, 'inventory.yaml'), '--queue', '--json']);
    expect(queued.code, queued.stderr).toBe(0);
    const { runId } = JSON.parse(queued.stdout.trim().split('\n').at(-1) ?? '{}') as { runId: string };
    await until(async () => (await team.run(runId))?.status === 'succeeded', 30_000, 'the run to succeed');

    // The server drove nothing: its counts come from the store (cached 1.5 s, so polled).
    let serverText = '';
    await until(
      async () => {
        const answer = await fetch(`${serverUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } });
        serverText = await answer.text();
        return /^fleetbook_runs\{playbook="inventory",status="succeeded"\} 1$/m.test(serverText);
      },
      10_000,
      'the run counted by the server',
    );
    expect(serverText).toMatch(/^fleetbook_queue_depth 0$/m);
    expect(serverText).not.toMatch(/^fleetbook_step_duration_seconds_count/m);

    // The worker drove it: its step durations and platform exchanges, on its own port, without a token.
    const workerText = await (await fetch(workerMetrics)).text();
    expect(workerText).toMatch(/^fleetbook_step_duration_seconds_count\{kind="call",status="succeeded"\} 1$/m);
    expect(workerText).toMatch(/^fleetbook_step_duration_seconds_count\{kind="sleep",status="succeeded"\} 1$/m);
    expect(workerText).toMatch(/^fleetbook_api_requests_total\{group="[^"]+",status="200"\} \d+$/m);
    // Only the process's own figures: no store counts, no HTTP requests of a server.
    expect(workerText).not.toContain('fleetbook_runs{');
    expect(workerText).not.toContain('fleetbook_http_requests_total');
    expect((await fetch(workerMetrics.replace('/metrics', '/other'))).status).toBe(404);

    worker.child.kill('SIGTERM');
    server.child.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
    expect((await server.exited).code).toBe(0);
  });
});
