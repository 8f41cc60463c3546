/**
 * What the API and the pages show of runs, steps, journals, playbooks and schedules. Every
 * value leaving the server passes `scrub`: secret keys redacted and registered secret values
 * (the client secret, secret inputs given to runs of this process) replaced, over what the
 * engine already redacted before journaling.
 */
import { relative } from 'node:path';
import { withoutSecretKeys, type SecretRegistry } from '../logging/index.js';
import type { InputSpec } from '../model/index.js';
import type { Playbook, Problem } from '../playbook/index.js';
import { createFireTimes, readScheduleState, type ScheduleState } from '../scheduler/index.js';
import type { JournalEntry, RunRecord, RunStore, StepNode } from '../store/index.js';

export type Scrub = <T>(value: T) => T;

export function createScrub(secrets: SecretRegistry): Scrub {
  return (value) => secrets.scrubValue(withoutSecretKeys(value));
}

export type RunView = RunRecord & { durationMs?: number };

export function runView(run: RunRecord): RunView {
  return run.endedAt === undefined
    ? run
    : { ...run, durationMs: Math.max(0, Date.parse(run.endedAt) - Date.parse(run.startedAt)) };
}

/** The paths whose steps are `log:` steps. */
function logPaths(entries: readonly JournalEntry[]): Set<string> {
  return new Set(
    entries.flatMap((entry) =>
      // A `log:` step journals one entry, a `step.finished` with its kind (a `step.started` in older journals).
      (entry.event.type === 'step.started' || entry.event.type === 'step.finished') && entry.event.kind === 'log'
        ? [entry.event.path]
        : [],
    ),
  );
}

export interface LogLine {
  seq: number;
  at: string;
  path: string;
  message: string;
  /** `log`: a `log:` step's message; `step`: what a step did. */
  level: 'log' | 'step';
}

/** One journal entry in words, or undefined for one a reader does not need. */
export function describeEntry(entry: JournalEntry, logs: ReadonlySet<string>): LogLine | undefined {
  const { event } = entry;
  const line = (message: string, level: LogLine['level'] = 'step'): LogLine => ({
    seq: entry.seq,
    at: entry.at,
    path: event.path,
    message,
    level,
  });
  switch (event.type) {
    case 'step.started':
      return event.kind === 'log' ? undefined : line(`started (${event.kind})`);
    case 'request.sending':
      return line(`${event.method} ${event.operationId}${event.attempt > 1 ? ` (attempt ${event.attempt})` : ''}`);
    case 'request.answered':
      return line(`answered HTTP ${event.httpStatus}`);
    case 'request.failed':
      return line(`request failed: ${event.error.message}${event.outcomeUnknown ? ' (outcome unknown)' : ''}`);
    case 'operation.progress':
      return line(
        `operation ${event.progressPercent === undefined ? '' : `${event.progressPercent}% `}${event.state ?? ''}`.trimEnd(),
      );
    case 'operation.finished':
      return line(`operation ended ${event.outcome}`);
    case 'retry.scheduled':
      return line(`retry in ${(event.delayMs / 1000).toFixed(1)}s: ${event.reason}`);
    case 'item.started':
      return line(`item ${event.index} started`);
    case 'item.finished':
      return line(`item ${event.index} ${event.status}`);
    case 'run.waiting':
      return line(`waiting: ${event.wait.message ?? `for ${event.wait.reason}`}`);
    case 'approval.decided':
      return line(`${event.decision} by ${event.by}${event.comment ? `: ${event.comment}` : ''}`);
    case 'approval.given':
      return line(`approved by ${event.by}, counted (${event.of} needed)${event.comment ? `: ${event.comment}` : ''}`);
    case 'wait.ended':
      return line(`wait ended (${event.reason})`);
    case 'run.cancelled':
      return line(`${event.requested ? 'cancel asked' : 'cancelled'} by ${event.by}`);
    case 'step.finished': {
      const outputs = event.outputs as { message?: unknown } | undefined;
      if (logs.has(event.path) && typeof outputs?.message === 'string') return line(outputs.message, 'log');
      return line(`${event.status}${event.error ? `: ${event.error.message}` : ''}`);
    }
  }
}

