import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.js';
import { newLeaseOwner, runLeaseKey } from '../../src/store/lease-owner.js';
import Database from 'better-sqlite3';
import { openRunStore, runStoreFileName } from '../../src/store/open-run-store.js';
import type { JournalEvent, NewRun, RunStore } from '../../src/store/types.js';
import { buildStepTree, checkpointJournalView, foldJournal, JOURNAL_PAGE_SIZE } from '../../src/store/index.js';
import { captureStream, runCli, type CliOutcome } from '../support/cli.js';

let home: string;

const fleetbook = (...argv: string[]): Promise<CliOutcome> => runCli(argv, { env: { FLEETBOOK_HOME: home } });

const iso = (daysAgo: number, plusMs = 0) => new Date(Date.now() - daysAgo * 86_400_000 + plusMs).toISOString();

function newRun(id: string, playbook: string, startedAt: string): NewRun {
  return {
    id,
    playbook,
    playbookSource: `playbooks/${playbook}.yaml`,
    playbookHash: 'sha256:abc',
    inputs: { catalogVersion: '2.4.0' },
    secretInputNames: [],
    dryRun: false,
    trigger: { kind: 'manual' },
    startedAt,
  };
}

/** The store's clock while seeding: each run is journaled and ended at its own time. */
let seedNowMs = Date.now();

/** A rolling update that failed on system 1's update, journaled as the engine does; two exports, one old. */
async function seed(store: RunStore): Promise<void> {
  seedNowMs = Date.parse(iso(1));
  const location = '/data-services/v1beta1/async-operations/op-7';
  await store.createRun(newRun('run-rolling-1', 'rolling-cluster-update', iso(1)));
  const events: JournalEvent[] = [
    { type: 'step.started', path: 'catalog', stepId: 'catalog', kind: 'call' },
    {
      type: 'request.sending',
      path: 'catalog',
      attempt: 1,
      operationId: 'privateCloud.listSoftwareCatalogs',
      method: 'GET',
    },
    { type: 'request.answered', path: 'catalog', attempt: 1, httpStatus: 200 },
    { type: 'step.finished', path: 'catalog', status: 'succeeded' },
    { type: 'step.started', path: 'systems', stepId: 'systems', kind: 'forEach' },
    { type: 'item.started', path: 'systems', index: 0 },
    { type: 'step.started', path: 'systems[0].update', stepId: 'update', kind: 'call' },
    {
      type: 'request.sending',
      path: 'systems[0].update',
      attempt: 1,
      operationId: 'privateCloud.runSoftwareUpdate',
      method: 'POST',
    },
    {
      type: 'request.failed',
      path: 'systems[0].update',
      attempt: 1,
      error: { message: 'busy', httpStatus: 503 },
      outcomeUnknown: false,
    },
    {
      type: 'request.sending',
      path: 'systems[0].update',
      attempt: 2,
      operationId: 'privateCloud.runSoftwareUpdate',
      method: 'POST',
    },
    { type: 'request.answered', path: 'systems[0].update', attempt: 2, httpStatus: 202, location },
    { type: 'operation.finished', path: 'systems[0].update', location, outcome: 'FAILED' },
    {
      type: 'step.finished',
      path: 'systems[0].update',
      status: 'failed',
      error: {
        message: 'update failed at step 3',
        code: 'OPERATION_FAILED',
        operationId: 'privateCloud.runSoftwareUpdate',
      },
    },
    { type: 'item.finished', path: 'systems', index: 0, status: 'failed' },
    { type: 'step.finished', path: 'systems', status: 'failed' },
  ];
  for (const event of events) {
    seedNowMs += 1000;
    await store.append('run-rolling-1', event);
  }
  await store.setRunStatus('run-rolling-1', 'failed', { error: { message: '1 system failed' } });

  await store.createRun(newRun('run-export-1', 'nightly-export', iso(3)));
  seedNowMs = Date.parse(iso(3, 90_000));
  await store.setRunStatus('run-export-1', 'succeeded');
  await store.createRun(newRun('run-export-old', 'nightly-export', iso(60)));
  seedNowMs = Date.parse(iso(60, 90_000));
  await store.setRunStatus('run-export-old', 'succeeded');
}

