/**
 * A leaf kind and a container kind registered from outside the built-in definitions, loaded
 * from YAML and run, with no change to the loader or the engine.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPlaybook, type Playbook, type Step, type StepBase } from '../playbook/index.js';
import type { Template } from '../expressions/index.js';
import {
  builtinStepDefinitions,
  createStepRegistry,
  defineContainer,
  defineLeaf,
  orExpression,
  stepList,
  STEP_ID_PATTERN,
} from '../steps/index.js';
import { StepStatus } from '../store/index.js';
import { fastRun } from './engine.test-kit.js';

/** Messages the `notify` kind sent: its effect outside the run. */
const outbox: string[] = [];

interface NotifyStep extends StepBase {
  kind: 'notify';
  message: Template;
}

const notifyStep = defineLeaf<NotifyStep>({
  kind: 'notify',
  description: 'Sends a message to the team.',
  fields: { notify: { type: 'string', description: 'The message.' } },
  canWrite: true,
  examples: [],
  normalise: (tools) => ({ message: tools.field('notify') }),
  async prepare({ step, context }) {
    const message = String(await step.message.evaluate(context()));
    return {
      input: { message },
      attempt: async () => {
        outbox.push(message);
        return { outputs: { sent: message } };
      },
    };
  },
});

interface RepeatStep extends StepBase {
  kind: 'repeat';
  times: Template;
  as: string;
  steps: Step[];
}

/** Runs its steps `times` times, one round after the other, each round an item with its number. */
const repeatStep = defineContainer<RepeatStep>({
  kind: 'repeat',
  description: 'Runs its steps a number of times in turn.',
  fields: {
    repeat: orExpression({ type: 'integer', minimum: 0 }),
    as: { type: 'string', pattern: STEP_ID_PATTERN },
    steps: stepList,
  },
  required: ['steps'],
  nested: { steps: 'steps' },
  canWrite: false,
  examples: [],
  normalise: (tools) => ({
    times: tools.field('repeat'),
    as: typeof tools.data.as === 'string' ? tools.data.as : 'round',
    steps: tools.steps('steps'),
  }),
  children: (step) => ({ sequences: [step.steps], scope: 'loop', loopVariable: step.as, loopVariableField: 'as' }),
  async run(context) {
    const times = Number(await context.step.times.evaluate(context.context()));
    await context.start({ times });
    const rounds: unknown[] = [];
    for (let index = 0; index < times; index += 1) {
      const item = await context.runItem(index, context.step.steps, { [context.step.as]: index + 1 });
      rounds.push(item.steps);
      if (item.status !== StepStatus.succeeded) return { status: item.status, outputs: { rounds } };
    }
    return { status: StepStatus.succeeded, outputs: { rounds } };
  },
});

const registry = createStepRegistry([...builtinStepDefinitions, notifyStep, repeatStep]);
const dir = mkdtempSync(join(tmpdir(), 'fleetbook-custom-kinds-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function load(yaml: string): Playbook {
  const file = join(dir, `${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, yaml);
  const { playbook, problems } = loadPlaybook(file, { registry });
  expect(problems).toEqual([]);
  if (!playbook) throw new Error('not loaded');
  return playbook;
}

const YAML = `name: custom-kinds
steps:
  - id: rounds
    repeat: 3
    as: round
    steps:
      - id: say
        notify: "round \${{ round }}"
  - id: done
    notify: "done after \${{ $count(steps.rounds.outputs.rounds) }} rounds"
`;

describe('step kinds registered from outside the built-in definitions', () => {
  it('are loaded, checked and run: a leaf with an effect, a container of items', async () => {
    outbox.length = 0;
    const run = await fastRun(load(YAML), { registry });
    expect(run.result.status).toBe('succeeded');
    expect(outbox).toEqual(['round 1', 'round 2', 'round 3', 'done after 3 rounds']);
    expect(run.result.steps.map((line) => [line.path, line.kind, line.status])).toEqual([
      ['rounds', 'repeat', 'succeeded'],
      ['rounds[0]', 'item', 'succeeded'],
      ['rounds[0].say', 'notify', 'succeeded'],
      ['rounds[1]', 'item', 'succeeded'],
      ['rounds[1].say', 'notify', 'succeeded'],
      ['rounds[2]', 'item', 'succeeded'],
      ['rounds[2].say', 'notify', 'succeeded'],
      ['done', 'notify', 'succeeded'],
    ]);
  });

  it('a kind that can write is simulated in a dry run, its effect not made', async () => {
    outbox.length = 0;
    const run = await fastRun(load(YAML), { registry, dryRun: true });
    expect(run.result.status).toBe('succeeded');
    expect(outbox).toEqual([]);
    expect(run.result.simulatedSteps).toEqual(['rounds[0].say', 'rounds[1].say', 'rounds[2].say', 'done']);
    expect(run.events.find((event) => event.type === 'step.finished' && event.path === 'done')).toMatchObject({
      outputs: { simulated: true, input: { message: 'done after 3 rounds' } },
    });
  });

  it("are checked by the loader's reference rules: a loop variable read outside its container is refused", () => {
    const file = join(dir, 'outside.yaml');
    writeFileSync(
      file,
      `name: outside\nsteps:\n  - id: rounds\n    repeat: 2\n    as: round\n    steps:\n      - notify: "in \${{ round }}"\n  - notify: "after \${{ round }}"\n`,
    );
    const { problems } = loadPlaybook(file, { registry });
    expect(problems.map((problem) => problem.code)).toEqual(['LOOP_NAME_OUTSIDE_LOOP']);
  });
});
