/**
 * What every door asks for, in one value: the CLI's `run`, `run --queue` and `schedules trigger`,
 * the server's API and pages (start, trigger now), the daemon's fires. A door builds a
 * `RunRequest` from what it was given and hands it to `admit`; nothing else decides whether a
 * run may start.
 */
import type { RetrySource } from '../engine/index.js';
import type { Playbook, ScheduleSpec } from '../playbook/index.js';
import type { PlanGuard } from '../steps/index.js';
import type { TokenRole } from '../store/index.js';

/**
 * The doors a run comes in or goes on by: the rows of the door × policy matrix
 * (docs/architecture.md; test/doors/matrix.test.ts fails for a door without its row). The doors
 * that start a run are admitted (`admit`); those that continue one (resume, a decision, a
 * worker's claim) go on from what was admitted when it started.
 */
export const Door = {
  cliRun: 'cli.run',
  cliQueue: 'cli.queue',
  cliTrigger: 'cli.trigger',
  cliRerun: 'cli.rerun',
  cliResume: 'cli.resume',
  cliDecide: 'cli.approve',
  daemonFire: 'daemon.fire',
  workerClaim: 'worker.claim',
  apiStart: 'api.start',
  apiTrigger: 'api.trigger',
  apiRerun: 'api.rerun',
  apiResume: 'api.resume',
  apiDecide: 'api.approve',
  uiStart: 'ui.start',
  uiTrigger: 'ui.trigger',
  uiRerun: 'ui.rerun',
  uiDecide: 'ui.approve',
} as const;
export type Door = (typeof Door)[keyof typeof Door];

/** Who asks: a person at the CLI (the operating-system user, with every role), an API token, the scheduler. */
export interface Caller {
  name: string;
  role: TokenRole;
  door: Door;
  /** The caller's role for one playbook, when it differs by playbook (a token or a role binding limited to some). */
  roleFor?: (playbook: string) => TokenRole;
  /** The client's address (the server's doors), for the audit log. */
  address?: string;
}

/** How the run was asked for, as the run records it. */
export type RequestTrigger =
  | { kind: 'manual' }
  /** A schedule run now, by hand (`schedules trigger`, "Trigger now"). */
  | { kind: 'trigger'; schedule: ScheduleSpec }
  /** A schedule's fire, for the time it was due. */
  | { kind: 'schedule'; schedule: ScheduleSpec; scheduledAtMs: number };

export interface RunRequest {
  playbook: Playbook;
  /** The inputs as given (a schedule's own inputs under the caller's); defaults are applied by admission. */
  inputs: Record<string, unknown>;
  trigger: RequestTrigger;
  /** `here`: this process drives the run; `queue`: it is recorded `queued` for a worker (team mode). */
  target: 'here' | 'queue';
  dryRun: boolean;
  /** With `dryRun` (`fleetbook plan`): each write is planned, its resource read and its change recorded. */
  planWrites?: boolean;
  /** `fleetbook apply`: each write is checked against the plan before it is sent. */
  planGuard?: PlanGuard;
  /**
   * Start even though the maintenance window is closed or a freeze holds, for this reason
   * (recorded in the run). Only a caller with the `admin` role may.
   */
  ignoreWindow?: { reason: string };
  /**
   * Run again (`rerunRequest`): the run this one repeats, recorded as `trigger.rerunOf`; with
   * `retry`, what succeeded in it is replayed from its journal and only the rest runs.
   */
  rerun?: { of: string; retry?: RetrySource };
}