beforeEach(async () => {
  home = mkdtempSync(join(tmpdir(), 'fleetbook-home-'));
  const store = await openRunStore({ home, now: () => new Date(seedNowMs) });
  await seed(store);
  await store.close();
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

describe('fleetbook runs list', () => {
  it('prints recent runs newest first as a table (the default subcommand)', async () => {
    for (const argv of [['runs'], ['runs', 'list']]) {
      const { code, stdout } = await fleetbook(...argv);
      expect(code).toBe(0);
      const lines = stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^RUN\s+PLAYBOOK\s+STATUS\s+STARTED\s+DURATION\s+TRIGGER/);
      expect(lines.slice(1).map((line) => line.split(/\s+/).slice(0, 3))).toEqual([
        ['run-rolling-1', 'rolling-cluster-update', 'failed'],
        ['run-export-1', 'nightly-export', 'succeeded'],
        ['run-export-old', 'nightly-export', 'succeeded'],
      ]);
    }
  });

  it('filters by playbook, status and since, and prints JSON lines with --json', async () => {
    const { code, stdout } = await fleetbook(
      'runs',
      'list',
      '--playbook',
      'nightly-export',
      '--status',
      'succeeded',
      '--since',
      '7d',
      '--json',
    );
    expect(code).toBe(0);
    const runs = stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: string; status: string; durationMs: number });
    expect(runs.map((run) => run.id)).toEqual(['run-export-1']);
    expect(runs[0]).toMatchObject({
      status: 'succeeded',
      playbook: 'nightly-export',
      inputs: { catalogVersion: '2.4.0' },
    });
    expect(typeof runs[0]?.durationMs).toBe('number');
    expect(
      (await fleetbook('runs', 'list', '--since', '2020-01-01', '--json')).stdout.trimEnd().split('\n'),
    ).toHaveLength(3);
  });

  it('rejects a bad filter with exit code 2 and says what it expects', async () => {
    const since = await fleetbook('runs', 'list', '--since', 'last week');
    expect(since.code).toBe(2);
    expect(since.stderr).toContain('--since must be a duration like 7d');
    const status = await fleetbook('runs', 'list', '--status', 'faild');
    expect(status.code).toBe(2);
    expect(status.stderr).toContain("Did you mean 'failed'?");
  });
});

describe('a run whose process died', () => {
  /** Two runs the store says are running: one with a live driver (its lease held by this process), one whose lease lapsed. */
  async function seedRunning(): Promise<void> {
    const store = await openRunStore({ home });
    await store.createRun(newRun('run-live', 'rolling-cluster-update', iso(0, -2000)));
    await store.createRun(newRun('run-killed', 'rolling-cluster-update', iso(0, -1000)));
    expect(await store.acquireLease(runLeaseKey('run-live'), newLeaseOwner(), 60_000)).toBe(true);
    await store.close();
  }

  it('shows as crashed with the resume command; --status crashed finds it and --status running does not', async () => {
    await seedRunning();
    const listed = await fleetbook('runs', 'list');
    expect(listed.code).toBe(0);
    const rows = listed.stdout.split('\n').map((line) => line.split(/\s+/).slice(0, 3));
    expect(rows).toContainEqual(['run-killed', 'rolling-cluster-update', 'crashed']);
    expect(rows).toContainEqual(['run-live', 'rolling-cluster-update', 'running']);
    expect(listed.stdout).toContain(
      'Run run-killed crashed (no process drives it any more): fleetbook resume run-killed',
    );

    const ids = async (...argv: string[]) =>
      (await fleetbook('runs', 'list', '--json', ...argv)).stdout
        .trimEnd()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { id: string; status: string });
    expect(await ids('--status', 'crashed')).toMatchObject([{ id: 'run-killed', status: 'crashed' }]);
    expect(await ids('--status', 'running')).toMatchObject([{ id: 'run-live', status: 'running' }]);

    const shown = await fleetbook('runs', 'show', 'run-killed');
    expect(shown.stdout).toMatch(/^Run run-killed {2}rolling-cluster-update {2}crashed\n/);
    expect(shown.stdout).toContain('continue it with: fleetbook resume run-killed');
  });

  it('held by a process that is verifiably gone is crashed too, before its lease lapses', async () => {
    const store = await openRunStore({ home });
    await store.createRun(newRun('run-sigkilled', 'rolling-cluster-update', iso(0)));
    const child = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => child.on('exit', resolve));
    const owner = { ...(JSON.parse(newLeaseOwner()) as Record<string, unknown>), pid: child.pid };
    expect(await store.acquireLease(runLeaseKey('run-sigkilled'), JSON.stringify(owner), 60_000)).toBe(true);
    await store.close();
    const { stdout } = await fleetbook('runs', 'list', '--status', 'crashed', '--json');
    expect((JSON.parse(stdout) as { id: string }).id).toBe('run-sigkilled');
  });
});

