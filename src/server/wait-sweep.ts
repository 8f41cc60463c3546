/**
 * The server's sweep of due waits: every `everyMs` it ends the waits whose time came (an
 * approval's timeout, a window's end) and continues their runs, so a gate that times out ends
 * its run as its `onTimeout` says without anyone resuming it. With a local store the runs are
 * resumed here, through the launcher (as a decision's are); with a shared one they are queued
 * for the workers. The runs of a schedule's fires are left to the daemon's scheduler, which ends
 * their waits and resumes them itself; a schedule's run triggered by hand is this server's (see
 * `continuedByScheduler`). Of two sweeps only the one that continues a run may end its wait.
 */
import { continuedByScheduler, describeWait, endDueWaits, type WaitEnded } from '../engine/index.js';
import type { Logger } from '../logging/index.js';
import { RunStatus, type RunStore } from '../store/index.js';
import type { Clock, Timer } from '../timers/index.js';
import type { PlaybookCatalog } from './playbook-catalog.js';
import type { RunLauncher } from './run-launcher.js';

export interface WaitSweepOptions {
  store: RunStore;
  launcher: RunLauncher;
  catalog: PlaybookCatalog;
  logger: Logger;
  clock: Clock;
  everyMs: number;
}

export interface WaitSweep {
  /** Ends due waits now and continues their runs; resolves once each is resumed (or queued). */
  sweep(): Promise<void>;
  /** Stops sweeping; resolves once a sweep under way has finished. */
  stop(): Promise<void>;
}

/** Continues a run whose wait the sweep ended: resumed here from a local store, left queued in a shared one. */
async function continueRun(options: WaitSweepOptions, { run, wait, status }: WaitEnded): Promise<void> {
  const { logger } = options;
  logger.info(
    { event: 'wait.ended', runId: run.id, wait },
    `run ${run.id}: ${describeWait(wait)} ${wait.reason === 'approval' ? 'timed out' : 'came'}`,
  );
  if (status !== RunStatus.interrupted) return;
  const playbook = await options.catalog.find(run.playbook);
  const current = await options.store.getRun(run.id);
  if (!playbook || !current) {
    logger.warn(
      { event: 'run.notResumed', runId: run.id, playbook: run.playbook },
      `run ${run.id}: the playbook ${run.playbook} is no longer in the folder; \`fleetbook resume\` continues it`,
    );
    return;
  }
  await options.launcher.resume(playbook, current, {}, 'server');
}

export function startWaitSweep(options: WaitSweepOptions): WaitSweep {
  const { store, logger, clock } = options;
  let timer: Timer | undefined;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  const sweep = async (): Promise<void> => {
    // A schedule's fires are the daemon's (see above); every other run, a triggered one too, is this server's to continue.
    const ended = await endDueWaits(store, clock.now, (run) => !continuedByScheduler(run));
    for (const entry of ended)
      await continueRun(options, entry).catch((error: unknown) =>
        logger.error({ event: 'run.error', runId: entry.run.id, err: error }, `run ${entry.run.id}: ${String(error)}`),
      );
  };
  const later = (): void => {
    timer = clock.setTimer(() => {
      if (stopped) return;
      running = sweep()
        .catch((error: unknown) =>
          logger.warn({ event: 'wait.sweepFailed', err: error }, 'could not look for waits that are due; trying again'),
        )
        .finally(() => {
          if (!stopped) later();
        });
    }, options.everyMs);
    timer.unref();
  };
  later();
  return {
    sweep,
    async stop() {
      stopped = true;
      timer?.cancel();
      await running;
    },
  };
}
