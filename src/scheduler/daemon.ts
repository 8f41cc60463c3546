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
  loadPlaybookFolderOffThread,
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
  /** Starts a scheduled run; `createFireDriver` (src/admission) admits and drives it. */
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

/** What the pieces of one daemon share; `scheduler` is set while it leads. */
interface DaemonState {
  options: DaemonOptions;
  log: Logger;
  clock: Clock;
  serial: Serial;
  playbooks: Playbook[];
  scheduler: Scheduler | undefined;
  stopping: boolean;
}

const schedulesOf = (books: Playbook[]) => books.flatMap((book) => book.schedules);

/** The folder's playbooks; `INVALID_PLAYBOOKS` (exit 2) with every problem when one is invalid. */
function loadFolderOrRefuse(options: DaemonOptions): ReturnType<typeof loadPlaybookFolder> {
  const folder = loadPlaybookFolder(options.playbooksDir, options.loadOptions);
  if (hasErrors(folder.problems))
    throw new SchedulerError(
      `The playbooks of ${folder.dir} have errors; the daemon did not start.`,
      'INVALID_PLAYBOOKS',
      { problems: folder.problems },
    );
  return folder;
}

/** The leader loop: leading creates a scheduler of the loaded playbooks, losing the lead stops it. */
function createDaemonLeaderLoop(state: DaemonState, owner: string): LeaderLoop {
  const { options, log, clock, serial } = state;
  const loseLead = async (reason = 'another daemon holds the scheduler lease now'): Promise<void> => {
    const current = state.scheduler;
    if (!current) return;
    state.scheduler = undefined;
    log.error({ event: 'lease.lost', reason }, `daemon: ${reason}; stopping runs and firing, back to standby`);
    await current.stop({ abortRuns: true });
  };
  const loop: LeaderLoop = createLeaderLoop({
    store: options.store,
    log,
    clock,
    owner,
    ttlMs: options.leaseTtlMs ?? 30_000,
    teamLeadership: options.teamLeadership,
    serial,
    stopping: () => state.stopping,
    leading: () => state.scheduler !== undefined,
    loseLead,
    async takeLead() {
      // Renewing before each fire: a daemon that lost the lease while paused never fires again.
      const mayFire = async (): Promise<boolean> => {
        const stillHeld = await loop.acquire();
        if (!stillHeld) void serial(() => loseLead());
        return stillHeld;
      };
      state.scheduler = createScheduler({
        store: options.store,
        logger: log,
        clock,
        execute: options.execute,
        mayFire,
        waitSweepMs: options.waitSweepMs ?? DEFAULT_WAIT_SWEEP_MS,
        ...(options.random ? { random: options.random } : {}),
      });
      await state.scheduler.load(state.playbooks);
    },
  });
  return loop;
}

/** Loads the folder again; an invalid folder is logged and the schedules loaded before go on. */
function createReload(state: DaemonState): () => Promise<void> {
  const { options, log } = state;
  return () =>
    state.serial(async () => {
      if (state.stopping) return;
      // Off the event loop's path: a heavy file dropped into the folder must not stall what
      // shares this process (a server's `/healthz`, the leader loop's renewals).
      const folder = await loadPlaybookFolderOffThread(options.playbooksDir, options.loadOptions);
      if (hasErrors(folder.problems))
        return void log.error(
          { event: 'daemon.reloadFailed', problems: folder.problems },
          `daemon: ${folder.dir} has errors; keeping the schedules loaded before`,
        );
      state.playbooks = folder.playbooks;
      await state.scheduler?.load(state.playbooks);
      log.info(
        { event: 'daemon.reloaded', playbooks: state.playbooks.length, schedules: schedulesOf(state.playbooks).length },
        `daemon: reloaded ${state.playbooks.length} playbook(s)`,
      );
    });
}

/** Throws `INVALID_PLAYBOOKS` (exit 2) with every problem in `details.problems` when a playbook is invalid. */
export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  const clock = options.clock ?? systemClock;
  const owner = options.owner ?? newLeaseOwner();
  const log = options.logger.child({ owner: describeLeaseOwner(owner) });
  const first = loadFolderOrRefuse(options);
  const state: DaemonState = {
    options,
    log,
    clock,
    serial: createSerial(log),
    playbooks: first.playbooks,
    scheduler: undefined,
    stopping: false,
  };
  const { serial } = state;
  const loop = createDaemonLeaderLoop(state, owner);
  const reload = createReload(state);
  const watcher =
    (options.watch ?? true)
      ? watchPlaybooks(first.dir, clock, options.reloadDebounceMs ?? 500, () => void reload())
      : undefined;

  const schedules = schedulesOf(first.playbooks).length;
  log.info(
    {
      event: 'daemon.started',
      playbooksDir: first.dir,
      playbooks: first.playbooks.length,
      schedules,
      warnings: first.problems.length,
    },
    `daemon: ${first.playbooks.length} playbook(s), ${schedules} schedule(s) from ${first.dir}`,
  );
  await serial(loop.lead);

  return {
    owner,
    isLeader: () => state.scheduler !== undefined,
    reload,
    async stop() {
      state.stopping = true;
      loop.cancel();
      watcher?.close();
      await serial(async () => {
        const current = state.scheduler;
        state.scheduler = undefined;
        await stopLeading(log, current, loop);
      });
    },
    async idle() {
      await serial.settled();
      await state.scheduler?.idle();
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