describe('fleetbook runs show', () => {
  it('prints the step tree with status, attempts, durations, the async operation and errors', async () => {
    const { code, stdout } = await fleetbook('runs', 'show', 'run-rolling-1');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Run run-rolling-1 {2}rolling-cluster-update {2}failed\n/);
    expect(stdout).toContain('error: 1 system failed');
    const lines = stdout.split('\n');
    const row = (label: string) => lines.find((line) => line.startsWith(label))?.split(/\s{2,}/);
    expect(row('STEP')).toEqual(['STEP', 'STATUS', 'ATTEMPTS', 'DURATION', 'OPERATION']);
    expect(row('catalog')?.slice(0, 3)).toEqual(['catalog', 'succeeded', '1']);
    expect(row('systems')?.slice(0, 2)).toEqual(['systems', 'failed']);
    expect(row('  [0]')?.slice(0, 2)).toEqual(['', '[0]']);
    const update = row('    update');
    expect(update?.slice(1, 4)).toEqual(['update', 'failed', '2']);
    expect(update?.at(-1)).toBe('op-7 (FAILED)');
    const errorLine = lines[lines.findIndex((line) => line.startsWith('    update')) + 1];
    expect(errorLine).toBe('      ! update failed at step 3 (OPERATION_FAILED, privateCloud.runSoftwareUpdate)');
  });

  it('prints the run and its nested steps as JSON with --json', async () => {
    const { code, stdout } = await fleetbook('runs', 'show', 'run-rolling-1', '--json');
    expect(code).toBe(0);
    const shown = JSON.parse(stdout) as {
      run: { id: string; status: string };
      steps: Array<{ path: string; children: Array<{ path: string; children: Array<Record<string, unknown>> }> }>;
    };
    expect(shown.run).toMatchObject({ id: 'run-rolling-1', status: 'failed' });
    expect(shown.steps.map((step) => step.path)).toEqual(['catalog', 'systems']);
    const update = shown.steps[1]?.children[0]?.children[0];
    expect(update).toMatchObject({
      path: 'systems[0].update',
      label: 'update',
      status: 'failed',
      attempts: 2,
      location: '/data-services/v1beta1/async-operations/op-7',
      asyncOperationId: 'op-7',
      operationOutcome: 'FAILED',
      error: { code: 'OPERATION_FAILED' },
    });
    expect(typeof update?.durationMs).toBe('number');
  });

  it('an unknown run id is exit 2 with the closest recent ids', async () => {
    const { code, stdout, stderr } = await fleetbook('runs', 'show', 'run-rolling-2');
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain("no run 'run-rolling-2'");
    expect(stderr).toContain("Did you mean 'run-rolling-1'?");
  });

  it('takes a prefix naming one run, as resume does; one naming several is exit 2 listing them', async () => {
    const shown = await fleetbook('runs', 'show', 'run-roll');
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^Run run-rolling-1 /);
    const resumed = await fleetbook('resume', 'run-export-o');
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain('run run-export-old already succeeded; there is nothing to resume');
    for (const command of [['runs', 'show'], ['resume']]) {
      const ambiguous = await fleetbook(...command, 'run-export');
      expect(ambiguous.code).toBe(2);
      expect(ambiguous.stderr).toContain(
        "'run-export' names more than one run (run-export-1, run-export-old): give more of the id",
      );
    }
  });

  it('a missing run id is a usage error, exit 2', async () => {
    const { code, stderr } = await fleetbook('runs', 'show');
    expect(code).toBe(2);
    expect(stderr).toContain("missing required argument 'runId'");
  });
});

