/**
 * What a step says as it runs: its started and finished log lines (at the level its kind
 * asks), the `step.finished` event the journal keeps of it, and the error it ends with when its
 * rescue failed too.
 */
import { stepLabel, type Step } from '../playbook/index.js';
import type { StepOutcome } from '../steps/index.js';
import { StepStatus, type ErrorRecord, type JournalEvent } from '../store/index.js';
import { joinPath, type Frame, type RunnerOptions, type StepFields, type StepSummary } from './runner-state.js';

export function withoutJournalMembers(outcome: StepOutcome): StepOutcome {
  const { journalOutputs: _journalOutputs, readOnly: _readOnly, ...viewed } = outcome;
  return viewed;
}

/** The step's finished (or recovered) line, when its level is on. */
export function logFinished(
  options: RunnerOptions,
  fields: StepFields,
  level: 'debug' | 'info' | 'error',
  step: Step,
  finished: StepOutcome,
  record: StepSummary,
): void {
  if (!options.logger.isLevelEnabled(level)) return;
  const label = stepLabel(record.path, step.location.line);
  const facts = { kind: step.kind, status: finished.status, durationMs: record.durationMs, attempts: record.attempts };
  // A rescued step succeeded: the failure it recovered from is a fact about it, not its error.
  if (finished.rescued)
    options.logger[level](
      { ...fields, ...facts, rescued: true, recoveredFrom: finished.error },
      `step ${label} recovered: its rescue succeeded after it failed (${finished.error?.message ?? 'no message'})`,
    );
  else
    options.logger[level](
      { ...fields, ...facts, ...(finished.error ? { error: finished.error } : {}) },
      `step ${label} ${finished.status}`,
    );
}

/** The step's started line, when its level is on. */
export function logStarted(
  options: RunnerOptions,
  fields: StepFields,
  level: 'debug' | 'info',
  step: Step,
  path: string,
): void {
  if (options.logger.isLevelEnabled(level))
    options.logger[level]({ ...fields, kind: step.kind }, `step ${stepLabel(path, step.location.line)} started`);
}

/**
 * The step's `step.finished`, with the outputs the journal keeps (a loop's, without its items'
 * steps); `start`: a one-entry step's, also saying what its `step.started` would.
 */
export function finishedEvent(
  path: string,
  finished: StepOutcome,
  outputs: unknown,
  start: { step: Step; input: unknown } | undefined,
): JournalEvent {
  // The optional members set one by one, in the order spreads gave them: one object per step, not five.
  const event: Extract<JournalEvent, { type: 'step.finished' }> = start
    ? { type: 'step.finished', path, stepId: start.step.id, kind: start.step.kind, status: finished.status }
    : { type: 'step.finished', path, status: finished.status };
  if (start?.input !== undefined) event.input = start.input;
  if (outputs !== undefined) event.outputs = outputs;
  if (finished.error) event.error = finished.error;
  return event;
}

export function viewOf(outcome: StepOutcome): { status: StepStatus; outputs?: unknown; error?: StepOutcome['error'] } {
  return {
    status: outcome.status,
    ...(outcome.outputs === undefined ? {} : { outputs: outcome.outputs }),
    ...(outcome.error ? { error: outcome.error } : {}),
  };
}

/**
 * A rescue that failed too (often on purpose, ending in `fail:`) says why in its own words:
 * the step's error is the rescue's, and the failure it tried to recover from is kept in
 * `details.rescuedFrom`.
 */
export function rescueFailure(
  rescue: readonly Step[],
  frame: Frame,
  original: ErrorRecord | undefined,
): ErrorRecord | undefined {
  const failed = [...rescue]
    .reverse()
    .find(
      (step) =>
        !step.continueOnError && (frame.scope.steps[step.id] as StepOutcome | undefined)?.status === StepStatus.failed,
    );
  const error = failed ? (frame.scope.steps[failed.id] as StepOutcome).error : undefined;
  if (!failed || !error) return original;
  return {
    ...error,
    details: {
      ...(error.details as Record<string, unknown> | undefined),
      failedStep: joinPath(frame.prefix, failed.id),
      ...(original ? { rescuedFrom: original } : {}),
    },
  };
}
