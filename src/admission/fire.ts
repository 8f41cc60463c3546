/**
 * The daemon's `execute` when it runs its fires itself (not in team mode, where it queues them):
 * a fire is a run request like any other door's (`admit`, door `daemon.fire`) driven with
 * `driveAdmitted`, waiting for the playbook's lock (a scheduled run is late rather than lost);
 * the fire a stopped daemon left unfinished goes on with `resumeStored`.
 */
import { platformStateInFlight } from '../engine/index.js';
import { createSecretRegistry } from '../logging/index.js';
import type { FireRequest, SchedulerOptions } from '../scheduler/index.js';
import { RunStatus, TokenRole } from '../store/index.js';
import { admit } from './admit.js';
import { deliverNotifications, driveAdmitted, resumeStored, type RunParts } from './drive.js';
import { Door, type Caller } from './run-request.js';

export type FireDriverOptions = Omit<RunParts, 'secrets' | 'env'> &
  Partial<Pick<RunParts, 'secrets' | 'env'>> & {
    /**
     * The client reaches an embedded simulator started by this process: a run left with platform
     * work in flight by an earlier process (its own simulator, gone with it) is not resumed
     * against this one but ends failed, saying why, before any step runs. @default false
     */
    embeddedSimulator?: boolean;
  };

/** The scheduler fires what its folder holds: whoever may write the folder decided the run. */
const SCHEDULER: Caller = { name: 'scheduler', role: TokenRole.admin, door: Door.daemonFire };

/** Ends a fire's run whose platform work in flight was on a simulator that is gone; true when it did. */
async function refusedOnNewSimulator(parts: RunParts, request: FireRequest): Promise<boolean> {
  const inFlight = platformStateInFlight(await parts.store.journal(request.runId));
  if (inFlight.length === 0) return false;
  const message = `not resumed: its platform work in flight (${inFlight.map((entry) => `${entry.path} ${entry.operationId}`).join('; ')}) was on the embedded simulator of the daemon that ran it, which ended with it`;
  parts.logger.error(
    { event: 'schedule.resumeRefused', runId: request.runId, inFlight },
    `run ${request.runId} ${message}`,
  );
  // Ended here, with no step run: no rescue, webhook or notification fires for a simulator that forgot.
  await parts.store.setRunStatus(request.runId, RunStatus.failed, { error: { message, code: 'SIMULATOR_STATE_LOST' } });
  return true;
}

/** Continues the fire's stored run; a run never created (it waited for the lock) starts as a new fire. */
async function resumeFire(parts: RunParts, request: FireRequest): Promise<{ status: RunStatus } | undefined> {
  const run = await parts.store.getRun(request.runId);
  if (!run) return undefined;
  // Secret inputs are never stored: the schedule gives them again, as it gave them at the start.
  const secretInputs = Object.fromEntries(
    Object.entries(request.schedule.inputs).filter(([name]) => request.playbook.inputs[name]?.secret === true),
  );
  const options = { runId: request.runId, signal: request.signal, waitForLock: true, secretInputs };
  return { status: (await resumeStored(request.playbook, run, parts, options)).status };
}

export function createFireDriver(options: FireDriverOptions): SchedulerOptions['execute'] {
  const { embeddedSimulator, ...given } = options;
  return async (request) => {
    const parts: RunParts = {
      secrets: createSecretRegistry(),
      env: {},
      ...given,
      logger: given.logger.child({ scheduleKey: request.schedule.key }),
    };
    if (request.resume && embeddedSimulator && (await refusedOnNewSimulator(parts, request)))
      return { status: RunStatus.failed };
    const resumed = request.resume ? await resumeFire(parts, request) : undefined;
    if (resumed) {
      await deliverNotifications(parts, request.runId);
      return resumed;
    }
    const trigger = {
      kind: 'schedule',
      schedule: request.schedule,
      scheduledAtMs: request.scheduledAt.getTime(),
    } as const;
    const fire = {
      playbook: request.playbook,
      inputs: request.schedule.inputs,
      trigger,
      target: 'here',
      dryRun: false,
    } as const;
    const now = () => parts.clock?.now() ?? Date.now();
    const admission = await admit(fire, SCHEDULER, { store: parts.store, now });
    const result = await driveAdmitted(admission, parts, {
      runId: request.runId,
      signal: request.signal,
      waitForLock: true,
    });
    await deliverNotifications(parts, request.runId);
    return { status: result.status };
  };
}