/** A finished rolling update with a per-system outputs table and two `log:` lines, journaled as the engine does. */
async function seedWithOutputs(): Promise<void> {
  seedNowMs = Date.parse(iso(0, -60_000));
  const store = await openRunStore({ home, now: () => new Date(seedNowMs) });
  await store.createRun(newRun('run-outputs', 'rolling-cluster-update', iso(0, -60_000)));
  const events: JournalEvent[] = [
    { type: 'step.started', path: 'hello', stepId: 'hello', kind: 'log' },
    { type: 'step.finished', path: 'hello', status: 'succeeded', outputs: { message: 'updating 2 systems to 2.4.0' } },
    { type: 'step.started', path: 'systems', stepId: 'systems', kind: 'forEach' },
    { type: 'item.started', path: 'systems', index: 0 },
    { type: 'step.started', path: 'systems[0].update', stepId: 'update', kind: 'call' },
    {
      type: 'request.sending',
      path: 'systems[0].update',
      attempt: 1,
      operationId: 'privateCloud.runSoftwareUpdate',
      method: 'POST',
    },
    { type: 'request.answered', path: 'systems[0].update', attempt: 1, httpStatus: 202, location: '/ops/op-1' },
    {
      type: 'operation.progress',
      path: 'systems[0].update',
      location: '/ops/op-1',
      progressPercent: 40,
      state: 'RUNNING',
    },
    { type: 'operation.finished', path: 'systems[0].update', location: '/ops/op-1', outcome: 'SUCCEEDED' },
    { type: 'step.finished', path: 'systems[0].update', status: 'succeeded' },
    { type: 'step.started', path: 'systems[0].note', stepId: 'note', kind: 'log' },
    { type: 'step.finished', path: 'systems[0].note', status: 'succeeded', outputs: { message: 'sys-1 now on 2.4.0' } },
    { type: 'item.finished', path: 'systems', index: 0, status: 'succeeded' },
    { type: 'step.finished', path: 'systems', status: 'succeeded' },
  ];
  for (const event of events) {
    seedNowMs += 1000;
    await store.append('run-outputs', event);
  }
  const outputs = {
    catalogVersion: '2.4.0',
    clusters: [
      { cluster: 'c-1', system: 'sys-1', result: 'updated' },
      { cluster: 'c-2', system: 'sys-22', result: 'not started' },
    ],
  };
  await store.setRunStatus('run-outputs', 'succeeded', { outputs });
  await store.close();
}

describe('fleetbook runs show: what the run produced', () => {
  it('shows the outputs, a list of records as a table, and the log: lines', async () => {
    await seedWithOutputs();
    const { code, stdout } = await fleetbook('runs', 'show', 'run-outputs');
    expect(code).toBe(0);
    expect(stdout).toContain(
      'outputs:\n  catalogVersion: 2.4.0\n  clusters:\n    CLUSTER  SYSTEM  RESULT\n    c-1      sys-1   updated\n    c-2      sys-22  not started\n',
    );
    expect(stdout).toMatch(
      /log:\n {2}\d\d:\d\d:\d\d {2}hello {2}updating 2 systems to 2\.4\.0\n {2}\d\d:\d\d:\d\d {2}systems\[0\]\.note {2}sys-1 now on 2\.4\.0\n/,
    );
    const json = JSON.parse((await fleetbook('runs', 'show', 'run-outputs', '-o', 'json')).stdout) as {
      run: { outputs: unknown };
      log: Array<{ path: string; message: string }>;
    };
    expect(json.run.outputs).toMatchObject({ catalogVersion: '2.4.0' });
    expect(json.log.map((line) => line.message)).toEqual(['updating 2 systems to 2.4.0', 'sys-1 now on 2.4.0']);
  });
});

