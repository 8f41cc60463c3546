/**
 * What the scheduler keeps per schedule in the run store (`getScheduleState`), so a
 * restarted or standby daemon knows what was fired, what is queued and what is paused.
 * The store holds it as opaque JSON; this file is its one reader and writer.
 */
import type { RunStore } from '../store/index.js';

/** The outcome of a schedule's latest run as `fleetbook schedules` shows it. */
export type ScheduleRunResult = 'queued' | 'running' | 'succeeded' | 'failed' | 'interrupted' | 'waiting' | 'cancelled';

export interface ScheduleState {
  /** When the schedule became known to a daemon (or its cron or timezone last changed): nothing before is missed. */
  activeSince: string;
  /** `cron|timezone` as of `activeSince`. */
  fingerprint: string;
  /** Nominal time of the newest fire handled (started, queued or skipped); never moves back. */
  lastFireAt?: string;
  lastRunId?: string;
  lastRunStartedAt?: string;
  lastResult?: ScheduleRunResult;
  /** The newest fire skipped; `code` says when a window (`window`) or a freeze (`freeze`) skipped it. */
  lastSkip?: { scheduledAt: string; reason: string; code?: 'window' | 'freeze' };
  /** Failed runs in a row (interrupted runs do not count either way). */
  consecutiveFailures: number;
  paused: boolean;
  pausedAt?: string;
  /** Who paused the schedule by hand (`fleetbook server`: the token's name); absent when failed runs paused it. */
  pausedBy?: string;
  /** Hash of the playbook when the schedule paused: loading a changed playbook resumes it. */
  pausedPlaybookHash?: string;
  /** Nominal fire times waiting for the running run (overlap `queue`, catch-up `all`), oldest first. */
  queued: string[];
  /**
   * Fires handed to a run that has not ended `succeeded` or `failed`: running, stopped with the
   * daemon (interrupted), or still waiting for the playbook lock (no run record yet). A daemon
   * resumes, or starts again under the same run id, those no live process drives.
   */
  unfinished: UnfinishedFire[];
}

export interface UnfinishedFire {
  runId: string;
  scheduledAt: string;
  /**
   * Times a daemon found the run `running` with no live driver: the process driving it died
   * (killed, or brought down by the run itself). Counted before each resume, so a run that kills
   * every process resuming it is given up after `MAX_RUN_CRASHES`, not resumed forever.
   */
  crashes?: number;
}

/** Crashes of one run after which a daemon marks it failed instead of resuming it again. */
export const MAX_RUN_CRASHES = 3;

export function scheduleFingerprint(schedule: { cron: string; timezone: string }): string {
  return `${schedule.cron}|${schedule.timezone}`;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The stored state, or undefined for a schedule no daemon has seen. Unknown or ill-typed fields are dropped. */
export async function readScheduleState(store: RunStore, key: string): Promise<ScheduleState | undefined> {
  const raw = await store.getScheduleState(key);
  if (raw === undefined) return undefined;
  const results: readonly string[] = ['running', 'succeeded', 'failed', 'interrupted', 'waiting', 'cancelled'];
  const skip = raw.lastSkip as Record<string, unknown> | undefined;
  const state: ScheduleState = {
    activeSince: text(raw.activeSince) ?? new Date(0).toISOString(),
    fingerprint: text(raw.fingerprint) ?? '',
    consecutiveFailures: typeof raw.consecutiveFailures === 'number' ? raw.consecutiveFailures : 0,
    paused: raw.paused === true,
    queued: Array.isArray(raw.queued) ? raw.queued.filter((at): at is string => typeof at === 'string') : [],
    unfinished: Array.isArray(raw.unfinished)
      ? raw.unfinished.flatMap((fire: unknown) => {
          const { runId, scheduledAt, crashes } = (fire ?? {}) as Record<string, unknown>;
          if (typeof runId !== 'string' || typeof scheduledAt !== 'string') return [];
          return [{ runId, scheduledAt, ...(typeof crashes === 'number' && crashes > 0 ? { crashes } : {}) }];
        })
      : [],
  };
  const optional = {
    lastFireAt: text(raw.lastFireAt),
    lastRunId: text(raw.lastRunId),
    lastRunStartedAt: text(raw.lastRunStartedAt),
    pausedAt: text(raw.pausedAt),
    pausedBy: text(raw.pausedBy),
    pausedPlaybookHash: text(raw.pausedPlaybookHash),
  };
  for (const [name, value] of Object.entries(optional))
    if (value !== undefined) Object.assign(state, { [name]: value });
  if (typeof raw.lastResult === 'string' && results.includes(raw.lastResult))
    state.lastResult = raw.lastResult as ScheduleRunResult;
  if (skip && typeof skip.scheduledAt === 'string' && typeof skip.reason === 'string')
    state.lastSkip = {
      scheduledAt: skip.scheduledAt,
      reason: skip.reason,
      ...(skip.code === 'window' || skip.code === 'freeze' ? { code: skip.code } : {}),
    };
  snapshots.set(state, snapshot(state));
  return state;
}

/**
 * What each state object held when it was read or last written, field by field (JSON): a write
 * sends only the fields changed since, so two writers (the daemon, `fleetbook schedules resume`)
 * that read the same state and change different fields both keep their change.
 */
const snapshots = new WeakMap<ScheduleState, Map<string, string>>();

function snapshot(state: ScheduleState): Map<string, string> {
  return new Map(Object.entries(state).map(([name, value]) => [name, JSON.stringify(value)]));
}

/** Writes the fields of `state` changed since it was read (all of them for a state not read), atomically. */
export async function writeScheduleState(store: RunStore, key: string, state: ScheduleState): Promise<void> {
  const before = snapshots.get(state) ?? new Map<string, string>();
  const after = snapshot(state);
  const patch: Record<string, unknown> = {};
  for (const [name, text] of after) if (before.get(name) !== text) patch[name] = JSON.parse(text) as unknown;
  for (const name of before.keys()) if (!after.has(name)) patch[name] = null;
  if (Object.keys(patch).length > 0) await store.patchScheduleState(key, patch);
  snapshots.set(state, after);
}
