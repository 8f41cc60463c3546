/**
 * The `runs` step: the runs of the store the run is recorded in (its history), read only. A run
 * is given by what an operator may see in any list of runs: no inputs, outputs or error
 * messages (they may hold what the run computed from a secret), only the error's code.
 */
import { durationProblem, parseDuration } from '../../expressions/index.js';
import type { RunRecord, RunStatus } from '../../store/index.js';
import { StepError, StepFailureKind } from './step-error.js';
import type { LeafResult, StepRuntime } from './types.js';

export interface RunsQuery {
  /** A duration back from now, milliseconds, or an ISO timestamp; unset: every run. */
  since?: unknown;
  status?: RunStatus;
  playbook?: string;
  limit: number;
}

/** One run as the step lists it. */
export interface ListedRun {
  id: string;
  playbook: string;
  status: string;
  startedAt: string;
  endedAt?: string;
  errorCode?: string;
}

/** The ISO timestamp `since` stands for: a duration (or milliseconds) counts back from `now`. */
function sinceOf(since: unknown, now: number): string | undefined {
  if (since === undefined || since === null || since === '') return undefined;
  const ms = parseDuration(since);
  if (ms !== undefined) return new Date(now - ms).toISOString();
  if (typeof since === 'string' && /^\d{4}-\d{2}-\d{2}/.test(since) && !Number.isNaN(Date.parse(since)))
    return new Date(Date.parse(since)).toISOString();
  throw new StepError(
    `runs since: ${durationProblem(since) ?? JSON.stringify(since)}; give a duration back from now (7d) or an ISO timestamp`,
    { kind: StepFailureKind.invalidInput, code: 'INVALID_DURATION' },
  );
}

const listed = (run: RunRecord): ListedRun => ({
  id: run.id,
  playbook: run.playbook,
  status: run.status,
  startedAt: run.startedAt,
  ...(run.endedAt === undefined ? {} : { endedAt: run.endedAt }),
  ...(run.error?.code === undefined ? {} : { errorCode: run.error.code }),
});

export async function executeRuns(query: RunsQuery, runtime: StepRuntime): Promise<LeafResult> {
  const since = sinceOf(query.since, runtime.clock.now());
  const runs = await runtime.history.listRuns({
    ...(since === undefined ? {} : { since }),
    ...(query.status === undefined ? {} : { status: query.status }),
    ...(query.playbook === undefined ? {} : { playbook: query.playbook }),
    limit: query.limit,
  });
  const list = runs.map(listed);
  return { outputs: { runs: list, count: list.length }, readOnly: true };
}
