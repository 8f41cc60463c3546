/**
 * Who holds a run's lease, and when that holder is known to be gone. A lease owner is JSON:
 * a random id per acquisition (two resumes in one process are two owners), the host name,
 * the pid, and a key of the pid's namespace (boot id and pid namespace): a pid means the same
 * process only to a reader in the same namespace, so a container with the same host name but
 * its own pids never judges another's process dead.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import type { RunStore } from './types.js';

export interface LeaseOwner {
  /** Unique per acquisition. */
  id: string;
  host: string;
  pid: number;
  /** Boot id and pid namespace of the process ('' where the platform tells neither). */
  pidSpace: string;
}

/** The lease key of a run: the one lease that lets a process drive it. */
export const runLeaseKey = (runId: string): string => `run:${runId}`;

function readOr(read: () => string): string {
  try {
    return read().trim();
  } catch {
    return '';
  }
}

let ownPidSpace: string | undefined;
function pidSpace(): string {
  ownPidSpace ??= [
    readOr(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8')),
    readOr(() => readlinkSync('/proc/self/ns/pid')),
  ].join('/');
  return ownPidSpace;
}

/** A new owner identity for this process, as the text stored with the lease. */
export function newLeaseOwner(): string {
  const owner: LeaseOwner = { id: randomUUID(), host: hostname(), pid: process.pid, pidSpace: pidSpace() };
  return JSON.stringify(owner);
}

/** The owner a lease names, or undefined for one written otherwise (an older Fleetbook's `host:pid:nonce`). */
export function parseLeaseOwner(text: string): LeaseOwner | undefined {
  try {
    const value = JSON.parse(text) as Partial<LeaseOwner> | null;
    if (
      value &&
      typeof value.id === 'string' &&
      typeof value.host === 'string' &&
      Number.isInteger(value.pid) &&
      typeof value.pidSpace === 'string'
    )
      return value as LeaseOwner;
  } catch {
    // Not ours to judge: it keeps its lease until it expires.
  }
  return undefined;
}

/**
 * Whether the process that holds `ownerText` is verifiably gone: same host, same pid space
 * (known, not empty), and no process with its pid. Anything less (another host, an owner of
 * an unknown form, a pid that is alive, maybe reused) is not proof: the lease must expire.
 */
export function isDeadLeaseOwner(ownerText: string): boolean {
  const owner = parseLeaseOwner(ownerText);
  if (!owner || owner.host !== hostname() || owner.pidSpace === '/' || owner.pidSpace !== pidSpace()) return false;
  if (owner.pid === process.pid) return false;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Takes `key` for `owner`: free, expired or already `owner`'s (a renewal), or held by a process
 * verifiably dead on this host, which is taken over at once rather than after the TTL.
 */
export async function acquireLeaseFromLiveOrDead(
  store: Pick<RunStore, 'acquireLease' | 'leaseHolder' | 'releaseLease'>,
  key: string,
  owner: string,
  ttlMs: number,
): Promise<boolean> {
  if (await store.acquireLease(key, owner, ttlMs)) return true;
  const holder = await store.leaseHolder(key);
  if (holder && !isDeadLeaseOwner(holder.owner)) return false;
  // Released by the dead owner's name: if another process took it meanwhile, this is a no-op.
  if (holder) await store.releaseLease(key, holder.owner);
  return store.acquireLease(key, owner, ttlMs);
}

/** `host:pid` (and the id's first characters) of an owner, for logs; another form as it is. */
export function describeLeaseOwner(ownerText: string): string {
  const owner = parseLeaseOwner(ownerText);
  return owner ? `${owner.host}:${owner.pid}:${owner.id.slice(0, 8)}` : ownerText;
}

/** How long a run's lease lasts without renewal; its driver renews it at a third of that (its heartbeat). */
export const RUN_LEASE_TTL_MS = 60_000;

/**
 * When the live driver of a run last renewed its lease (ms since the epoch), or undefined when
 * it has none: a lease is taken for RUN_LEASE_TTL_MS, so it was renewed that long before it expires.
 */
export async function lastHeartbeatMs(
  store: Pick<RunStore, 'leaseHolder'>,
  runId: string,
): Promise<number | undefined> {
  const holder = await store.leaseHolder(runLeaseKey(runId));
  return holder === undefined || isDeadLeaseOwner(holder.owner)
    ? undefined
    : Date.parse(holder.expiresAt) - RUN_LEASE_TTL_MS;
}

/**
 * Whether a run the store says is `running` has a live driver: its lease is held, and not by a
 * process verifiably dead. A run without one crashed (or was killed) and waits for a resume.
 */
export async function hasLiveDriver(store: Pick<RunStore, 'leaseHolder'>, runId: string): Promise<boolean> {
  const holder = await store.leaseHolder(runLeaseKey(runId));
  return holder !== undefined && !isDeadLeaseOwner(holder.owner);
}
