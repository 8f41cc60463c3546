/**
 * A run driven against an embedded simulator that had an async operation in flight when its
 * process died cannot be continued against a new embedded simulator (the operation is gone
 * with the old one): `fleetbook resume --target simulator` refuses before anything is sent, and
 * a daemon on `--target simulator` ends such a run failed, saying why, without running a step
 * (so no rescue or webhook of the playbook fires).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PlatformClient } from '../../src/api/index.js';
import { createLogger, createSecretRegistry } from '../../src/logging/index.js';
import { hasErrors, loadPlaybook } from '../../src/playbook/index.js';
import { createFireDriver } from '../../src/admission/index.js';
import { openRunStore, type JournalEvent } from '../../src/store/index.js';
import { captureStream, runCli } from '../support/cli.js';

let dir: string;
let env: NodeJS.ProcessEnv;
let playbookFile: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-simstate-'));
  env = { FLEETBOOK_HOME: join(dir, 'home') };
  playbookFile = join(dir, 'update.yaml');
  writeFileSync(
    playbookFile,
    'name: update\nschedules:\n  - { id: nightly-update, cron: "0 3 * * *", timezone: UTC }\nsteps:\n  - id: update\n    call: privateCloud.runSoftwareUpdate\n    with: { id: sys-1, body: { catalogVersion: "2.4.0" } }\n    wait: true\n    rescue:\n      - id: page\n        http: { method: POST, url: "http://127.0.0.1:9/page" }\n',
  );
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A run whose update was answered 202 with an operation, and whose process then died. */
async function seedCrashedRun(runId: string, events: JournalEvent[]): Promise<void> {
  const store = await openRunStore({ env });
  await store.createRun({
    id: runId,
    playbook: 'update',
    playbookSource: playbookFile,
    playbookHash: 'sha256:x',
    inputs: {},
    secretInputNames: [],
    dryRun: false,
    trigger: { kind: 'manual' },
    startedAt: new Date().toISOString(),
  });
  for (const event of events) await store.append(runId, event);
  await store.close();
}

const inFlightUpdate: JournalEvent[] = [
  { type: 'step.started', path: 'update', stepId: 'update', kind: 'call' },
  {
    type: 'request.sending',
    path: 'update',
    attempt: 1,
    operationId: 'privateCloud.runSoftwareUpdate',
    method: 'POST',
  },
  {
    type: 'request.answered',
    path: 'update',
    attempt: 1,
    httpStatus: 202,
    location: '/data-services/v1beta1/async-operations/op-1',
  },
  {
    type: 'operation.progress',
    path: 'update',
    location: '/data-services/v1beta1/async-operations/op-1',
    progressPercent: 30,
  },
];

describe('resume against a new embedded simulator', () => {
  it('fleetbook resume --target simulator refuses, exit 2, naming the operation; the run is left as it was', async () => {
    await seedCrashedRun('run-sim-1', inFlightUpdate);
    const { code, stdout, stderr } = await runCli(['resume', 'run-sim-1', '--target', 'simulator'], { env });
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(
      'run run-sim-1 cannot be resumed against a new embedded simulator: it had platform work in flight (update (privateCloud.runSoftwareUpdate, /data-services/v1beta1/async-operations/op-1))',
    );
    expect(stderr).toContain("Nothing was sent. Start it again with 'fleetbook run'");
    const store = await openRunStore({ env });
    // As it was: crashed (recorded running, no driver's lease), which readers see as interrupted, with no end.
    const run = await store.getRun('run-sim-1');
    expect([run?.status, run?.endedAt, run?.resumes]).toEqual(['interrupted', undefined, 0]);
    expect(await store.journal('run-sim-1')).toHaveLength(inFlightUpdate.length);
    await store.close();
  });

  it('a run with nothing in flight still resumes against the simulator', async () => {
    await seedCrashedRun('run-sim-2', [
      { type: 'step.started', path: 'update', stepId: 'update', kind: 'call' },
      { type: 'request.sending', path: 'update', attempt: 1, operationId: 'privateCloud.listSystems', method: 'GET' },
    ]);
    const { stderr } = await runCli(['resume', 'run-sim-2', '--target', 'simulator', '--force'], { env });
    expect(stderr).not.toContain('cannot be resumed against a new embedded simulator');
  });

  it('a daemon on its own embedded simulator ends such a run failed, saying why, sending nothing and running no step', async () => {
    await seedCrashedRun('run-sim-3', inFlightUpdate);
    const loaded = loadPlaybook(playbookFile);
    if (!loaded.playbook || hasErrors(loaded.problems)) throw new Error('fixture does not load');
    const store = await openRunStore({ env });
    const sent: string[] = [];
    const client = new Proxy(
      {},
      { get: (_target, name) => (sent.push(String(name)), () => Promise.reject(new Error('no request may be sent'))) },
    ) as PlatformClient;
    const out = captureStream();
    const logger = createLogger({ level: 'info', secrets: createSecretRegistry(), destination: out });
    const execute = createFireDriver({ client, store, logger, embeddedSimulator: true });
    const schedule = loaded.playbook.schedules[0];
    if (!schedule) throw new Error('fixture has no schedule');
    const outcome = await execute({
      playbook: loaded.playbook,
      schedule,
      runId: 'run-sim-3',
      scheduledAt: new Date(),
      catchUp: false,
      signal: new AbortController().signal,
      resume: true,
    });
    expect(outcome.status).toBe('failed');
    expect(sent).toEqual([]);
    const run = await store.getRun('run-sim-3');
    expect(run?.error).toMatchObject({
      code: 'SIMULATOR_STATE_LOST',
      message: expect.stringContaining('was on the embedded simulator of the daemon that ran it') as string,
    });
    // No step ran: the rescue's webhook never started.
    expect((await store.journal('run-sim-3')).map((entry) => entry.event.type)).toEqual(
      inFlightUpdate.map((event) => event.type),
    );
    expect(out.text()).toContain('"event":"schedule.resumeRefused"');
    await store.close();
  });
});
