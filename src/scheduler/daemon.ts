/**
 * `startDaemon`: the scheduler of `fleetbook daemon`. Loads the playbook folder (refusing
 * to start when any playbook is invalid), holds the store lease `scheduler` so one daemon
 * per store fires (another waits as a standby and takes over when the lease expires),
 * reloads on request or when a file of the folder changes, and stops cleanly.
 */
import { watch, type FSWatcher } from 'node:fs';
import type { Logger } from '../logging/index.js';
import { acquireLeaseFromLiveOrDead, describeLeaseOwner, newLeaseOwner, type Leadership, type QueueStore, type RunStore } from '../store/index.js';
import { systemClock, type Clock, type Timer } from './clock.js';
import { isPlaybookFile, loadPlaybookFolder, type Playbook } from '../playbook/index.js';
import { createScheduler, type Scheduler, type SchedulerOptions } from './scheduler.js';
import { SchedulerError } from './scheduler-error.js';
import { errorMessage } from '../errors/index.js';

/** The store lease one daemon per store holds. */
export const SCHEDULER_LEASE_KEY = 'scheduler';

export interface DaemonOptions {
  /** Folder of playbooks (`*.yaml`, `*.yml`, not recursive). */
  playbooksDir: string;
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

  const first = loadPlaybookFolder(options.playbooksDir);
  if (first.problems.some((problem) => problem.severity === 'error')) {
    throw new SchedulerError(`The playbooks of ${first.dir} have errors; the daemon did not start.`, 'INVALID_PLAYBOOKS', { problems: first.problems });
  }
  let playbooks: Playbook[] = first.playbooks;
  const schedules = (books: Playbook[]) => books.flatMap((book) => book.schedules);

  let scheduler: Scheduler | undefined;
  let standbyLogged = false;
  let stopping = false;
  let leaseTimer: Timer | undefined;
  let reloadTimer: Timer | undefined;
  let watcher: FSWatcher | undefined;
  // Leadership changes, reloads and the stop happen one at a time.
  let chain: Promise<void> = Promise.resolve();
  const serial = (step: () => Promise<void>): Promise<void> => {
    chain = chain.then(step).catch((error: unknown) => {
      log.error({ event: 'daemon.error', err: error }, `daemon: ${errorMessage(error)}`);
    });
    return chain;
  };

  // When the lease this daemon last renewed runs out: past it, another daemon may lead.
  let heldUntilMs = 0;

  const loseLead = async (reason = 'another daemon holds the scheduler lease now'): Promise<void> => {
    if (!scheduler) return;
    const current = scheduler;
    scheduler = undefined;
    log.error({ event: 'lease.lost', reason }, `daemon: ${reason}; stopping runs and firing, back to standby`);
    await current.stop({ abortRuns: true });
  };

  let leadership: Leadership | undefined;
  /** Holds the team leadership lock (taking it when free), or drops a connection that lost it. */
  const holdTeamLeadership = async (team: Pick<QueueStore, 'tryLeadership'>): Promise<boolean> => {
    if (leadership && (await leadership.stillHeld())) return true;
    if (leadership) await leadership.release();
    leadership = await team.tryLeadership(SCHEDULER_LEASE_KEY);
    return leadership !== undefined;
  };

  /** Takes or renews the lease (or the team lock), noting until when it is held. */
  const acquire = async (): Promise<boolean> => {
    const askedAtMs = clock.now();
    const held = options.teamLeadership ? await holdTeamLeadership(options.teamLeadership) : await acquireLeaseFromLiveOrDead(store, SCHEDULER_LEASE_KEY, owner, ttlMs);
    if (held) heldUntilMs = askedAtMs + ttlMs;
    return held;
  };

