/**
 * `retry` fields and a loop's `batches` written as expressions over inputs: bound when the run
 * starts, so the inputs shape the run (attempts made, batch sizes), and a value the inputs make
 * invalid stops the run, exit 2, before the run is recorded or any request sent.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors/index.js';
import { loadPlaybook, type Playbook } from '../../src/playbook/index.js';
import { startHarness, type Harness } from './harness.js';

const dir = mkdtempSync(join(tmpdir(), 'fleetbook-input-settings-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function load(name: string, text: string): ReturnType<typeof loadPlaybook> {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, text);
  return loadPlaybook(file);
}

const SETTINGS = `name: input-settings
inputs:
  batchSize: { type: integer, default: 1 }
  maxResumes: { type: integer, default: 2 }
steps:
  - id: systems
    call: privateCloud.listSystems
    retry: { maxAttempts: "\${{ inputs.maxResumes + 1 }}", initialDelay: 1ms, maxDelay: 2ms, on: [400] }
  - id: each
    forEach: \${{ [1, 2, 3] }}
    batches: ["\${{ inputs.batchSize }}", "100%"]
    concurrency: \${{ inputs.batchSize }}
    steps:
      - log: "item \${{ item }}"
`;

function settingsPlaybook(): Playbook {
  const { playbook, problems } = load('settings', SETTINGS);
  expect(problems).toEqual([]);
  return playbook as Playbook;
}

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('settings over inputs', () => {
  it('the inputs set the attempts of a retry and the sizes of the batches', async () => {
    harness = await startHarness({ faults: { rules: [{ route: 'privateCloud.listSystems', status: 400, count: 2 }] } });
    const result = await harness.run(settingsPlaybook(), { inputs: { batchSize: 2, maxResumes: 2 } });
    expect(result.status).toBe('succeeded');
    expect(
      harness.sim.control.requests({ operationId: 'privateCloud.listSystems' }).map((entry) => entry.status),
    ).toEqual([400, 400, 200]);
    const journal = await harness.store.journal(result.runId);
    const loop = journal.find(({ event }) => event.type === 'step.started' && event.path === 'each');
    expect(loop?.event).toMatchObject({ input: { batches: [2, 1], concurrency: 2 } });
  });

  it('fewer resumes as an input: the retry gives up sooner', async () => {
    harness = await startHarness({ faults: { rules: [{ route: 'privateCloud.listSystems', status: 400, count: 2 }] } });
    const result = await harness.run(settingsPlaybook(), { inputs: { maxResumes: 0 } });
    expect(result.status).toBe('failed');
    expect(harness.sim.control.requests({ operationId: 'privateCloud.listSystems' })).toHaveLength(1);
  });

  it('a value the inputs make invalid: exit 2 naming each setting, no run recorded, no request sent', async () => {
    harness = await startHarness();
    const run = harness.run(settingsPlaybook(), { inputs: { batchSize: 0, maxResumes: -1 } });
    await expect(run).rejects.toMatchObject({
      code: 'INVALID_INPUT_SETTING',
      exitCode: ExitCode.usage,
      message:
        "Playbook 'input-settings': steps[0].retry.maxAttempts is 0 with these inputs; it must be a whole number from 1; " +
        'steps[1].concurrency is 0 with these inputs; it must be a whole number from 1; ' +
        'steps[1].batches is [0,"100%"] with these inputs; it must be a batch size (a whole number from 1 or a percentage such as "25%") or a non-empty list of them. ' +
        'The run was not started; nothing was sent.',
    });
    expect(harness.sim.control.requests()).toEqual([]);
    expect(await harness.store.listRuns()).toEqual([]);
  });

  it('validate refuses such a setting that reads anything but inputs, at the name', () => {
    const { problems } = load(
      'reads-a-step',
      `name: reads-a-step
steps:
  - id: count
    set: { n: 3 }
  - call: privateCloud.listSystems
    retry: { maxAttempts: "\${{ steps.count.outputs.n }}" }
`,
    );
    expect(problems.map((problem) => [problem.code, problem.line, problem.column])).toEqual([
      ['SETTING_NOT_OVER_INPUTS', 6, 32],
    ]);
    expect(problems[0]?.message).toBe(
      "this value is fixed when the run starts, before any step: its expression reads only `inputs`, not 'steps'",
    );
  });
});
