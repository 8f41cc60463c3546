/** The run's lease while it runs, and the heartbeat that sees a cancellation asked by another process. */
import { FleetbookError, UsageError, errorMessage } from '../errors/index.js';
import { type Logger } from '../logging/index.js';
import { acquireLeaseFromLiveOrDead, newLeaseOwner, RUN_LEASE_TTL_MS, runLeaseKey } from '../store/index.js';
import { type CancelRequest, type ErrorRecord, type RunStore } from '../store/index.js';
import { systemClock, type Timer } from '../timers/index.js';
import { DEFAULT_CANCEL_CHECK_MS, type RunOptions } from './run-options.js';
/** The run's lease while the run holds it (see `holdLease`). */
interface HeldLease {
  /** The run's signal: the caller's, also aborted when the lease is lost. */
  signal: AbortSignal;
  /** Why the lease was lost, once it was: from then on the run writes nothing more to the store. */
  lost(): ErrorRecord | undefined;
  /** Who cancelled the run, once its driver saw the request. */
  cancelled(): CancelRequest | undefined;
  release(): Promise<void>;
}

/**
 * The run's lease, renewed while it goes on: a resume in another process must not drive the
 * same run at once. A live owner elsewhere is a `UsageError` (exit 2). A renewal refused (the
 * lease lapsed and another process took it) or failing until less than a third of the TTL is
 * left aborts the run, as a lost playbook lock does (run-with-lock.ts): it starts no new work,
 * and since another process may now drive it, it journals nothing more.
 */
export async function holdLease(
  store: RunStore,
  runId: string,
  options: Pick<RunOptions, 'leaseTtlMs' | 'logger' | 'signal' | 'clock' | 'cancelCheckMs'>,
): Promise<HeldLease> {
  const ttlMs = options.leaseTtlMs ?? RUN_LEASE_TTL_MS;
  const { logger, signal: outer } = options;
  const clock = options.clock ?? systemClock;
  const leaseKey = runLeaseKey(runId);
  const owner = newLeaseOwner();
  if (!(await acquireLeaseFromLiveOrDead(store, leaseKey, owner, ttlMs))) {
    throw new UsageError(
      `run ${runId} is being driven by another process (its lease is held); wait for it to end, or for its lease to lapse if that process died`,
      'RUN_LEASED',
    );
  }
  let heldUntil = clock.now() + ttlMs;
  let lostBecause: ErrorRecord | undefined;
  let finished = false;
  const controller = new AbortController();
  const forward = (): void => controller.abort(outer?.reason);
  if (outer?.aborted) forward();
  else outer?.addEventListener('abort', forward, { once: true });
  const lose = (message: string): void => {
    lostBecause = {
      message: `run ${runId} ${message}; it stopped starting work (another process may be driving it; \`fleetbook runs show ${runId}\`)`,
      code: 'LEASE_LOST',
    };
    logger.error({ event: 'lease.lost', runId, error: lostBecause }, lostBecause.message);
    controller.abort(new FleetbookError(lostBecause.message, { code: 'LEASE_LOST' }));
  };
  // Renewal timers do not keep the process alive by themselves (the run's own work does).
  const later = (task: () => void, ms: number): Timer => clock.setTimer(task, ms).unref();
  const renew = (): void => {
    if (finished) return;
    const askedAt = clock.now();
    // A renewal, not an acquisition: a lease another process released when it took the run over
    // (this one paused past its TTL) is lost, not taken back from under that process.
    store.renewLease(leaseKey, owner, ttlMs).then(
      (held) => {
        if (finished) return;
        if (!held) return lose('lost its lease to another process');
        heldUntil = askedAt + ttlMs;
        timer = later(renew, ttlMs / 3);
      },
      (error: unknown) => {
        if (finished) return;
        const leftMs = heldUntil - clock.now();
        if (leftMs <= ttlMs / 3) return lose(`could not renew its lease before it lapsed (${errorMessage(error)})`);
        logger.warn(
          { event: 'lease.renewFailed', runId, err: error },
          `could not renew the lease of run ${runId}; trying again`,
        );
        timer = later(renew, Math.min(ttlMs / 3, leftMs - ttlMs / 3));
      },
    );
  };
  let timer = later(renew, ttlMs / 3);
  const cancelWatch = watchForCancel(store, runId, controller, logger, (task, ms) => later(task, ms), options);
  return {
    signal: controller.signal,
    lost: () => lostBecause,
    cancelled: () => cancelWatch.cancelledBy(),
    async release() {
      finished = true;
      timer.cancel();
      cancelWatch.stop();
      outer?.removeEventListener('abort', forward);
      if (!lostBecause) await store.releaseLease(leaseKey, owner);
    },
  };
}

/**
 * The heartbeat that sees `fleetbook runs cancel` from another process (or another worker's
 * machine): the request is in the store, the run's signal aborts, steps stop at a journaled point.
 */
function watchForCancel(
  store: RunStore,
  runId: string,
  controller: AbortController,
  logger: Logger,
  later: (task: () => void, ms: number) => Timer,
  options: Pick<RunOptions, 'cancelCheckMs'>,
): { cancelledBy(): CancelRequest | undefined; stop(): void } {
  let cancelledBy: CancelRequest | undefined;
  let stopped = false;
  const cancelCheckMs = options.cancelCheckMs ?? DEFAULT_CANCEL_CHECK_MS;
  const lookForCancel = (): void => {
    if (stopped) return;
    store.getRun(runId).then(
      (run) => {
        if (stopped) return;
        if (run?.cancelRequested && !controller.signal.aborted) {
          cancelledBy = run.cancelRequested;
          logger.warn(
            { event: 'run.cancelRequested', runId, by: cancelledBy.by },
            `run ${runId} is being cancelled (asked by ${cancelledBy.by}); stopping at a journaled point`,
          );
          controller.abort(
            new FleetbookError(`run ${runId} was cancelled by ${cancelledBy.by}`, { code: 'RUN_CANCELLED' }),
          );
          return;
        }
        timer = later(lookForCancel, cancelCheckMs);
      },
      () => {
        // A store that cannot answer now is the renewal's concern; look again later.
        if (!stopped) timer = later(lookForCancel, cancelCheckMs);
      },
    );
  };
  let timer = later(lookForCancel, cancelCheckMs);
  return {
    cancelledBy: () => cancelledBy,
    stop() {
      stopped = true;
      timer.cancel();
    },
  };
}
