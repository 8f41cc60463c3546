/**
 * The daemon's hold on the lead: the store lease `scheduler` (or, in team mode, the shared
 * store's leadership lock) taken or renewed every third of its TTL. A standby keeps trying and
 * takes over when the lease expires; a leader that cannot renew before its lease runs out, or
 * finds it taken, gives up the lead. `startDaemon` decides what leading means.
 */
import { errorMessage } from '../errors/index.js';
import type { Logger } from '../logging/index.js';
import {
  acquireLeaseFromLiveOrDead,
  describeLeaseOwner,
  type Leadership,
  type QueueStore,
  type RunStore,
} from '../store/index.js';
import type { Clock, Timer } from './clock.js';

/** The store lease one daemon per store holds. */
export const SCHEDULER_LEASE_KEY = 'scheduler';

export interface LeaderLoopOptions {
  store: RunStore;
  log: Logger;
  clock: Clock;
  owner: string;
  ttlMs: number;
  /** Team mode: the shared store's leadership lock instead of the lease. */
  teamLeadership?: Pick<QueueStore, 'tryLeadership'> | undefined;
  /** Runs the loop's turns one at a time with the daemon's other changes (reloads, the stop). */
  serial(step: () => Promise<void>): Promise<void>;
  stopping(): boolean;
  /** Whether this process leads now. */
  leading(): boolean;
  /** Called once the lead is taken (after the loop logged it). */
  takeLead(): Promise<void>;
  /** Gives up the lead (stops firing and the runs); `reason` is logged. */
  loseLead(reason?: string): Promise<void>;
}

export interface LeaderLoop {
  /** Takes, renews or gives up the lead; whatever happens, tries again in a third of the TTL. */
  lead(): Promise<void>;
  /** Takes or renews the lease (or the team lock), noting until when it is held. */
  acquire(): Promise<boolean>;
  /** Stops trying again. */
  cancel(): void;
  /** Lets go of the lease and the team lock. */
  release(): Promise<void>;
}

export function createLeaderLoop(options: LeaderLoopOptions): LeaderLoop {
  const { store, log, clock, owner, ttlMs, teamLeadership } = options;
  let timer: Timer | undefined;
  let standbyLogged = false;
  let leadership: Leadership | undefined;
  // When the lease this daemon last renewed runs out: past it, another daemon may lead.
  let heldUntilMs = 0;

  /** Holds the team leadership lock (taking it when free), or drops a connection that lost it. */
  const holdTeamLeadership = async (team: Pick<QueueStore, 'tryLeadership'>): Promise<boolean> => {
    if (leadership && (await leadership.stillHeld())) return true;
    if (leadership) await leadership.release();
    leadership = await team.tryLeadership(SCHEDULER_LEASE_KEY);
    return leadership !== undefined;
  };

  const acquire = async (): Promise<boolean> => {
    const askedAtMs = clock.now();
    const held = teamLeadership
      ? await holdTeamLeadership(teamLeadership)
      : await acquireLeaseFromLiveOrDead(store, SCHEDULER_LEASE_KEY, owner, ttlMs);
    if (held) heldUntilMs = askedAtMs + ttlMs;
    return held;
  };

  const leadOnce = async (): Promise<void> => {
    const held = await acquire();
    if (held && !options.leading() && !options.stopping()) {
      log.info(
        { event: 'lease.acquired', takeover: standbyLogged },
        standbyLogged
          ? 'daemon: the scheduler lease expired or was released; taking over'
          : 'daemon: holding the scheduler lease; firing schedules',
      );
      standbyLogged = false;
      await options.takeLead();
    } else if (!held && options.leading()) {
      await options.loseLead();
    } else if (!held && !standbyLogged) {
      standbyLogged = true;
      const holder = await store.leaseHolder(SCHEDULER_LEASE_KEY);
      log.info(
        { event: 'lease.standby', leaseTtlMs: ttlMs, heldBy: holder && describeLeaseOwner(holder.owner) },
        `daemon: daemon ${holder ? describeLeaseOwner(holder.owner) : '(another)'} holds the scheduler lease; waiting as a standby, taking over when it expires`,
      );
    }
  };

  const lead = async (): Promise<void> => {
    if (options.stopping()) return;
    try {
      await leadOnce();
    } catch (error) {
      // The store failed: a standby must keep trying, and a leader keeps leading only while its
      // last renewal lasts (a standby may take the lease once it expires).
      const leader = options.leading();
      const expired = clock.now() >= heldUntilMs;
      log.warn(
        { event: 'lease.renewFailed', err: error, leader, expired },
        `daemon: could not ${leader ? 'renew' : 'take'} the scheduler lease: ${errorMessage(error)}; trying again`,
      );
      if (leader && expired) await options.loseLead('the scheduler lease expired before it could be renewed');
    } finally {
      if (!options.stopping()) {
        timer?.cancel();
        timer = clock.setTimer(() => void options.serial(lead), ttlMs / 3);
      }
    }
  };

  return {
    lead,
    acquire,
    cancel: () => timer?.cancel(),
    async release() {
      await store.releaseLease(SCHEDULER_LEASE_KEY, owner);
      await leadership?.release();
    },
  };
}