describe('fleetbook runs show: a journal longer than a page', () => {
  it('reads it in pages: -o json is the document made from the whole journal, the text view prints every step and log line', async () => {
    // 1,200 items of a loop, 6 entries each, and a `log:` line at the end: 7,204 entries, four pages.
    const store = await openRunStore({ home });
    await store.createRun(newRun('run-paged', 'rolling-cluster-update', iso(0, -60_000)));
    const events: JournalEvent[] = [{ type: 'step.started', path: 'systems', stepId: 'systems', kind: 'forEach' }];
    for (let index = 0; index < 1200; index += 1) {
      const path = `systems[${index}].report`;
      events.push(
        { type: 'item.started', path: 'systems', index },
        { type: 'step.started', path, stepId: 'report', kind: 'set', input: { system: `sys-${index}` } },
        {
          type: 'step.finished',
          path,
          status: 'succeeded',
          outputs: { row: { system: `sys-${index}`, after: '2.4.0' } },
        },
        { type: 'item.finished', path: 'systems', index, status: 'succeeded' },
      );
    }
    events.push(
      { type: 'step.finished', path: 'systems', status: 'succeeded', outputs: { succeeded: 1200, failed: 0 } },
      { type: 'step.started', path: 'done', stepId: 'done', kind: 'log' },
      { type: 'step.finished', path: 'done', status: 'succeeded', outputs: { message: 'updated 1200 systems' } },
    );
    for (const event of events) await store.append('run-paged', event, { buffered: true });
    await store.setRunStatus('run-paged', 'succeeded', { outputs: {} });
    const journal = await store.journal('run-paged');
    expect(journal.length).toBeGreaterThan(2 * JOURNAL_PAGE_SIZE);
    const whole = buildStepTree(foldJournal(journal));
    await store.close();

    const json = await fleetbook('runs', 'show', 'run-paged', '-o', 'json');
    expect(json.code).toBe(0);
    const shown = JSON.parse(json.stdout) as { steps: unknown; log: Array<{ path: string; message: string }> };
    expect(shown.steps).toEqual(JSON.parse(JSON.stringify(whole)));
    expect(shown.log).toEqual([{ at: journal.at(-1)?.at, path: 'done', message: 'updated 1200 systems' }]);

    const text = await fleetbook('runs', 'show', 'run-paged');
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('  [1199]');
    expect(text.stdout).toMatch(/log:\n {2}\d\d:\d\d:\d\d {2}done {2}updated 1200 systems\n/);
  });
});

