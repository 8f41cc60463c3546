/**
 * Settings of a run's shape written as expressions over inputs (`retry.maxAttempts:
 * ${{ inputs.maxResumes }}`, a loop's `batches`), bound when the run starts: every one is
 * evaluated and checked before the first step, so a bad value stops the run (exit 2) before
 * any request rather than half-way through a maintenance window. The playbook as loaded is
 * shared (a daemon runs it many times): binding makes a copy, and only when there is a setting.
 */
import { UsageError } from '../errors/index.js';
import { compileTemplate, durationProblem, parseDuration } from '../expressions/index.js';
import { describePointer, type InputSetting, type Playbook, type Step } from '../playbook/index.js';
import { EngineErrorCode } from './error-codes.js';

type Bound = Partial<Record<InputSetting['field'], unknown>>;

const PERCENT = /^\d+(\.\d+)?%$/;

/** The value a setting takes, or why it cannot take what its expression gave. */
function checked(field: InputSetting['field'], value: unknown): { value: unknown } | { problem: string } {
  switch (field) {
    case 'maxAttempts':
    case 'concurrency':
      return typeof value === 'number' && Number.isInteger(value) && value >= 1
        ? { value }
        : { problem: 'a whole number from 1' };
    case 'backoffRate':
      return typeof value === 'number' && value >= 1 ? { value } : { problem: 'a number from 1' };
    case 'initialDelayMs':
    case 'maxDelayMs': {
      const ms = parseDuration(value);
      return ms === undefined ? { problem: `a duration (${durationProblem(value) ?? 'e.g. 30s'})` } : { value: ms };
    }
    case 'batches': {
      const sizes = typeof value === 'number' || typeof value === 'string' ? [value] : value;
      const size = (entry: unknown): boolean =>
        (typeof entry === 'number' && Number.isInteger(entry) && entry >= 1) ||
        (typeof entry === 'string' && PERCENT.test(entry));
      return Array.isArray(sizes) && sizes.length > 0 && sizes.every(size)
        ? { value: sizes }
        : { problem: 'a batch size (a whole number from 1 or a percentage such as "25%") or a non-empty list of them' };
    }
  }
}

function isStep(value: unknown): value is Step {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Step).kind === 'string' &&
    typeof (value as Step).location === 'object'
  );
}

function hasSettings(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasSettings);
  if (!isStep(value)) return false;
  if (value.inputSettings !== undefined) return true;
  return Object.entries(value).some(([key, inner]) => key !== 'playbook' && hasSettings(inner));
}

/**
 * The playbook with its settings over inputs bound to `inputs` (the same object when it has
 * none). Throws `UsageError` (`INVALID_INPUT_SETTING`, exit 2) listing every setting whose
 * value does not fit, with where it is written.
 */
export async function bindInputSettings(playbook: Playbook, inputs: Record<string, unknown>): Promise<Playbook> {
  if (!hasSettings(playbook.steps)) return playbook;
  const problems: string[] = [];
  const context = {
    inputs,
    steps: {},
    run: { id: '', playbook: playbook.name, dryRun: false, startedAt: '' },
    env: {},
  };

  const bindStep = async (step: Step): Promise<Step> => {
    const copy: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(step)) copy[key] = key === 'playbook' ? value : await rebuild(value);
    const bound: Bound = {};
    for (const { field, template } of step.inputSettings ?? []) {
      let value: unknown;
      try {
        value = await template.evaluate(context);
      } catch (error) {
        problems.push(`${describePointer(template.pointer)}: ${(error as Error).message}`);
        continue;
      }
      const result = checked(field, value);
      if ('problem' in result)
        problems.push(
          `${describePointer(template.pointer)} is ${JSON.stringify(value) ?? 'nothing'} with these inputs; it must be ${result.problem}`,
        );
      else bound[field] = result.value;
    }
    const { batches, concurrency, ...retry } = bound;
    return {
      ...(copy as unknown as Step),
      retry: { ...step.retry, ...retry },
      ...(batches === undefined ? {} : { batches }),
      ...(concurrency === undefined
        ? {}
        : { concurrency: compileTemplate(concurrency, { pointer: `${step.location.pointer}/concurrency` }) }),
    } as Step;
  };

  // One step after the other, so the problems are listed in the order the playbook writes them.
  const rebuild = async (value: unknown): Promise<unknown> => {
    if (Array.isArray(value)) {
      if (!value.some((item) => Array.isArray(item) || isStep(item))) return value;
      const rebuilt: unknown[] = [];
      for (const item of value) rebuilt.push(await rebuild(item));
      return rebuilt;
    }
    return isStep(value) ? bindStep(value) : value;
  };

  const steps = (await rebuild(playbook.steps)) as Step[];
  if (problems.length > 0)
    throw new UsageError(
      `Playbook '${playbook.name}': ${problems.join('; ')}. The run was not started; nothing was sent.`,
      EngineErrorCode.invalidInputSetting,
      { problems },
    );
  return { ...playbook, steps };
}
