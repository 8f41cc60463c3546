/**
 * The daemon's `execute` in team mode: the leader only enqueues. A fire is recorded once per
 * (schedule, fire time) in the shared store, then queued for a worker; a second leader (two at
 * once, however briefly) finds the fire recorded and queues nothing. The scheduler sees the
 * fire's outcome as `queued`: the run's own end is the worker's.
 */
import { enqueuePlaybookRun } from '../engine/index.js';
import type { Logger } from '../logging/index.js';
import { RunStatus, type QueueStore } from '../store/index.js';
import type { SchedulerOptions } from './scheduler.js';

export interface FireQueuerOptions {
  store: QueueStore;
  logger: Logger;
  /** What `env` shows to expressions. @default process.env */
  env?: Record<string, string | undefined>;
}

export function createFireQueuer(options: FireQueuerOptions): SchedulerOptions['execute'] {
  return async (request) => {
    const logger = options.logger.child({ scheduleKey: request.schedule.key, runId: request.runId });
    // A fire a stopped leader left unfinished is already in the store: the workers take it over.
    if (request.resume) return { status: RunStatus.queued };
    const fireAt = request.scheduledAt.toISOString();
    if (!(await options.store.recordFire(request.schedule.key, fireAt, request.runId))) {
      logger.warn(
        { event: 'fire.duplicate', scheduledAt: fireAt },
        `schedule ${request.schedule.key}: the fire of ${fireAt} was recorded by another leader; not queued again`,
      );
      return { status: RunStatus.queued };
    }
    await enqueuePlaybookRun(request.playbook, {
      store: options.store,
      inputs: request.schedule.inputs,
      runId: request.runId,
      trigger: { kind: 'schedule', scheduleId: request.schedule.key },
      env: options.env ?? process.env,
    });
    logger.info(
      { event: 'fire.queued', scheduledAt: fireAt },
      `schedule ${request.schedule.key}: run ${request.runId} queued for the workers`,
    );
    return { status: RunStatus.queued };
  };
}
