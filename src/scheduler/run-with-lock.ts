/**
 * `runPlaybookWithLock`: `runPlaybook` under the playbook's concurrency key. A playbook with
 * `lock: ${{ inputs.systemId }}` renders the key from the run's inputs, and the run holds the
 * store lease `lock:<key>` from before its first step to its end, renewed on a timer. The
 * CLI's `fleetbook run` and the daemon both start runs through here (and `fleetbook resume`
 * continues them through `resumeRunWithLock`), so a manual run and a scheduled one with the same
 * key never run at once, whichever process starts them.
 */
import { randomUUID } from 'node:crypto';
import {
  exposedEnvironment,
  readSpilledInputs,
  resolveInputs,
  resumeRun,
  runPlaybook,
  type ResumeOptions,
  type RunOptions,
  type RunResult,
} from '../engine/index.js';
import { createSecretRegistry } from '../logging/index.js';
import type { Playbook } from '../playbook/index.js';
import { systemClock, type Clock } from './clock.js';
import { SchedulerError } from './scheduler-error.js';

export interface LockOptions {
  /** Wait for a held lock (scheduled runs) instead of refusing with `LOCK_HELD` (manual runs). @default false */
  waitForLock?: boolean;
  /** How often a waiting run tries the lock again. @default 5000 */
  lockPollMs?: number;
  /** Lease time to live; renewed every third of it. @default 60000 */
  lockTtlMs?: number;
  /** @default systemClock */
  clock?: Clock;
}

/** The rendered concurrency key of a run of `playbook` with `inputs`, or undefined when it has none. */
export async function renderLockKey(
  playbook: Playbook,
  inputs: Record<string, unknown>,
  run: { id: string; dryRun: boolean; env: Record<string, string | undefined> },
): Promise<string | undefined> {
  if (!playbook.lock) return undefined;
  const resolved = resolveInputs(playbook.inputs, inputs, playbook.name);
  const value = await playbook.lock.evaluate({
    inputs: resolved.values,
    steps: {},
    run: { id: run.id, playbook: playbook.name, dryRun: run.dryRun, startedAt: new Date().toISOString() },
    // What the run's steps see (FLEETBOOK_VAR_* only): a key must not read the rest of the environment either.
    env: exposedEnvironment(run.env, createSecretRegistry()),
  });
  if (value === undefined || value === null || value === '') return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const onAbort = (): void => {
      timer.cancel();
      reject(signal.reason as Error);
    };
    const timer = clock.setTimer(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs `playbook` holding its lock. A dry run sends no write and takes no lock. Throws
 * `LOCK_HELD` when another run holds the key and `waitForLock` is false; if the lease is
 * lost mid-run (the store was unreachable for a whole TTL), the run is aborted and ends
 * `interrupted`, resumable.
 */
export async function runPlaybookWithLock(playbook: Playbook, options: RunOptions & LockOptions): Promise<RunResult> {
  const runId = options.runId ?? randomUUID();
  const dryRun = options.dryRun ?? false;
  const key = dryRun
    ? undefined
    : await renderLockKey(playbook, options.inputs ?? {}, { id: runId, dryRun, env: options.env ?? process.env });
  if (key === undefined) return runPlaybook(playbook, { ...options, runId });
  return holdingLock(playbook, key, runId, options, (signal) => runPlaybook(playbook, { ...options, runId, signal }));
}

/**
 * Resumes a run holding its playbook's lock, the key rendered from the run's stored inputs (and
 * the secret ones given again), as `runPlaybookWithLock` does for a new run: a resume must not
 * drive systems that another run holds. The lease is held by the run's id, so the run's own
 * lock left by a killed process is taken again at once.
 */
export async function resumeRunWithLock(playbook: Playbook, options: ResumeOptions & LockOptions): Promise<RunResult> {
  const run = await options.store.getRun(options.runId);
  // An unknown run, or one without a lock, is left to resumeRun (which refuses the unknown one).
  const key =
    run === undefined || run.dryRun
      ? undefined
      : await renderLockKey(
          playbook,
          { ...(await readSpilledInputs(run.inputs)), ...options.secretInputs },
          { id: run.id, dryRun: run.dryRun, env: options.env ?? process.env },
        );
  if (key === undefined) return resumeRun(playbook, options);
  return holdingLock(playbook, key, options.runId, options, (signal) => resumeRun(playbook, { ...options, signal }));
}

/** Runs `task` holding the lease `lock:<key>` for `runId`, renewed while it runs; see `runPlaybookWithLock`. */
async function holdingLock(
  playbook: Playbook,
  key: string,
  runId: string,
  options: LockOptions & Pick<RunOptions, 'store' | 'logger' | 'signal'>,
  task: (signal: AbortSignal) => Promise<RunResult>,
): Promise<RunResult> {
  const { store, logger } = options;
  const clock = options.clock ?? systemClock;
  const ttlMs = options.lockTtlMs ?? 60_000;
  const leaseKey = `lock:${key}`;
  const signal = options.signal ?? new AbortController().signal;
  let waitingLogged = false;
  while (!(await store.acquireLease(leaseKey, runId, ttlMs))) {
    // Lock leases are held by run ids.
    const heldBy = (await store.leaseHolder(leaseKey))?.owner ?? 'another run';
    if (!options.waitForLock) {
      throw new SchedulerError(
        `Run ${heldBy} holds lock '${key}'; this run did not start. Try again when it has ended (fleetbook runs show ${heldBy}).`,
        'LOCK_HELD',
        { lock: key, heldBy },
      );
    }
    if (!waitingLogged)
      logger.info(
        { event: 'lock.waiting', lock: key, runId, heldBy, playbook: playbook.name },
        `run ${runId} waits for lock '${key}', held by run ${heldBy}`,
      );
    waitingLogged = true;
    await sleep(clock, options.lockPollMs ?? 5000, signal);
  }

  const controller = new AbortController();
  const forward = (): void => controller.abort(signal.reason);
  if (signal.aborted) forward();
  else signal.addEventListener('abort', forward, { once: true });
  // A renewal in flight when the run ends must neither re-arm nor take the released lease again.
  let finished = false;
  let renewal = clock.setTimer(function renew() {
    if (finished) return;
    store.acquireLease(leaseKey, runId, ttlMs).then(
      (held) => {
        if (finished) return;
        if (held) {
          renewal = clock.setTimer(renew, ttlMs / 3);
          return;
        }
        logger.error(
          { event: 'lock.lost', lock: key, runId },
          `run ${runId} lost lock '${key}' to another run; stopping it (it stays resumable)`,
        );
        controller.abort(new SchedulerError(`lost lock '${key}'`, 'LOCK_LOST'));
      },
      (error: unknown) => {
        if (finished) return;
        logger.warn(
          { event: 'lock.renewFailed', lock: key, runId, err: error },
          `could not renew lock '${key}'; trying again`,
        );
        renewal = clock.setTimer(renew, ttlMs / 3);
      },
    );
  }, ttlMs / 3);
  try {
    return await task(controller.signal);
  } finally {
    finished = true;
    renewal.cancel();
    signal.removeEventListener('abort', forward);
    await store.releaseLease(leaseKey, runId);
  }
}
