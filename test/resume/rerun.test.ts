import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openRunStore } from '../../src/store/index.js';
import { runCli } from '../support/cli.js';
import { createBench, fixture, type Bench } from './harness.js';

const playbook = fixture('fleet-retry.yaml');
const TOKEN = 'tok-rerun-5f0c1e';

let bench: Bench | undefined;
afterEach(async () => {
  await bench?.close();
  bench = undefined;
});

/** POSTs of `operationId` the simulator logged for system `id`. */
function postsFor(bench: Bench, operationId: string, id: string): number {
  return bench.posts(operationId).filter((path) => path.includes(`/${id}/`) || path.endsWith(`/${id}`)).length;
}

describe('fleetbook rerun', () => {
  it('--failed replays the items that succeeded (no write sent again) and runs the failed and unstarted ones', async () => {
    bench = await createBench();
    bench.sim.control.faults.set({ asyncOperations: [{ type: 'software-update', outcome: 'FAILED', count: 1 }] });
    const first = await bench.cli(['run', playbook, '-i', `token=${TOKEN}`]);
    expect(first.code).toBe(1);
    const items = first.result!.outputs!.items as Array<{ id: string; status: string }>;
    expect(items.length).toBe(3);
    // Two at a time: the item whose update failed stops the loop, the one beside it ends succeeded.
    const statuses = items.map((item) => item.status);
    expect(statuses, JSON.stringify(first.result!.steps)).toContain('failed');
    expect(statuses, JSON.stringify(first.result!.steps)).toContain('succeeded');
    const before = new Map(
      items.map((item) => [
        item.id,
        {
          precheck: postsFor(bench!, 'privateCloud.runSoftwarePrechecks', item.id),
          update: postsFor(bench!, 'privateCloud.runSoftwareUpdate', item.id),
        },
      ]),
    );

    // The secret input is given again (never stored), here through the environment.
    const retried = await bench.cli(['rerun', first.result!.runId, '--failed'], { FLEETBOOK_INPUT_TOKEN: TOKEN });
    expect(retried.stderr).toBe('');
    expect(retried.code).toBe(0);
    const newId = retried.result!.runId;
    expect(newId).not.toBe(first.result!.runId);
    for (const item of items) {
      const was = before.get(item.id)!;
      const now = {
        precheck: postsFor(bench, 'privateCloud.runSoftwarePrechecks', item.id),
        update: postsFor(bench, 'privateCloud.runSoftwareUpdate', item.id),
      };
      if (item.status === 'succeeded') expect(now, `item ${item.id} succeeded: nothing sent again`).toEqual(was);
      else if (item.status === 'failed')
        // Its precheck succeeded and is replayed; its update is sent again.
        expect(now, `item ${item.id} failed`).toEqual({ precheck: was.precheck, update: was.update + 1 });
      else expect(now, `item ${item.id} never started`).toEqual({ precheck: 1, update: 1 });
    }
    const replayed = retried.result!.steps.filter((step) => step.replayed).map((step) => step.path);
    for (const [index, item] of items.entries())
      if (item.status === 'succeeded') expect(replayed).toContain(`rollout[${index}]`);
    expect(replayed).toEqual(expect.arrayContaining(['regions', 'plan']));
    expect(retried.result!.outputs!.items).toEqual(items.map((item) => ({ ...item, status: 'succeeded' })));
    expect(retried.stderr + JSON.stringify(retried.lines)).not.toContain(TOKEN);

    // The link, in `runs show` and its JSON.
    const shown = await runCli(['runs', 'show', newId], { env: bench.env });
    expect(shown.stdout).toContain(`retries what failed in run ${first.result!.runId}`);
    const json = await bench.cli(['runs', 'show', newId]);
    expect(JSON.stringify(json.lines)).toContain(`"rerunOf":"${first.result!.runId}"`);

    // Nothing failed in the retry: refused, exit 2, nothing sent.
    const posts = bench.sim.control.requests({}).length;
    const again = await bench.cli(['rerun', newId, '--failed'], { FLEETBOOK_INPUT_TOKEN: TOKEN });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`run ${newId} succeeded: nothing failed to retry`);
    expect(bench.sim.control.requests({}).length).toBe(posts);
  });

  it('a retry driven by `fleetbook rerun` is cancelled from another process', async () => {
    bench = await createBench();
    bench.sim.control.faults.set({ asyncOperations: [{ type: 'software-update', outcome: 'FAILED', count: 1 }] });
    const first = await bench.cli(['run', playbook, '-i', `token=${TOKEN}`]);
    expect(first.code).toBe(1);
    // The retry's update never ends: it is in flight when the cancel comes.
    bench.sim.control.faults.set({ asyncOperations: [{ type: 'software-update', outcome: 'never' }] });
    const retried = bench.cli(['rerun', first.result!.runId, '--failed', '-i', `token=${TOKEN}`]);
    const store = await openRunStore({ home: bench.home });
    try {
      let retry: string | undefined;
      while (!retry) {
        retry = (await store.listRuns()).find((run) => run.trigger.rerunOf === first.result!.runId)?.id;
        if (!retry) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect((await store.cancelRun(retry, 'a colleague')).outcome).toBe('requested');
      const ended = await retried;
      expect(ended.result?.status).toBe('cancelled');
      expect((await store.getRun(retry))?.status).toBe('cancelled');
    } finally {
      await store.close();
    }
  });

  it('refuses --failed when the playbook changed, and a secret not given again; runs it again without --failed', async () => {
    bench = await createBench();
    bench.sim.control.faults.set({ asyncOperations: [{ type: 'software-update', outcome: 'FAILED', count: 1 }] });
    const copy = join(bench.home, '..', 'changing.yaml');
    copyFileSync(playbook, copy);
    const first = await bench.cli(['run', copy, '-i', `token=${TOKEN}`]);
    expect(first.code).toBe(1);
    const runId = first.result!.runId;
    const missing = await bench.cli(['rerun', runId, '--failed']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("started with the secret input 'token' given");
    expect(missing.stderr).toContain('FLEETBOOK_INPUT_TOKEN');
    writeFileSync(copy, readFileSync(copy, 'utf8').replace('concurrency: 2', 'concurrency: 1'));
    const changed = await bench.cli(['rerun', runId, '--failed', '-i', `token=${TOKEN}`]);
    expect(changed.code).toBe(2);
    expect(changed.stderr).toContain('changed since run');
    expect(changed.stderr).not.toMatch(/\n\s+at /);
    const updates = bench.posts('privateCloud.runSoftwareUpdate').length;
    const again = await bench.cli(['rerun', runId, '-i', `token=${TOKEN}`]);
    expect(again.code).toBe(0);
    expect(again.result!.steps.some((step) => step.replayed)).toBe(false);
    // The systems updated by the first run have no update path left: the plan is made again.
    expect(bench.posts('privateCloud.runSoftwareUpdate').length).toBeGreaterThan(updates);
    const shown = await runCli(['runs', 'show', again.result!.runId], { env: bench.env });
    expect(shown.stdout).toContain(`runs again run ${runId}`);
  });
});
