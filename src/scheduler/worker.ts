/**
 * `runWorker`: a worker of team mode. It claims queued runs from the shared store (up to
 * `concurrency` at once), holds each claim (a lease with a fencing token) by renewing it, and
 * drives the run with the engine's `resumeRun` through the store's fenced view: a first claim
 * starts the run from the top, a claim taken over from a worker presumed dead continues it from
 * the journal, reconciling writes of unknown outcome exactly as `fleetbook resume` does.
 *
 * Draining (the `signal`, SIGTERM in the CLI): no new claim; the runs in flight are aborted,
 * stop at a journaled point (`interrupted`) and go back to `queued` for another worker.
 */
import { randomUUID } from 'node:crypto';
import type { PlatformClient } from '../api/index.js';
import {
  describeWait,
  endDueWaits,
  runEnvironmentOf,
  type ResumeOptions,
  type RunEnvironment,
} from '../engine/index.js';
import { errorMessage, FleetbookError } from '../errors/index.js';
import type { Logger, SecretRegistry } from '../logging/index.js';
import type { Notifications } from '../notifications/index.js';
import type { Playbook } from '../playbook/index.js';
import {
  describeLeaseOwner,
  runLeaseKey,
  RunStatus,
  type ErrorRecord,
  type QueueStore,
  type RunClaim,
  type RunRecord,
  type RunStore,
} from '../store/index.js';
import { systemClock, type Clock, type Timer } from './clock.js';
import { resumeRunWithLock } from './run-with-lock.js';
import { startGateOfRun } from './window-check.js';

export interface WorkerOptions extends RunEnvironment {
  store: QueueStore;
  client: PlatformClient;
  logger: Logger;
  secrets: SecretRegistry;
  /** The playbook a run was queued with, loaded from its source (a problem is thrown, and fails the run). */
  loadPlaybook(run: RunRecord): Playbook;
  /** The run's secret inputs, from this worker's environment (never stored); throws what is missing. */
  secretInputsOf(run: RunRecord): Record<string, unknown>;
  /** Runs driven at once. @default 1 */
  concurrency?: number;
  /** How long a claim lasts unless renewed (every third of it): a dead worker's run is taken over after it. @default 60000 */
  claimTtlMs?: number;
  /** How often an idle worker looks at the queue. @default 1000 */
  pollMs?: number;
  /**
   * How often the worker ends the waits whose time came (approval timeouts, window ends), so
   * their runs go back to the queue: every worker sweeps, the store lets one end each wait. @default 15000
   */
  waitSweepMs?: number;
  /** Aborting drains the worker (see the module comment). */
  signal?: AbortSignal;
  /** Stop once the queue is empty and nothing is in flight (tests, benchmarks, one-shot jobs). @default false */
  exitWhenIdle?: boolean;
  env?: Record<string, string | undefined>;
  clock?: Clock;
  /**
   * Notifications of the runs' ends: recorded with each end by the playbook's rules and sent when
   * the run is over (a failed send is left to the outbox sweep). @default none
   */
  notifications?: Pick<Notifications, 'hookFor' | 'deliver'>;
}

export interface WorkerSummary {
  /** Runs that ended (succeeded, failed) on this worker. */
  finished: number;
  /** Runs put back in the queue by draining. */
  requeued: number;
}

function toError(caught: unknown): ErrorRecord {
  if (caught instanceof FleetbookError)
    return { message: caught.message, ...(caught.code ? { code: caught.code } : {}) };
  return { message: errorMessage(caught) };
}

/**
 * Resolves after `ms`, at once when `signal` aborts, or when one of `also` settles; the timer
 * is cancelled then, so a finished worker is not kept alive by a wait it no longer needs.
 */
