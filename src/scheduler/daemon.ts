/**
 * `startDaemon`: the scheduler of `fleetbook daemon`. Loads the playbook folder (refusing
 * to start when any playbook is invalid), holds the store lease `scheduler` so one daemon
 * per store fires (another waits as a standby and takes over when the lease expires),
 * reloads on request or when a file of the folder changes, and stops cleanly.
 */
import { watch } from 'node:fs';
import type { Logger } from '../logging/index.js';
import { describeLeaseOwner, newLeaseOwner, type QueueStore, type RunStore } from '../store/index.js';
import { systemClock, type Clock, type Timer } from './clock.js';
import {
  hasErrors,
  isPlaybookFile,
  loadPlaybookFolder,
  type LoadPlaybookOptions,
  type Playbook,
} from '../playbook/index.js';
import { createLeaderLoop, type LeaderLoop } from './leader-loop.js';
import { createScheduler, type Scheduler, type SchedulerOptions } from './scheduler.js';
import { SchedulerError } from './scheduler-error.js';
import { errorMessage } from '../errors/index.js';

export { SCHEDULER_LEASE_KEY } from './leader-loop.js';

/** @default of `DaemonOptions.waitSweepMs`. */
const DEFAULT_WAIT_SWEEP_MS = 15_000;

export interface DaemonOptions {
  /** Folder of playbooks (`*.yaml`, `*.yml`, not recursive). */
  playbooksDir: string;
  /** How often the leader ends due waits (approval timeouts) and resumes their runs. @default 15000 */
  waitSweepMs?: number;
  /** How its playbooks load (the folders `uses:` may also read). @default none */
  loadOptions?: LoadPlaybookOptions;
  store: RunStore;
  logger: Logger;
  /** Starts a scheduled run; `createEngineExecutor` runs it with the engine. */
  execute: SchedulerOptions['execute'];
  /** @default systemClock */
  clock?: Clock;
  /** Jitter source. @default Math.random */
  random?: () => number;
  /** Who holds the lease, as stored. @default a new lease owner (host, pid, random id): a daemon verifiably dead on this host is taken over at once */
  owner?: string;
  /** Scheduler lease time to live; renewed (and a standby retries) every third of it. @default 30000 */
  leaseTtlMs?: number;
  /**
   * Team mode: leadership is this lock of the shared store (`RunQueue.tryLeadership`, held by a
   * connection of its own and dropped by the server when the process dies) instead of the
   * `scheduler` lease. @default the lease
   */
  teamLeadership?: Pick<QueueStore, 'tryLeadership'>;
  /** Reload when a playbook file of the folder changes. @default true */
  watch?: boolean;
  /** Quiet time after the last file change before reloading (editors write in bursts). @default 500 */
  reloadDebounceMs?: number;
}

export interface Daemon {
  readonly owner: string;
  /** True while this daemon holds the scheduler lease and fires. */
  isLeader(): boolean;
  /** Loads the folder again; an invalid folder is logged and the schedules loaded before go on. */
  reload(): Promise<void>;
  /** Stops firing, aborts running runs (they end at a journaled point; the next leader resumes them), releases the lease. */
  stop(): Promise<void>;
  /** Resolves when nothing is under way but runs (tests). */
  idle(): Promise<void>;
}

