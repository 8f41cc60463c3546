/**
 * The daemon's `execute`: a scheduled run through the engine, with the schedule's inputs,
 * under the playbook's lock (waiting for it: a scheduled run is late rather than lost); or the
 * resume of a scheduled run a stopped daemon left unfinished.
 */
import type { PlatformClient } from '../api/index.js';
import type { Logger, SecretRegistry } from '../logging/index.js';
import type { Notifications } from '../notifications/index.js';
import { platformStateInFlight, runEnvironmentOf, type RunEnvironment } from '../engine/index.js';
import { RunStatus, type RunStore } from '../store/index.js';
import type { Clock } from './clock.js';
import { resumeRunWithLock, runPlaybookWithLock } from './run-with-lock.js';
import { startGateOfRun } from './window-check.js';
import type { SchedulerOptions } from './scheduler.js';

export interface EngineExecutorOptions extends RunEnvironment {
  client: PlatformClient;
  store: RunStore;
  logger: Logger;
  /** Where secret inputs are registered; the logger's registry. */
  secrets?: SecretRegistry;
  /** For the lock's renewal and polling. @default systemClock */
  clock?: Clock;
  /** What `env` shows to expressions. @default {} */
  env?: Record<string, string | undefined>;
  /**
   * The client reaches an embedded simulator started by this process: a run left with platform
   * work in flight by an earlier process (its own simulator, gone with it) is not resumed
   * against this one but ends failed, saying why, before any step runs. @default false
   */
  embeddedSimulator?: boolean;
  /**
   * Notifications of the runs' ends: recorded with each end by the playbook's rules and sent when
   * the run is over (a failed send is left to the daemon's outbox sweep). @default none
   */
  notifications?: Pick<Notifications, 'hookFor' | 'deliver'>;
}

export function createEngineExecutor(options: EngineExecutorOptions): SchedulerOptions['execute'] {
  return async (request) => {
    // The playbook's window and the schedule's: a loop starts no item while either is closed.
    const common = {
      client: options.client,
      store: options.store,
      logger: options.logger.child({ scheduleKey: request.schedule.key }),
      signal: request.signal,
      runId: request.runId,
      waitForLock: true,
      ...(options.secrets ? { secrets: options.secrets } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.env ? { env: options.env } : {}),
      ...runEnvironmentOf(options),
      startGate: startGateOfRun(request.playbook, {
        trigger: { kind: 'schedule', scheduleId: request.schedule.key },
        dryRun: false,
      }),
      ...(options.notifications ? { notify: options.notifications.hookFor(request.playbook.notify) } : {}),
    };
    const deliver = async (): Promise<void> => void (await options.notifications?.deliver({ runId: request.runId }));
    if (request.resume && options.embeddedSimulator) {
      const inFlight = platformStateInFlight(await options.store.journal(request.runId));
      if (inFlight.length > 0) {
        const message = `not resumed: its platform work in flight (${inFlight.map((entry) => `${entry.path} ${entry.operationId}`).join('; ')}) was on the embedded simulator of the daemon that ran it, which ended with it`;
        common.logger.error(
          { event: 'schedule.resumeRefused', runId: request.runId, inFlight },
          `run ${request.runId} ${message}`,
        );
        // Ended here, with no step run: no rescue, webhook or notification fires for a simulator that forgot.
        await options.store.setRunStatus(request.runId, RunStatus.failed, {
          error: { message, code: 'SIMULATOR_STATE_LOST' },
        });
        return { status: RunStatus.failed };
      }
    }
    if (request.resume) {
      // Secret inputs are never stored: the schedule gives them again, as it gave them at the start.
      const secretInputs = Object.fromEntries(
        Object.entries(request.schedule.inputs).filter(([name]) => request.playbook.inputs[name]?.secret === true),
      );
      const resumed = await resumeRunWithLock(request.playbook, { ...common, secretInputs });
      await deliver();
      return { status: resumed.status };
    }
    const result = await runPlaybookWithLock(request.playbook, {
      ...common,
      inputs: request.schedule.inputs,
      trigger: { kind: 'schedule', scheduleId: request.schedule.key },
    });
    await deliver();
    return { status: result.status };
  };
}