  /** Takes, renews or gives up the lease; whatever happens, tries again in a third of its TTL. */
  const lead = async (): Promise<void> => {
    if (stopping) return;
    try {
      await leadOnce();
    } catch (error) {
      // The store failed: a standby must keep trying, and a leader keeps leading only while its
      // last renewal lasts (a standby may take the lease once it expires).
      const expired = clock.now() >= heldUntilMs;
      log.warn(
        { event: 'lease.renewFailed', err: error, leader: scheduler !== undefined, expired },
        `daemon: could not ${scheduler ? 'renew' : 'take'} the scheduler lease: ${errorMessage(error)}; trying again`,
      );
      if (scheduler && expired) await loseLead('the scheduler lease expired before it could be renewed');
    } finally {
      if (!stopping) {
        leaseTimer?.cancel();
        leaseTimer = clock.setTimer(() => void serial(lead), ttlMs / 3);
      }
    }
  };

  const leadOnce = async (): Promise<void> => {
    const held = await acquire();
    if (held && !scheduler && !stopping) {
      log.info({ event: 'lease.acquired', takeover: standbyLogged }, standbyLogged ? 'daemon: the scheduler lease expired or was released; taking over' : 'daemon: holding the scheduler lease; firing schedules');
      standbyLogged = false;
      scheduler = createScheduler({
        store,
        logger: log,
        clock,
        execute: options.execute,
        ...(options.random ? { random: options.random } : {}),
        // Renewing before each fire: a daemon that lost the lease while paused never fires again.
        mayFire: async () => {
          const stillHeld = await acquire();
          if (!stillHeld) void serial(() => loseLead());
          return stillHeld;
        },
      });
      await scheduler.load(playbooks);
    } else if (!held && scheduler) {
      await loseLead();
    } else if (!held && !standbyLogged) {
      standbyLogged = true;
      const holder = await store.leaseHolder(SCHEDULER_LEASE_KEY);
      log.info(
        { event: 'lease.standby', leaseTtlMs: ttlMs, heldBy: holder && describeLeaseOwner(holder.owner) },
        `daemon: daemon ${holder ? describeLeaseOwner(holder.owner) : '(another)'} holds the scheduler lease; waiting as a standby, taking over when it expires`,
      );
    }
  };

  const reload = (): Promise<void> =>
    serial(async () => {
      if (stopping) return;
      const folder = loadPlaybookFolder(options.playbooksDir);
      if (folder.problems.some((problem) => problem.severity === 'error')) {
        log.error({ event: 'daemon.reloadFailed', problems: folder.problems }, `daemon: ${folder.dir} has errors; keeping the schedules loaded before`);
        return;
      }
      playbooks = folder.playbooks;
      await scheduler?.load(playbooks);
      log.info({ event: 'daemon.reloaded', playbooks: playbooks.length, schedules: schedules(playbooks).length }, `daemon: reloaded ${playbooks.length} playbook(s)`);
    });

  if (options.watch ?? true) {
    watcher = watch(first.dir, (_kind, name) => {
      if (name !== null && !isPlaybookFile(name)) return;
      reloadTimer?.cancel();
      reloadTimer = clock.setTimer(() => void reload(), options.reloadDebounceMs ?? 500);
    });
  }

  log.info(
    { event: 'daemon.started', playbooksDir: first.dir, playbooks: playbooks.length, schedules: schedules(playbooks).length, warnings: first.problems.length },
    `daemon: ${playbooks.length} playbook(s), ${schedules(playbooks).length} schedule(s) from ${first.dir}`,
  );
  await serial(lead);

  return {
    owner,
    isLeader: () => scheduler !== undefined,
    reload,
    async stop() {
      stopping = true;
      leaseTimer?.cancel();
      reloadTimer?.cancel();
      watcher?.close();
      await serial(async () => {
        const current = scheduler;
        scheduler = undefined;
        if (current) {
          log.info({ event: 'daemon.stopping', running: current.runningRunIds() }, 'daemon: stopping; running runs are stopped at a journaled point, and the next daemon to lead resumes them');
          await current.stop({ abortRuns: true });
          await store.releaseLease(SCHEDULER_LEASE_KEY, owner);
          await leadership?.release();
        }
        log.info({ event: 'daemon.stopped' }, 'daemon: stopped');
      });
    },
    async idle() {
      await chain;
      await scheduler?.idle();
      await chain;
    },
  };
}
