import { spawnCli } from '../support/spawn-cli.js';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openRunStore } from '../../src/store/index.js';
import { createBench, fixture, type Bench } from './harness.js';

let bench: Bench | undefined;
afterEach(async () => {
  await bench?.close();
  bench = undefined;
});

const playbook = fixture('one-system-update.yaml');

describe('fleetbook resume', () => {
  it('attaches to the update whose answer was lost instead of posting it again (one POST in the request log)', async () => {
    bench = await createBench();
    // The run reconciles a lost answer at once; the system read failing too (every attempt of the
    // client) leaves the outcome unknown, so the run fails and the resume has to reconcile.
    bench.sim.control.faults.set({
      rules: [
        { route: 'privateCloud.runSoftwareUpdate', afterAccept: true, count: 1 },
        { route: 'privateCloud.getSystem', status: 503, count: 5 },
      ],
    });
    const first = await bench.cli(['run', playbook]);
    expect(first.code).toBe(1);
    expect(first.result?.steps.find((step) => step.path === 'update')).toMatchObject({ status: 'failed' });
    const runId = first.result!.runId;
    const failed = (await bench.journal(runId)).filter(
      (entry) => entry.event.type === 'request.failed' && entry.event.path === 'update',
    );
    expect(failed).toMatchObject([{ event: { outcomeUnknown: true } }]);
    expect(bench.posts('privateCloud.runSoftwareUpdate')).toHaveLength(1);

    const resumed = await bench.cli(['resume', runId]);
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect(resumed.result).toMatchObject({
      status: 'succeeded',
      outputs: { updateState: 'UPDATE_COMPLETE', lastOperation: 'software-update SUCCEEDED' },
    });
    expect(resumed.lines.find((line) => line.decision !== undefined)).toMatchObject({
      decision: 'attach',
      operationId: 'privateCloud.runSoftwareUpdate',
    });
    expect(bench.posts('privateCloud.runSoftwareUpdate')).toHaveLength(1);
    expect(bench.posts('privateCloud.runSoftwarePrechecks')).toHaveLength(1);
    // The succeeded steps came from the journal: the catalogs were read once.
    expect(bench.sim.control.requests({ operationId: 'privateCloud.listSoftwareCatalogs' })).toHaveLength(1);
    expect(resumed.result?.steps.filter((step) => step.replayed).map((step) => step.path)).toEqual([
      'catalog',
      'online',
      'target',
      'precheck',
    ]);
    const store = await openRunStore({ home: bench.home });
    expect(await store.getRun(runId)).toMatchObject({ status: 'succeeded', resumes: 1 });
    await store.close();
  });

  it('redrives a failed run: the failed step runs again, the succeeded ones do not', async () => {
    bench = await createBench();
    bench.sim.control.faults.set({ asyncOperations: [{ type: 'software-update', outcome: 'FAILED', count: 1 }] });
    const first = await bench.cli(['run', playbook]);
    expect(first.code).toBe(1);
    expect(first.result?.error).toMatchObject({ code: 'OPERATION_FAILED' });
    const resumed = await bench.cli(['resume', first.result!.runId]);
    expect(resumed.code).toBe(0);
    expect(resumed.result?.steps.map((step) => [step.path, step.status, step.replayed ?? false])).toEqual([
      ['catalog', 'succeeded', true],
      ['online', 'succeeded', true],
      ['target', 'succeeded', true],
      ['precheck', 'succeeded', true],
      ['update', 'succeeded', false],
      ['after', 'succeeded', false],
    ]);
    expect(bench.posts('privateCloud.runSoftwarePrechecks')).toHaveLength(1);
    expect(bench.posts('privateCloud.runSoftwareUpdate')).toHaveLength(2);
    // A succeeded run has nothing left to resume: said, not an error, nothing sent.
    const again = await bench.cli(['resume', first.result!.runId]);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('already succeeded; there is nothing to resume');
    expect(bench.posts('privateCloud.runSoftwareUpdate')).toHaveLength(2);
  });

  it('refuses a playbook whose structure changed since the run started, unless --force', async () => {
    bench = await createBench();
    bench.sim.control.faults.set({ asyncOperations: [{ type: 'software-update', outcome: 'FAILED', count: 1 }] });
    const copy = join(bench.home, '..', 'changing.yaml');
    copyFileSync(playbook, copy);
    const first = await bench.cli(['run', copy]);
    expect(first.code).toBe(1);
    writeFileSync(copy, readFileSync(copy, 'utf8').replace('- id: precheck\n', '- id: prechecks\n'));
    const refused = await bench.cli(['resume', first.result!.runId]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('changed since run');
    expect(refused.stderr).toContain('steps no longer there: precheck');
    expect(refused.stderr).toContain('--force');
    expect(bench.posts('privateCloud.runSoftwareUpdate')).toHaveLength(1);
    const forced = await bench.cli(['resume', first.result!.runId, '--force']);
    expect(forced.code).toBe(0);
    // Under --force the playbook as it is now runs: the renamed step is a new one.
    expect(forced.result?.steps.map((step) => [step.path, step.replayed ?? false])).toEqual([
      ['catalog', true],
      ['online', true],
      ['target', true],
      ['prechecks', false],
      ['update', false],
      ['after', false],
    ]);
  });

  it('refuses a run whose lease another live process holds (exit 2)', async () => {
    bench = await createBench();
    bench.sim.control.faults.set({ asyncOperations: [{ type: 'software-update', outcome: 'FAILED', count: 1 }] });
    const first = await bench.cli(['run', playbook]);
    const runId = first.result!.runId;
    const store = await openRunStore({ home: bench.home });
    expect(await store.acquireLease(`run:${runId}`, 'another-host:4242:x', 60_000)).toBe(true);
    await store.close();
    const refused = await bench.cli(['resume', runId]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('is being driven by another process');
    expect(bench.posts('privateCloud.runSoftwareUpdate')).toHaveLength(1);
  });

  it("takes the playbook's lock as run does: refused with LOCK_HELD (exit 1) while another run holds it", async () => {
    bench = await createBench();
    bench.sim.control.faults.set({ asyncOperations: [{ type: 'software-update', outcome: 'FAILED', count: 1 }] });
    const locked = join(bench.home, '..', 'locked.yaml');
    writeFileSync(
      locked,
      readFileSync(playbook, 'utf8').replace(
        'name: one-system-update\n',
        'name: one-system-update\nlock: "catalog-${{ inputs.catalogVersion }}"\n',
      ),
    );
    const first = await bench.cli(['run', locked]);
    expect(first.code).toBe(1);
    const runId = first.result!.runId;
    const store = await openRunStore({ home: bench.home });
    expect(await store.acquireLease('lock:catalog-2.4.0', 'another-run', 60_000)).toBe(true);
    const refused = await bench.cli(['resume', runId]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("Run another-run holds lock 'catalog-2.4.0'");
    expect(bench.posts('privateCloud.runSoftwareUpdate')).toHaveLength(1);
    expect((await store.getRun(runId))?.status).toBe('failed');
    await store.releaseLease('lock:catalog-2.4.0', 'another-run');
    const resumed = await bench.cli(['resume', runId]);
    expect(resumed.code).toBe(0);
    // Released at the end of the resume.
    expect(await store.leaseHolder('lock:catalog-2.4.0')).toBeUndefined();
    await store.close();
  });

  it('reconciles an invitation whose answer was lost by listing the users: done, not sent again', async () => {
    bench = await createBench();
    const invite = join(bench.home, '..', 'invite.yaml');
    writeFileSync(
      invite,
      'name: invite\nsteps:\n  - id: invite\n    call: users.inviteUser\n    with: { body: { email: "new.operator@example.com" } }\n',
    );
    bench.sim.control.faults.set({
      rules: [
        { route: 'users.inviteUser', afterAccept: true, count: 1 },
        { route: 'users.listUsers', status: 503, count: 5 },
      ],
    });
    const first = await bench.cli(['run', invite]);
    expect(first.code).toBe(1);
    const resumed = await bench.cli(['resume', first.result!.runId]);
    expect(resumed.code).toBe(0);
    expect(resumed.lines.find((line) => line.decision !== undefined)).toMatchObject({ decision: 'done' });
    expect(bench.posts('users.inviteUser')).toHaveLength(1);
  });

  it('stops before a write that cannot be reconciled and asks for --confirm-unknown', async () => {
    bench = await createBench();
    const exportFile = fixture('report-export.yaml');
    bench.sim.control.faults.set({ rules: [{ route: 'reporting.createReportExport', afterAccept: true, count: 1 }] });
    const first = await bench.cli(['run', exportFile]);
    expect(first.code).toBe(1);
    const refused = await bench.cli(['resume', first.result!.runId]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('export (reporting.createReportExport');
    expect(refused.stderr).toContain('--confirm-unknown');
    expect(bench.posts('reporting.createReportExport')).toHaveLength(1);
    const confirmed = await bench.cli(['resume', first.result!.runId, '--confirm-unknown']);
    expect(confirmed.code).toBe(0);
    expect(bench.posts('reporting.createReportExport')).toHaveLength(2);
  });
});

describe('large outputs', () => {
  it('are kept in a file under FLEETBOOK_HOME/outputs, referenced from the journal, and read back on resume', async () => {
    bench = await createBench();
    bench.sim.control.faults.set({ rules: [{ route: 'privateCloud.listSystems', status: 400, count: 1 }] });
    const first = await bench.cli(['run', fixture('large-outputs.yaml')]);
    expect(first.code).toBe(1);
    const runId = first.result!.runId;
    const finished = (await bench.journal(runId)).find(
      (entry) => entry.event.type === 'step.finished' && entry.event.path === 'big',
    );
    expect(finished?.event).toMatchObject({
      status: 'succeeded',
      outputs: { $outputsFile: join(bench.home, 'outputs', runId, 'big.json') },
    });
    expect(
      (JSON.parse(readFileSync(join(bench.home, 'outputs', runId, 'big.json'), 'utf8')) as { records: unknown[] })
        .records,
    ).toHaveLength(5000);
    const resumed = await bench.cli(['resume', runId]);
    expect(resumed.code).toBe(0);
    expect(resumed.result).toMatchObject({ status: 'succeeded', outputs: { count: 5000, last: 'record 5000' } });
    expect(resumed.result?.steps.find((step) => step.path === 'big')).toMatchObject({ replayed: true });
  });
});

describe('large values', () => {
  it('a run input, a step input and the run outputs over the store limit are kept in files, and the run resumes with them', async () => {
    bench = await createBench();
    bench.sim.control.faults.set({ rules: [{ route: 'privateCloud.listSystems', status: 400, count: 1 }] });
    const devices = Array.from({ length: 6000 }, (_, index) => ({
      serialNumber: `SN${String(index).padStart(8, '0')}`,
      macAddress: '00:1B:44:11:3A:B7',
      tags: { site: 'lab' },
    }));
    const inputsFile = join(bench.home, '..', 'devices.json');
    writeFileSync(inputsFile, JSON.stringify({ devices }));
    const first = await bench.cli(['run', fixture('large-values.yaml'), '--inputs', inputsFile]);
    expect(first.code).toBe(1);
    const runId = first.result!.runId;
    const outputs = join(bench.home, 'outputs', runId);
    // A `set` step journals one entry: its outputs (its input is the same value, kept once).
    const copied = (await bench.journal(runId)).filter((entry) => entry.event.path === 'copy');
    expect(copied.map((entry) => entry.event)).toEqual([
      expect.objectContaining({
        type: 'step.finished',
        outputs: expect.objectContaining({ $outputsFile: join(outputs, 'copy.json') }),
      }),
    ]);
    expect(copied[0]?.event).not.toHaveProperty('input');
    expect(JSON.parse(readFileSync(join(outputs, 'run.inputs.devices.json'), 'utf8'))).toEqual(devices);

    const resumed = await bench.cli(['resume', runId]);
    expect(resumed.code).toBe(0);
    expect(resumed.result).toMatchObject({ status: 'succeeded', outputs: { count: 6000 } });
    expect(resumed.result?.outputs?.devices).toEqual(devices);
    const store = await openRunStore({ home: bench.home });
    try {
      expect((await store.getRun(runId))?.outputs).toEqual({
        $outputsFile: join(outputs, 'run.outputs.json'),
        bytes: expect.any(Number),
      });
    } finally {
      await store.close();
    }
  });
});

describe('SIGTERM, then fleetbook resume', () => {
  it('leaves the run resumable: the update in flight is followed to its end, not posted again', async () => {
    bench = await createBench({ timeScale: 600 });
    const cli = spawnCli(['run', playbook, '--json'], bench.env);
    await cli.waitFor('privateCloud.runSoftwareUpdate answered 202');
    expect(await cli.signal('SIGTERM')).toBe(130);
    const stdout = cli.stdout();
    const lines = stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const result = lines.at(-1)?.result as { runId: string; status: string };
    expect(result.status).toBe('interrupted');

    const resumed = await bench.cli(['resume', result.runId]);
    expect(resumed.code).toBe(0);
    expect(resumed.result).toMatchObject({ status: 'succeeded', outputs: { updateState: 'UPDATE_COMPLETE' } });
    expect(resumed.lines.some((line) => typeof line.msg === 'string' && line.msg.includes('re-attaching'))).toBe(true);
    expect(bench.posts('privateCloud.runSoftwareUpdate')).toHaveLength(1);
    // The re-attached step has the outputs the first run would have had: the 202's body (none here) included.
    const journal = (await bench.journal(result.runId)).map((entry) => entry.event);
    const answered = journal.find((event) => event.type === 'request.answered' && event.path === 'update') as
      { body?: unknown } | undefined;
    const finished = journal.findLast((event) => event.type === 'step.finished' && event.path === 'update');
    expect(finished).toMatchObject({
      status: 'succeeded',
      outputs: { status: 202, body: answered?.body ?? null, operation: { state: 'SUCCEEDED' } },
    });
    expect(bench.posts('privateCloud.runSoftwarePrechecks')).toHaveLength(1);
  });
});
