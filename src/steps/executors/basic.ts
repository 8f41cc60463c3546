/**
 * The leaf steps that call nothing: `set`, `log`, `assert`, `fail`, `sleep`. Their values
 * arrive rendered.
 */
import { durationProblem, parseDuration } from '../../expressions/index.js';
import { sleepOn } from '../../timers/index.js';
import { StepError, StepFailureKind } from './step-error.js';
import type { StepRuntime, LeafResult } from './types.js';

/** `set`: its values become its outputs (`steps.<id>.outputs.<name>`). */
export function executeSet(values: unknown): LeafResult {
  return { outputs: values };
}

/**
 * `log`: a line at the step's level; the message is also the step's output. A message that
 * renders to nothing (a path that matched nothing) logs `null` rather than failing the step.
 */
export function executeLog(
  message: unknown,
  level: 'debug' | 'info' | 'warn' | 'error',
  runtime: StepRuntime,
): LeafResult {
  const text = typeof message === 'string' ? message : (JSON.stringify(message) ?? 'null');
  runtime.logger[level]({ playbookLog: true }, runtime.secrets.scrub(text));
  return { outputs: { message: text } };
}

/** `assert`: fails the step unless the condition is truthy. */
export function executeAssert(condition: unknown, message: unknown, conditionSource: unknown): LeafResult {
  if (condition) return { outputs: { passed: true } };
  const text =
    typeof message === 'string' && message.length > 0
      ? message
      : `assertion failed: ${typeof conditionSource === 'string' ? conditionSource : JSON.stringify(conditionSource)}`;
  throw new StepError(text, { kind: StepFailureKind.assertion, code: 'ASSERTION_FAILED' });
}

/** `fail`: ends the step (and, unless rescued or continued, the run) with the message. */
export function executeFail(message: unknown): never {
  throw new StepError(typeof message === 'string' ? message : JSON.stringify(message), {
    kind: StepFailureKind.failed,
    code: 'FAILED_BY_PLAYBOOK',
  });
}

/** `sleep`: a duration string or milliseconds; aborted by cancellation and the step's timeout. */
export async function executeSleep(duration: unknown, runtime: StepRuntime): Promise<LeafResult> {
  const ms = parseDuration(duration);
  if (ms === undefined) {
    // Also a duration longer than a timer can wait: such a sleep would otherwise end at once.
    throw new StepError(`sleep: ${durationProblem(duration) ?? JSON.stringify(duration)}`, {
      kind: StepFailureKind.invalidInput,
      code: 'INVALID_DURATION',
    });
  }
  await sleepOn(runtime.clock, ms, runtime.signal);
  return { outputs: { sleptMs: ms } };
}
