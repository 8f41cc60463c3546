/**
 * Door × policy: notifications, through `fleetbook server` as a process (its own process host,
 * its fleetbook.yaml). A run started through the API notifies as one started by `fleetbook run`
 * does: its `notify:` rule's message reaches the webhook, once per key; a failed run's too. So
 * does a run of `fleetbook schedules trigger` (a process of its own, in the same folder), and a
 * run started again (`POST /runs/{id}/rerun`, `fleetbook rerun`).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpReceiver, type HttpReceiver } from '../notifications/receivers.js';
import { jsonLines, runCli } from '../support/cli.js';
import { spawnCli, type SpawnedCli } from '../support/spawn-cli.js';

/** The nightly schedule's secret input (in its playbook, so not in the suite's scan list). */
const SCHEDULE_SECRET = 'exp-5ecret-schedule-6612';

let dir: string;
let receiver: HttpReceiver;
let server: SpawnedCli;
let url: string;
let token: string;
/** The failed run of the API's test, run again by `fleetbook rerun`. */
let brokenRun: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-server-notify-'));
  receiver = await startHttpReceiver(() => 200);
  writeFileSync(
    join(dir, 'fleetbook.yaml'),
    `notifications:\n  channels:\n    audit:\n      type: webhook\n      url: ${receiver.url}\n      on: [succeeded, failed]\n`,
  );
  const playbooks = join(dir, 'playbooks');
  mkdirSync(playbooks);
  writeFileSync(join(playbooks, 'ok.yaml'), 'name: ok\nsteps:\n  - log: all good\n');
  writeFileSync(join(playbooks, 'broken.yaml'), 'name: broken\nsteps:\n  - id: stop\n    fail: "it broke"\n');
  writeFileSync(
    join(playbooks, 'nightly.yaml'),
    `name: nightly\ninputs:\n  token: { type: string, secret: true }\nschedules:\n  - id: nightly-export\n    cron: "0 2 * * *"\n    inputs: { token: ${SCHEDULE_SECRET} }\nsteps:\n  - log: "exported with \${{ inputs.token }}"\n`,
  );
  const home = join(dir, 'home');
  const created = await runCli(['tokens', 'create', '--role', 'operator', '--name', 'pipeline', '-o', 'json'], {
    env: { FLEETBOOK_HOME: home },
  });
  token = String(jsonLines(created.stdout)[0]?.token);
  server = spawnCli(
    ['server', '--port', '0', '--target', 'simulator', '--playbooks', playbooks],
    { FLEETBOOK_HOME: home },
    dir,
  );
  await server.waitFor('"event":"server.listening"');
  url = /"url":"(http:\/\/[^"]+)"/.exec(server.stdout())?.[1] ?? '';
});
afterAll(async () => {
  if (server.child.exitCode === null) await server.signal('SIGTERM');
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

async function post(path: string, body?: unknown): Promise<string> {
  const answer = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(answer.status).toBe(202);
  return ((await answer.json()) as { run: { id: string } }).run.id;
}

const start = (playbook: string) => post('/api/v1/runs', { playbook });

describe('runs started through the server notify', () => {
  it("api.start, api.trigger, api.rerun: a run's end reaches the webhook once, succeeded or failed", async () => {
    const ok = await start('ok');
    const broken = await start('broken');
    brokenRun = broken;
    const triggered = await post('/api/v1/schedules/nightly-export/trigger');
    const rerun = await post(`/api/v1/runs/${broken}/rerun`, {});
    await receiver.arrived(4);
    expect(await server.signal('SIGTERM')).toBe(0);
    const byRun = (runId: string) => receiver.arrivals.filter((arrival) => arrival.body.runId === runId);
    expect(byRun(ok)).toEqual([expect.objectContaining({ body: expect.objectContaining({ status: 'succeeded' }) })]);
    expect(byRun(broken)).toEqual([expect.objectContaining({ body: expect.objectContaining({ status: 'failed' }) })]);
    expect(byRun(triggered)).toEqual([
      expect.objectContaining({ body: expect.objectContaining({ status: 'succeeded' }) }),
    ]);
    expect(byRun(rerun)).toEqual([expect.objectContaining({ body: expect.objectContaining({ status: 'failed' }) })]);
    expect(receiver.deliveredKeys()).toHaveLength(4);
    expect(receiver.arrivals).toHaveLength(4);
  });

  it("cli.trigger: `schedules trigger` notifies the run's end once, the schedule's secret input redacted in its output", async () => {
    const before = receiver.arrivals.length;
    // `main` in this folder (its fleetbook.yaml, read from the working directory, as a user runs it).
    const cwd = process.cwd();
    process.chdir(dir);
    const args = [
      'schedules',
      'trigger',
      'nightly-export',
      '--playbooks',
      join(dir, 'playbooks'),
      '--target',
      'simulator',
    ];
    const cli = await runCli([...args, '--json'], { env: { FLEETBOOK_HOME: join(dir, 'home') } }).finally(() =>
      process.chdir(cwd),
    );
    expect(cli.code, cli.stderr).toBe(0);
    const lines = jsonLines(cli.stdout);
    // The result, then the notification's delivery (sent once the result is out).
    const runId = String((lines.find((line) => line.result)?.result as { runId: string }).runId);
    expect(lines.some((line) => line.msg === 'exported with [REDACTED]')).toBe(true);
    expect(cli.stdout).not.toContain(SCHEDULE_SECRET);
    await receiver.arrived(before + 1);
    const arrivals = receiver.arrivals.filter((arrival) => arrival.body.runId === runId);
    expect(arrivals).toEqual([expect.objectContaining({ body: expect.objectContaining({ status: 'succeeded' }) })]);
    expect(receiver.deliveredPerKey()[arrivals[0]?.key ?? '']).toBe(1);
  });

  it("cli.rerun: `rerun` of a failed run notifies the new run's end once", async () => {
    const before = receiver.arrivals.length;
    const cwd = process.cwd();
    process.chdir(dir);
    const cli = await runCli(['rerun', brokenRun, '--target', 'simulator', '--json'], {
      env: { FLEETBOOK_HOME: join(dir, 'home') },
    }).finally(() => process.chdir(cwd));
    expect(cli.code, cli.stderr).toBe(1);
    const runId = String((jsonLines(cli.stdout).find((line) => line.result)?.result as { runId: string }).runId);
    await receiver.arrived(before + 1);
    const arrivals = receiver.arrivals.filter((arrival) => arrival.body.runId === runId);
    expect(arrivals).toEqual([expect.objectContaining({ body: expect.objectContaining({ status: 'failed' }) })]);
    expect(receiver.deliveredPerKey()[arrivals[0]?.key ?? '']).toBe(1);
  });
});