/** The log lines of `entries`; with `last`, only the newest `last` of them (described from the end). */
export function logLines(entries: readonly JournalEntry[], last = Number.POSITIVE_INFINITY): LogLine[] {
  const logs = logPaths(entries);
  const lines: LogLine[] = [];
  for (let index = entries.length - 1; index >= 0 && lines.length < last; index -= 1) {
    const line = describeEntry(entries[index] as JournalEntry, logs);
    if (line) lines.push(line);
  }
  return lines.reverse();
}

export interface InputView {
  name: string;
  type: string;
  required: boolean;
  secret: boolean;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  schema: Record<string, unknown>;
}

/** Declared inputs as a form shows them (a playbook's start form, a gate's form). */
export function inputViews(specs: Readonly<Record<string, InputSpec>>): InputView[] {
  return Object.entries(specs).map(([name, spec]) => ({
    name,
    type: spec.type,
    required: spec.required,
    secret: spec.secret,
    ...(spec.description === undefined ? {} : { description: spec.description }),
    // A secret input's default is a secret too.
    ...(spec.default === undefined || spec.secret ? {} : { default: spec.default }),
    ...(Array.isArray(spec.schema.enum) ? { enum: spec.schema.enum as unknown[] } : {}),
    schema: spec.schema,
  }));
}

export interface PlaybookView {
  name: string;
  description?: string;
  file: string;
  inputs: InputView[];
  schedules: string[];
}

export function playbookView(playbook: Playbook, root: string): PlaybookView {
  return {
    name: playbook.name,
    ...(playbook.description === undefined ? {} : { description: playbook.description }),
    file: relative(root, playbook.source),
    inputs: inputViews(playbook.inputs),
    schedules: playbook.schedules.map((schedule) => schedule.key),
  };
}

export function problemView(problem: Problem, root: string) {
  return {
    severity: problem.severity,
    code: problem.code,
    message: problem.message,
    file: relative(root, problem.file),
    line: problem.line,
  };
}

export interface ScheduleView {
  key: string;
  playbook: string;
  cron: string;
  timezone: string;
  enabled: boolean;
  paused: boolean;
  pausedBy?: string;
  next: string[];
  lastRunId?: string;
  lastResult?: string;
  lastFireAt?: string;
  consecutiveFailures?: number;
}

export async function scheduleViews(
  store: RunStore,
  playbooks: readonly Playbook[],
  count: number,
  nowMs: number,
): Promise<ScheduleView[]> {
  const views: ScheduleView[] = [];
  for (const playbook of playbooks)
    for (const schedule of playbook.schedules) {
      const state: ScheduleState | undefined = await readScheduleState(store, schedule.key);
      const paused = state?.paused === true;
      views.push({
        key: schedule.key,
        playbook: playbook.name,
        cron: schedule.cron,
        timezone: schedule.timezone,
        enabled: schedule.enabled,
        paused,
        ...(paused && state?.pausedBy !== undefined ? { pausedBy: state.pausedBy } : {}),
        next:
          schedule.enabled && !paused
            ? createFireTimes(schedule.cron, schedule.timezone)
                .take(nowMs, count)
                .map((at) => new Date(at).toISOString())
            : [],
        ...(state?.lastRunId === undefined ? {} : { lastRunId: state.lastRunId }),
        ...(state?.lastResult === undefined ? {} : { lastResult: state.lastResult }),
        ...(state?.lastFireAt === undefined ? {} : { lastFireAt: state.lastFireAt }),
        ...(state ? { consecutiveFailures: state.consecutiveFailures } : {}),
      });
    }
  return views;
}

export type { StepNode };