/** Throws `INVALID_PLAYBOOKS` (exit 2) with every problem in `details.problems` when a playbook is invalid. */
export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  const { store, logger } = options;
  const clock = options.clock ?? systemClock;
  const ttlMs = options.leaseTtlMs ?? 30_000;
  const owner = options.owner ?? newLeaseOwner();
  const log = logger.child({ owner: describeLeaseOwner(owner) });

  const first = loadPlaybookFolder(options.playbooksDir, options.loadOptions);
  if (hasErrors(first.problems))
    throw new SchedulerError(
      `The playbooks of ${first.dir} have errors; the daemon did not start.`,
      'INVALID_PLAYBOOKS',
      { problems: first.problems },
    );
  let playbooks: Playbook[] = first.playbooks;
  const schedules = (books: Playbook[]) => books.flatMap((book) => book.schedules);

  let scheduler: Scheduler | undefined;
  let stopping = false;
  const serial = createSerial(log);

  const loseLead = async (reason = 'another daemon holds the scheduler lease now'): Promise<void> => {
    if (!scheduler) return;
    const current = scheduler;
    scheduler = undefined;
    log.error({ event: 'lease.lost', reason }, `daemon: ${reason}; stopping runs and firing, back to standby`);
    await current.stop({ abortRuns: true });
  };

  const loop: LeaderLoop = createLeaderLoop({
    store,
    log,
    clock,
    owner,
    ttlMs,
    teamLeadership: options.teamLeadership,
    serial,
    stopping: () => stopping,
    leading: () => scheduler !== undefined,
    loseLead,
    async takeLead() {
      // Renewing before each fire: a daemon that lost the lease while paused never fires again.
      const mayFire = async (): Promise<boolean> => {
        const stillHeld = await loop.acquire();
        if (!stillHeld) void serial(() => loseLead());
        return stillHeld;
      };
      scheduler = createScheduler({
        store,
        logger: log,
        clock,
        execute: options.execute,
        mayFire,
        waitSweepMs: options.waitSweepMs ?? DEFAULT_WAIT_SWEEP_MS,
        ...(options.random ? { random: options.random } : {}),
      });
      await scheduler.load(playbooks);
    },
  });

  const reload = (): Promise<void> =>
    serial(async () => {
      if (stopping) return;
      const folder = loadPlaybookFolder(options.playbooksDir, options.loadOptions);
      if (hasErrors(folder.problems))
        return void log.error(
          { event: 'daemon.reloadFailed', problems: folder.problems },
          `daemon: ${folder.dir} has errors; keeping the schedules loaded before`,
        );
      playbooks = folder.playbooks;
      await scheduler?.load(playbooks);
      log.info(
        { event: 'daemon.reloaded', playbooks: playbooks.length, schedules: schedules(playbooks).length },
        `daemon: reloaded ${playbooks.length} playbook(s)`,
      );
    });

  const watcher =
    (options.watch ?? true)
      ? watchPlaybooks(first.dir, clock, options.reloadDebounceMs ?? 500, () => void reload())
      : undefined;

  log.info(
    {
      event: 'daemon.started',
      playbooksDir: first.dir,
      playbooks: playbooks.length,
      schedules: schedules(playbooks).length,
      warnings: first.problems.length,
    },
    `daemon: ${playbooks.length} playbook(s), ${schedules(playbooks).length} schedule(s) from ${first.dir}`,
  );
  await serial(loop.lead);

  return {
    owner,
    isLeader: () => scheduler !== undefined,
    reload,
    async stop() {
      stopping = true;
      loop.cancel();
      watcher?.close();
      await serial(async () => {
        const current = scheduler;
        scheduler = undefined;
        await stopLeading(log, current, loop);
      });
    },
    async idle() {
      await serial.settled();
      await scheduler?.idle();
      await serial.settled();
    },
  };
}

/** Stops the scheduler of a leading daemon (its runs at a journaled point) and lets go of the lead. */
async function stopLeading(log: Logger, scheduler: Scheduler | undefined, loop: LeaderLoop): Promise<void> {
  if (scheduler) {
    log.info(
      { event: 'daemon.stopping', running: scheduler.runningRunIds() },
      'daemon: stopping; running runs are stopped at a journaled point, and the next daemon to lead resumes them',
    );
    await scheduler.stop({ abortRuns: true });
    await loop.release();
  }
  log.info({ event: 'daemon.stopped' }, 'daemon: stopped');
}

interface Serial {
  (step: () => Promise<void>): Promise<void>;
  /** Resolves once the steps queued so far have run. */
  settled(): Promise<void>;
}

/** Runs steps one at a time, in order; a failed step is logged and the next ones still run. */
function createSerial(log: Logger): Serial {
  // Leadership changes, reloads and the stop happen one at a time.
  let chain: Promise<void> = Promise.resolve();
  const serial = (step: () => Promise<void>): Promise<void> => {
    chain = chain.then(step).catch((error: unknown) => {
      log.error({ event: 'daemon.error', err: error }, `daemon: ${errorMessage(error)}`);
    });
    return chain;
  };
  return Object.assign(serial, { settled: () => chain });
}

/** Calls `onChange` once the playbook files of `dir` have been quiet for `debounceMs` after a change (editors write in bursts). */
function watchPlaybooks(dir: string, clock: Clock, debounceMs: number, onChange: () => void): { close(): void } {
  let timer: Timer | undefined;
  const watcher = watch(dir, (_kind, name) => {
    if (name !== null && !isPlaybookFile(name)) return;
    timer?.cancel();
    timer = clock.setTimer(onChange, debounceMs);
  });
  return {
    close() {
      timer?.cancel();
      watcher.close();
    },
  };
}