describe('fleetbook runs show: a loop of many items', () => {
  /**
   * A fleet's rolling update cut short: 50 systems, each item an `update` call; systems 10 and 30
   * failed (30 with its error), 47 was still running when the run stopped, the rest succeeded.
   */
  async function seedFleet(at = home, now?: () => Date): Promise<void> {
    const store = await openRunStore({ home: at, ...(now ? { now } : {}) });
    await store.createRun(
      newRun('run-fleet', 'rolling-cluster-update', (now?.() ?? new Date(Date.now() - 60_000)).toISOString()),
    );
    const failed = new Set([10, 30]);
    const events: JournalEvent[] = [{ type: 'step.started', path: 'systems', stepId: 'systems', kind: 'forEach' }];
    for (let index = 0; index < 50; index += 1) {
      const path = `systems[${index}].update`;
      events.push(
        { type: 'item.started', path: 'systems', index },
        { type: 'step.started', path, stepId: 'update', kind: 'call' },
        { type: 'request.sending', path, attempt: 1, operationId: 'privateCloud.runSoftwareUpdate', method: 'POST' },
        { type: 'request.answered', path, attempt: 1, httpStatus: 202, location: `/ops/op-${index}` },
      );
      if (index === 47) continue;
      const status = failed.has(index) ? 'failed' : 'succeeded';
      events.push(
        {
          type: 'step.finished',
          path,
          status,
          ...(failed.has(index)
            ? { error: { message: `system ${index} refused the update`, code: 'OPERATION_FAILED' } }
            : {}),
        },
        { type: 'item.finished', path: 'systems', index, status },
      );
    }
    for (const event of events) await store.append('run-fleet', event, { buffered: true });
    await store.setRunStatus('run-fleet', 'interrupted');
    await store.close();
  }

  it('summarises it: counts by status, the first and last items and every failed or running one with its steps, the rest as counts', async () => {
    await seedFleet();
    const { code, stdout } = await fleetbook('runs', 'show', 'run-fleet');
    expect(code).toBe(0);
    const tree = stdout.slice(stdout.indexOf('STEP '));
    const lines = tree.trimEnd().split('\n');
    const labels = lines.slice(1).map((line) => line.split(/\s{2,}/).filter(Boolean)[0]);
    expect(labels).toEqual([
      'systems',
      expect.stringMatching(/^50 items: 47 succeeded, 2 failed, 1 running; listed: the first and last 3/),
      '[0]',
      'update',
      '[1]',
      'update',
      '[2]',
      'update',
      '… 7 more: 7 succeeded',
      '[10]',
      'update',
      '! system 10 refused the update (OPERATION_FAILED)',
      '… 19 more: 19 succeeded',
      '[30]',
      'update',
      '! system 30 refused the update (OPERATION_FAILED)',
      '… 16 more: 16 succeeded',
      '[47]',
      'update',
      '[48]',
      'update',
      '[49]',
      'update',
    ]);
    expect(lines[2]).toContain('all: fleetbook runs show run-fleet --items, or -o json');
    const row = (label: string) => lines.find((line) => line.trimStart().startsWith(label))?.split(/\s{2,}/);
    expect(row('[30]')?.slice(1, 3)).toEqual(['[30]', 'failed']);
    expect(row('[47]')?.slice(1, 3)).toEqual(['[47]', 'running']);
    expect(lines[lines.findIndex((line) => line.trimStart().startsWith('[47]')) + 1]).toMatch(
      /^ {4}update +running +1 +op-47$/,
    );
  });

  it('--items prints every item; -o json has every item whatever the text view folds', async () => {
    await seedFleet();
    const all = await fleetbook('runs', 'show', 'run-fleet', '--items');
    expect(all.code).toBe(0);
    const items = all.stdout.split('\n').filter((line) => /^ {2}\[\d+\] /.test(line));
    expect(items.map((line) => line.trim().split(/\s+/)[0])).toEqual(
      Array.from({ length: 50 }, (_, index) => `[${index}]`),
    );
    expect(all.stdout).not.toContain('items:');
    const json = JSON.parse((await fleetbook('runs', 'show', 'run-fleet', '-o', 'json')).stdout) as {
      steps: Array<{ children: unknown[] }>;
    };
    expect(json.steps[0]?.children).toHaveLength(50);
  });

  it('a finished run shows from the view the store kept, then folds only the entries journaled after it (a resume)', async () => {
    // The same run in two stores: one keeps its view when the run stops (as the engine does for a
    // fleet's journal), the other has only the journal.
    const scratchHome = mkdtempSync(join(tmpdir(), 'fleetbook-home-'));
    // One clock for both stores, moving a second at each read, so both journals have the same times.
    const startMs = Date.parse(iso(0, -60_000));
    const clock = (fromMs = startMs) => {
      let ms = fromMs;
      return () => new Date((ms += 1000));
    };
    try {
      await seedFleet(home, clock());
      await seedFleet(scratchHome, clock());
      const kept = await openRunStore({ home });
      const throughSeq = await checkpointJournalView(kept, 'run-fleet', 1);
      expect(throughSeq).toBe((await kept.journal('run-fleet')).length);
      await kept.close();
      // Resumed after the view was kept: system 47's update ends, and a log line is written.
      const resumed: JournalEvent[] = [
        { type: 'step.finished', path: 'systems[47].update', status: 'succeeded' },
        { type: 'item.finished', path: 'systems', index: 47, status: 'succeeded' },
        { type: 'step.finished', path: 'systems', status: 'failed' },
        { type: 'step.started', path: 'done', stepId: 'done', kind: 'log' },
        { type: 'step.finished', path: 'done', status: 'succeeded', outputs: { message: 'fleet updated' } },
      ];
      for (const at of [home, scratchHome]) {
        const store = await openRunStore({ home: at, now: clock(startMs + 30_000) });
        await store.markResumed('run-fleet');
        for (const event of resumed) await store.append('run-fleet', event);
        await store.setRunStatus('run-fleet', 'failed', { error: { message: '2 systems failed' } });
        await store.close();
      }
      const show = async (at: string, ...options: string[]) => {
        const shown = await runCli(['runs', 'show', 'run-fleet', ...options], { env: { FLEETBOOK_HOME: at } });
        expect(shown.code).toBe(0);
        return shown.stdout;
      };
      const text = await show(home);
      expect(text).toEqual(await show(scratchHome));
      expect(text).toContain('48 succeeded, 2 failed');
      expect(text).toMatch(/log:\n {2}\d\d:\d\d:\d\d {2}done {2}fleet updated\n/);
      expect(await show(home, '--items')).toEqual(await show(scratchHome, '--items'));
      // -o json reads the whole journal, values and all, as before.
      expect(await show(home, '-o', 'json')).toEqual(await show(scratchHome, '-o', 'json'));
      // What the view covers is read from it, not from the journal: without those entries the text is the same.
      const file = new Database(join(home, runStoreFileName));
      file.prepare('DELETE FROM journal WHERE run_id = ? AND seq <= ?').run('run-fleet', throughSeq);
      file.close();
      expect(await show(home)).toEqual(text);
    } finally {
      rmSync(scratchHome, { recursive: true, force: true });
    }
  });

  it('prints a loop of 20 items whole', async () => {
    const store = await openRunStore({ home });
    await store.createRun(newRun('run-twenty', 'rolling-cluster-update', iso(0, -60_000)));
    await store.append('run-twenty', { type: 'step.started', path: 'systems', stepId: 'systems', kind: 'forEach' });
    for (let index = 0; index < 20; index += 1)
      await store.append('run-twenty', { type: 'item.finished', path: 'systems', index, status: 'succeeded' });
    await store.close();
    const { stdout } = await fleetbook('runs', 'show', 'run-twenty');
    expect(stdout.split('\n').filter((line) => /^ {2}\[\d+\] /.test(line))).toHaveLength(20);
    expect(stdout).not.toContain('items:');
  });
});

