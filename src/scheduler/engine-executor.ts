/**
 * The daemon's `execute`: a scheduled run through the engine, with the schedule's inputs,
 * under the playbook's lock (waiting for it: a scheduled run is late rather than lost); or the
 * resume of a scheduled run a stopped daemon left unfinished.
 */
import type { PlatformClient } from '../api/index.js';
import type { Logger, SecretRegistry } from '../logging/index.js';
import type { RunStore } from '../store/types.js';
import type { Clock } from './clock.js';
import { resumeRunWithLock, runPlaybookWithLock } from './run-with-lock.js';
import type { SchedulerOptions } from './scheduler.js';

export interface EngineExecutorOptions {
  client: PlatformClient;
  store: RunStore;
  logger: Logger;
  /** Where secret inputs are registered; the logger's registry. */
  secrets?: SecretRegistry;
  /** For the lock's renewal and polling. @default systemClock */
  clock?: Clock;
  /** What `env` shows to expressions. @default {} */
  env?: Record<string, string | undefined>;
  /** Where large values go (the CLI resolves `FLEETBOOK_HOME/outputs`). */
  outputsDir?: string;
  /** Ended runs older than this are pruned when a run ends (`FLEETBOOK_RETENTION`, resolved by the CLI). */
  retentionMs?: number;
}

export function createEngineExecutor(options: EngineExecutorOptions): SchedulerOptions['execute'] {
  return async (request) => {
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
      ...(options.outputsDir ? { outputsDir: options.outputsDir } : {}),
      ...(options.retentionMs === undefined ? {} : { retentionMs: options.retentionMs }),
    };
    if (request.resume) {
      // Secret inputs are never stored: the schedule gives them again, as it gave them at the start.
      const secretInputs = Object.fromEntries(Object.entries(request.schedule.inputs).filter(([name]) => request.playbook.inputs[name]?.secret === true));
      const resumed = await resumeRunWithLock(request.playbook, { ...common, secretInputs });
      return { status: resumed.status };
    }
    const result = await runPlaybookWithLock(request.playbook, { ...common, inputs: request.schedule.inputs, trigger: { kind: 'schedule', scheduleId: request.schedule.key } });
    return { status: result.status };
  };
}