async function pause(
  clock: Clock,
  ms: number,
  signal: AbortSignal,
  also: Iterable<Promise<unknown>> = [],
): Promise<void> {
  if (signal.aborted) return;
  let timer: Timer | undefined;
  let onAbort: (() => void) | undefined;
  const elapsed = new Promise<void>((resolve) => {
    timer = clock.setTimer(resolve, ms);
    onAbort = resolve;
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([
      elapsed,
      ...[...also].map((promise) =>
        promise.then(
          () => undefined,
          () => undefined,
        ),
      ),
    ]);
  } finally {
    timer?.cancel();
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/** What the pieces of one worker share. */
interface WorkerContext {
  options: WorkerOptions;
  store: QueueStore;
  logger: Logger;
  clock: Clock;
  ttlMs: number;
  /** Aborted: the worker drains. */
  drain: AbortSignal;
  summary: WorkerSummary;
  /** This worker's name in the claims it takes. */
  owner: string;
}

/** Renews the claim every third of its TTL; a refused renewal (taken over) aborts the run. */
function holdClaim(worker: WorkerContext, claim: RunClaim, lost: AbortController): () => void {
  const { store, logger, clock, ttlMs } = worker;
  let timer: Timer | undefined;
  let stopped = false;
  const renew = (): void => {
    store.renewClaim(claim.run.id, claim.fence, ttlMs).then(
      (held) => {
        if (stopped) return;
        if (!held) {
          logger.error(
            { event: 'claim.lost', runId: claim.run.id, fence: claim.fence },
            `run ${claim.run.id}: this worker's claim was taken over; stopping it`,
          );
          lost.abort(new FleetbookError(`the claim of run ${claim.run.id} was taken over`, { code: 'CLAIM_LOST' }));
          return;
        }
        timer = clock.setTimer(renew, ttlMs / 3);
      },
      (error: unknown) => {
        if (stopped) return;
        logger.warn(
          { event: 'claim.renewFailed', runId: claim.run.id, err: error },
          `could not renew the claim of run ${claim.run.id}; trying again`,
        );
        timer = clock.setTimer(renew, ttlMs / 3);
      },
    );
  };
  timer = clock.setTimer(renew, ttlMs / 3);
  return () => {
    stopped = true;
    timer?.cancel();
  };
}

/**
 * The run lease of a worker whose claim lapsed (presumed dead) would keep the engine out until
 * it lapses too; that worker's writes are fenced off now, so the lease protects nothing any more.
 */
async function releaseLapsedDriver(worker: WorkerContext, claim: RunClaim, runLogger: Logger): Promise<void> {
  if (claim.previousOwner === undefined) return;
  runLogger.warn(
    { event: 'claim.takenOver', previousOwner: claim.previousOwner },
    `run ${claim.run.id}: taking over from a worker whose claim lapsed`,
  );
  const holder = await worker.store.leaseHolder(runLeaseKey(claim.run.id));
  if (holder) await worker.store.releaseLease(runLeaseKey(claim.run.id), holder.owner);
}

/** The run's playbook and secret inputs, or undefined once the run is failed for want of them. */
async function loadRun(
  worker: WorkerContext,
  run: RunRecord,
  view: RunStore,
  runLogger: Logger,
): Promise<{ playbook: Playbook; secretInputs: Record<string, unknown> } | undefined> {
  try {
    return { playbook: worker.options.loadPlaybook(run), secretInputs: worker.options.secretInputsOf(run) };
  } catch (caught) {
    runLogger.error(
      { event: 'run.unstartable', error: toError(caught) },
      `run ${run.id} cannot be started here: ${toError(caught).message}`,
    );
    await view.setRunStatus(run.id, RunStatus.failed, { error: toError(caught) });
    worker.summary.finished += 1;
    return undefined;
  }
}

/** The claimed run as its holder sees it: its log lines and its fenced view of the store. */
interface ClaimedRun {
  claim: RunClaim;
  runLogger: Logger;
  view: RunStore;
}

/** Drives a claimed run to its end, or back to the queue when the worker drains. */
async function driveRun(
  worker: WorkerContext,
  { claim, runLogger, view }: ClaimedRun,
  signal: AbortSignal,
): Promise<void> {
  const { options, store, drain, summary } = worker;
  const { run, fence } = claim;
  await releaseLapsedDriver(worker, claim, runLogger);
  const loaded = await loadRun(worker, run, view, runLogger);
  if (!loaded) return;
  const journaled = (await store.journal(run.id)).length > 0;
  const resumeOptions: ResumeOptions = {
    runId: run.id,
    secretInputs: loaded.secretInputs,
    client: options.client,
    store: view,
    logger: runLogger,
    secrets: options.secrets,
    signal,
    env: options.env ?? process.env,
    ...runEnvironmentOf(options),
    leaseTtlMs: worker.ttlMs,
    // Its playbook's and schedule's windows, or none if it was started with --ignore-window.
    startGate: startGateOfRun(loaded.playbook, run),
    // A first claim starts the run; a run with a journal (taken over, or requeued by a drain) is resumed.
    countAsResume: journaled,
    ...(options.notifications ? { notify: options.notifications.hookFor(loaded.playbook.notify) } : {}),
  };
  runLogger.info(
    { event: journaled ? 'run.resuming' : 'run.claimed', owner: describeLeaseOwner(worker.owner) },
    `run ${run.id} of ${run.playbook} ${journaled ? 'resumed' : 'started'} by this worker`,
  );
  const result = await resumeRunWithLock(loaded.playbook, resumeOptions);
  if (result.status === RunStatus.interrupted && drain.aborted && result.error?.code !== 'LEASE_LOST') {
    if (await store.requeueRun(run.id, fence)) {
      summary.requeued += 1;
      runLogger.info(
        { event: 'run.requeued' },
        `run ${run.id} stopped at a journaled point and went back to the queue`,
      );
    }
    return;
  }
  summary.finished += 1;
  await options.notifications?.deliver({ runId: run.id });
}

/** `driveRun` under the claim: renewed meanwhile, and a refusal of the engine fails the run. */
async function drive(worker: WorkerContext, claim: RunClaim): Promise<void> {
  const { drain } = worker;
  const claimed: ClaimedRun = {
    claim,
    runLogger: worker.logger.child({ runId: claim.run.id, playbook: claim.run.playbook, fence: claim.fence }),
    view: worker.store.fenced(claim.run.id, claim.fence),
  };
  const controller = new AbortController();
  const forward = (): void => controller.abort(drain.reason);
  if (drain.aborted) forward();
  else drain.addEventListener('abort', forward, { once: true });
  const stopRenewing = holdClaim(worker, claim, controller);
  try {
    await driveRun(worker, claimed, controller.signal);
  } catch (caught) {
    const error = toError(caught);
    claimed.runLogger.error(
      { event: 'run.refused', error },
      `run ${claim.run.id} could not be driven: ${error.message}`,
    );
    // A refusal of the engine (changed playbook, a write of unknown outcome it cannot reconcile)
    // fails the run rather than leave it to be claimed again and again; a lost claim writes nothing.
    if (error.code !== 'STALE_FENCE' && error.code !== 'STORE_UNAVAILABLE')
      await claimed.view.setRunStatus(claim.run.id, RunStatus.failed, { error }).catch(() => undefined);
  } finally {
    stopRenewing();
    drain.removeEventListener('abort', forward);
  }
}

/**
 * A sweep of the waits whose timeout or end passed, at most every `waitSweepMs`: their runs are
 * queued again, for this worker or another.
 */
function createWaitSweep(worker: WorkerContext, waitSweepMs: number): () => Promise<void> {
  const { store, logger, clock } = worker;
  let nextSweepMs = clock.now();
  return async () => {
    if (clock.now() < nextSweepMs) return;
    nextSweepMs = clock.now() + waitSweepMs;
    try {
      for (const { run, wait } of await endDueWaits(store, clock.now))
        logger.info(
          { event: 'wait.ended', runId: run.id, wait },
          `run ${run.id}: ${describeWait(wait)} ${wait.reason === 'approval' ? 'timed out' : 'came'}; queued again`,
        );
    } catch (error) {
      logger.warn({ event: 'wait.sweepFailed', err: error }, 'could not look for waits that are due; trying again');
    }
  };
}

export async function runWorker(options: WorkerOptions): Promise<WorkerSummary> {
  const worker: WorkerContext = {
    options,
    store: options.store,
    logger: options.logger,
    clock: options.clock ?? systemClock,
    ttlMs: options.claimTtlMs ?? 60_000,
    drain: options.signal ?? new AbortController().signal,
    summary: { finished: 0, requeued: 0 },
    owner: JSON.stringify({ worker: randomUUID(), pid: process.pid }),
  };
  const { store, logger, clock, drain } = worker;
  const concurrency = options.concurrency ?? 1;
  const pollMs = options.pollMs ?? 1000;
  const inFlight = new Set<Promise<void>>();
  const waitSweepMs = options.waitSweepMs ?? 15_000;
  const sweepWaits = createWaitSweep(worker, waitSweepMs);
  while (!drain.aborted) {
    await sweepWaits();
    if (inFlight.size >= concurrency) {
      await pause(clock, Math.min(60_000, waitSweepMs), drain, inFlight);
      continue;
    }
    let claim: RunClaim | undefined;
    try {
      claim = await store.claimRun(worker.owner, worker.ttlMs);
    } catch (error) {
      logger.warn({ event: 'claim.failed', err: error }, 'could not look at the queue; trying again');
      await pause(clock, pollMs, drain);
      continue;
    }
    if (!claim) {
      if (options.exitWhenIdle && inFlight.size === 0) break;
      await pause(clock, pollMs, drain, inFlight);
      continue;
    }
    const driving: Promise<void> = drive(worker, claim).finally(() => inFlight.delete(driving));
    inFlight.add(driving);
  }
  await Promise.all(inFlight);
  return worker.summary;
}