describe('fleetbook runs logs', () => {
  it("prints a finished run's log from its journal, and only one step's with --step", async () => {
    await seedWithOutputs();
    const all = await fleetbook('runs', 'logs', 'run-outp');
    expect(all.code).toBe(0);
    const lines = all.stdout
      .trimEnd()
      .split('\n')
      .map((line) => line.replace(/^\d\d:\d\d:\d\d {2}/, ''));
    expect(lines).toEqual([
      'hello  log: updating 2 systems to 2.4.0',
      'systems  started (forEach)',
      'systems  item 0 started',
      'systems[0].update  started (call)',
      'systems[0].update  POST privateCloud.runSoftwareUpdate',
      'systems[0].update  answered HTTP 202, operation /ops/op-1',
      'systems[0].update  operation 40% RUNNING',
      'systems[0].update  operation ended SUCCEEDED',
      'systems[0].update  succeeded',
      'systems[0].note  log: sys-1 now on 2.4.0',
      'systems  item 0 succeeded',
      'systems  succeeded',
    ]);
    const step = await fleetbook('runs', 'logs', 'run-outputs', '--step', 'systems[0].note');
    expect(
      step.stdout
        .trimEnd()
        .split('\n')
        .map((line) => line.slice(10)),
    ).toEqual(['systems[0].note  log: sys-1 now on 2.4.0']);
    const json = await fleetbook('runs', 'logs', 'run-outputs', '--step', 'hello', '-o', 'json');
    expect(
      json.stdout
        .trimEnd()
        .split('\n')
        .map((line) => (JSON.parse(line) as { event: { type: string } }).event.type),
    ).toEqual(['step.started', 'step.finished']);
  });

  it('--follow prints new lines as the run journals them and stops when it ends', async () => {
    const store = await openRunStore({ home });
    await store.createRun(newRun('run-follow', 'nightly-export', iso(0)));
    expect(await store.acquireLease(runLeaseKey('run-follow'), newLeaseOwner(), 60_000)).toBe(true);
    await store.append('run-follow', { type: 'step.started', path: 'say', stepId: 'say', kind: 'log' });
    await store.append('run-follow', {
      type: 'step.finished',
      path: 'say',
      status: 'succeeded',
      outputs: { message: 'first' },
    });
    const stdout = captureStream();
    const following = main(['runs', 'logs', 'run-follow', '--follow'], {
      stdout,
      stderr: captureStream(),
      env: { FLEETBOOK_HOME: home },
      version: '0',
    });
    // Journaled only once the follower has printed what was there: it must wait for more.
    await vi.waitFor(() => expect(stdout.text()).toContain('say  log: first'), { timeout: 10_000 });
    await store.append('run-follow', { type: 'step.started', path: 'again', stepId: 'again', kind: 'log' });
    await store.append('run-follow', {
      type: 'step.finished',
      path: 'again',
      status: 'succeeded',
      outputs: { message: 'second' },
    });
    await store.setRunStatus('run-follow', 'succeeded');
    await store.close();
    expect(await following).toBe(0);
    expect(
      stdout
        .text()
        .split('\n')
        .map((line) => line.replace(/^\d\d:\d\d:\d\d {2}/, ''))
        .filter(Boolean),
    ).toEqual(['say  log: first', 'again  log: second', 'Run run-follow succeeded.']);
  });

  it('an unknown step path lists nothing; an unknown run is exit 2', async () => {
    const unknown = await fleetbook('runs', 'logs', 'run-nope');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("no run 'run-nope'");
  });
});

describe('a running run whose driver went quiet', () => {
  it('says running (no heartbeat for Ns) while its lease has not lapsed', async () => {
    const quietSince = Date.now() - 40_000;
    const store = await openRunStore({ home, now: () => new Date(quietSince) });
    await store.createRun(newRun('run-quiet', 'rolling-cluster-update', new Date(quietSince).toISOString()));
    expect(await store.acquireLease(runLeaseKey('run-quiet'), newLeaseOwner(), 60_000)).toBe(true);
    await store.close();
    const listed = await fleetbook('runs', 'list');
    const row = listed.stdout.split('\n').find((line) => line.startsWith('run-quiet'));
    expect(row).toMatch(/^run-quiet {2,}rolling-cluster-update {2,}running \(no heartbeat for 4\ds\) /);
    const shown = await fleetbook('runs', 'show', 'run-quiet');
    expect(shown.stdout).toMatch(/^Run run-quiet {2}rolling-cluster-update {2}running \(no heartbeat for 4\ds\)\n/);
    const json = JSON.parse((await fleetbook('runs', 'list', '--status', 'running', '-o', 'json')).stdout) as {
      status: string;
      lastHeartbeatAt: string;
    };
    expect(json.status).toBe('running');
    expect(Date.parse(json.lastHeartbeatAt)).toBeCloseTo(quietSince, -3);
  });
});

describe('fleetbook runs prune', () => {
  it('deletes runs that ended before the cutoff and keeps the rest', async () => {
    // Large step outputs and a rehearsal's saved world live beside the store: they go with their run.
    mkdirSync(join(home, 'worlds'), { recursive: true });
    for (const id of ['run-export-old', 'run-rolling-1']) {
      mkdirSync(join(home, 'outputs', id), { recursive: true });
      writeFileSync(join(home, 'outputs', id, 'systems.json'), '[]');
      writeFileSync(join(home, 'worlds', `${id}.json`), '{}');
    }
    writeFileSync(join(home, 'worlds', 'run-export-old.in-use.json'), '{}');
    const { code, stdout } = await fleetbook('runs', 'prune', '--older-than', '30d');
    expect(code).toBe(0);
    expect(existsSync(join(home, 'outputs', 'run-export-old'))).toBe(false);
    expect(existsSync(join(home, 'outputs', 'run-rolling-1', 'systems.json'))).toBe(true);
    expect(readdirSync(join(home, 'worlds'))).toEqual(['run-rolling-1.json']);
    expect(stdout).toMatch(/^Pruned 1 run that ended before \d{4}-\d{2}-\d{2} /);
    const left = await fleetbook('runs', 'list', '--json');
    expect(
      left.stdout
        .trimEnd()
        .split('\n')
        .map((line) => (JSON.parse(line) as { id: string }).id),
    ).toEqual(['run-rolling-1', 'run-export-1']);
  });

  it('takes the retention from FLEETBOOK_RETENTION, and asks for one when there is none', async () => {
    const pruned = await runCli(['runs', 'prune', '--json'], {
      env: { FLEETBOOK_HOME: home, FLEETBOOK_RETENTION: '2d' },
    });
    expect(pruned.code).toBe(0);
    expect(JSON.parse(pruned.stdout)).toMatchObject({ pruned: 2 });
    const missing = await fleetbook('runs', 'prune');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--older-than 30d');
  });
});
