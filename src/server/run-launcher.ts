/**
 * Starts and resumes runs for the API. With a shared store (team mode) a new run is queued
 * for the workers, as `fleetbook run --queue` does; otherwise the server drives it in this
 * process with the engine, under the playbook's lock, as `fleetbook run` would. Either way
 * the answer waits only until the run is recorded, never for its end. Stopping aborts the
 * runs this process drives: they stop at a journaled point, `interrupted` and resumable.
 */
import { randomUUID } from 'node:crypto';
import {
  admit,
  deliverNotifications,
  driveAdmitted,
  queueAdmitted,
  resumeStored,
  type Admission,
  type Caller,
  type RunParts,
  type RunRequest,
} from '../admission/index.js';
import { approvalProgress, recordApproval, type ApprovalRequest } from '../engine/index.js';
import { UsageError } from '../errors/index.js';
import { ServerErrorCode } from './error-codes.js';
import type { Playbook } from '../playbook/index.js';
import { isQueueStore, RunStatus, type RunRecord } from '../store/index.js';
import { systemClock, type Clock } from '../timers/index.js';

/** The process's parts (the CLI's process host): store, client, logger, secrets, notifier, settings. */
export interface RunLauncherOptions extends RunParts {
  /** The time of approval decisions, compared with a gate's timeout. @default systemClock */
  decisionClock?: Clock;
}

/** What a start did: the run recorded (started here, or queued for a worker), or a triggered fire queued behind the schedule's previous run. */
export type LaunchOutcome = { run: RunRecord; admission: Admission } | { run?: undefined; admission: Admission };

export interface RunLauncher {
  /**
   * Admits the request (`admit`: role, inputs, secret inputs, windows and freezes, a triggered
   * schedule's overlap) and records the run: queued for a worker with a shared store, else driven
   * here. A refusal is a `UsageError` (400, 403 or 409), and nothing is recorded.
   */
  start(request: Omit<RunRequest, 'target'>, caller: Caller): Promise<LaunchOutcome>;
  /** Resumes an interrupted run in this process. */
  resume(playbook: Playbook, run: RunRecord, secretInputs: Record<string, unknown>, by: string): Promise<RunRecord>;
  /**
   * Records an approver's decision on the run's waiting gate (`recordApproval`: every check,
   * one decision wins), then continues the run: here with a local store, by a worker with a
   * shared one (the run is queued).
   */
  decide(playbook: Playbook | undefined, request: ApprovalRequest): Promise<RunRecord>;
  /** Cancels a run (`RunStore.cancelRun`), with an audit line. */
  cancel(runId: string, by: string): Promise<{ outcome: string; run: RunRecord }>;
  /** Runs this process drives now. */
  driving(): number;
  /** Aborts the runs driven here and waits for them to stop at a journaled point. */
  stop(): Promise<void>;
}

export function createRunLauncher(options: RunLauncherOptions): RunLauncher {
  return new Launcher(options);
}

/** The runs this process drives, each with the controller that stops it and its end. */
type InFlight = Map<string, { controller: AbortController; done: Promise<unknown> }>;

/**
 * The decision is recorded but this server cannot continue the run: its secret inputs were
 * given to a server that has since restarted (they are never stored). Said as such, with what
 * to do, not as a decision refused.
 */
function decidedButNotContinued(error: unknown, request: ApprovalRequest): unknown {
  if (!(error instanceof UsageError) || error.code !== 'SECRET_INPUT_MISSING') return error;
  const what = request.decision === 'approved' ? 'approval' : 'denial';
  return new UsageError(
    `the ${what} is recorded, but the run cannot go on here: ${error.message} (POST /api/v1/runs/${request.runId}/resume with secretInputs, or \`fleetbook resume\` with FLEETBOOK_INPUT_*)`,
    error.code,
  );
}

/** The secret inputs given with `admission` (those left to their default are taken again by the engine). */
function secretInputsGiven(admission: Admission): Record<string, unknown> {
  const given = admission.inputs.secretNames.filter((name) => admission.request.inputs[name] !== undefined);
  return Object.fromEntries(given.map((name) => [name, admission.request.inputs[name]]));
}

class Launcher implements RunLauncher {
  private readonly inFlight: InFlight = new Map();
  /**
   * The secret inputs given to this server for the runs it drives, kept in memory (never stored)
   * until the run ends: a decision or the sweep continues a run waiting at a gate with them, as
   * `fleetbook approve` reads them again. A server restarted has forgotten them (a resume gives them).
   */
  private readonly secretInputs = new Map<string, Record<string, unknown>>();

  constructor(private readonly options: RunLauncherOptions) {}

  /** Keeps a run's secret inputs while it may go on (waiting, interrupted), forgets them at its end. */
  private keepSecrets(runId: string, secretInputs: Record<string, unknown>, status?: RunStatus): void {
    const goesOn = status === undefined || status === RunStatus.waiting || status === RunStatus.interrupted;
    if (goesOn && Object.keys(secretInputs).length > 0) this.secretInputs.set(runId, secretInputs);
    else this.secretInputs.delete(runId);
  }

  private get store() {
    return this.options.store;
  }

  private get logger() {
    return this.options.logger;
  }

  /** Drives `work` here; resolves once the run's record exists (or rejects with why it never did). */
  private async drive(runId: string, work: (signal: AbortSignal) => Promise<unknown>): Promise<RunRecord> {
    const { store, logger, inFlight } = this;
    const controller = new AbortController();
    const done = work(controller.signal);
    inFlight.set(runId, { controller, done });
    void done
      .catch((error: unknown) => logger.error({ event: 'run.error', runId, err: error }, `run ${runId} failed to run`))
      .finally(() => inFlight.delete(runId));
    // The engine records the run before its first step; a refusal (a held lock) comes before that.
    for (;;) {
      const settled = await Promise.race([
        done.then(
          () => 'ended' as const,
          (error: unknown) => {
            throw error;
          },
        ),
        new Promise<'poll'>((resolve) => setTimeout(() => resolve('poll'), 10)),
      ]);
      const run = await store.getRun(runId);
      if (run) return run;
      if (settled === 'ended') throw new Error(`run ${runId} ended without a record`);
    }
  }

  async start(asked: Omit<RunRequest, 'target'>, caller: Caller): Promise<LaunchOutcome> {
    const { store, logger, options } = this;
    const request: RunRequest = { ...asked, target: isQueueStore(store) ? 'queue' : 'here' };
    // Checked before anything is recorded: a refusal is the caller's 4xx, not a failed run.
    const admission = await admit(request, caller, { store, now: Date.now });
    if (admission.overlap && 'queuedBehind' in admission.overlap) return { admission };
    const runId = randomUUID();
    const { playbook } = request;
    const audit = {
      event: 'audit.runStarted',
      runId,
      playbook: playbook.name,
      by: caller.name,
      dryRun: request.dryRun,
      ...(admission.trigger.scheduleId === undefined ? {} : { scheduleKey: admission.trigger.scheduleId }),
      ...(admission.trigger.ignoredWindow === undefined ? {} : { ignoredWindow: admission.trigger.ignoredWindow }),
    };
    if (request.target === 'queue') {
      const run = await queueAdmitted(admission, options, runId);
      logger.info(audit, `${caller.name} queued run ${runId} of ${playbook.name}`);
      return { run, admission };
    }
    logger.info(audit, `${caller.name} started run ${runId} of ${playbook.name}`);
    const secretInputs = secretInputsGiven(admission);
    this.keepSecrets(runId, secretInputs);
    const run = await this.drive(runId, async (signal) => {
      const result = await driveAdmitted(admission, options, { runId, signal }).catch((error: unknown) => {
        this.keepSecrets(runId, {});
        throw error;
      });
      this.keepSecrets(runId, secretInputs, result.status);
      await deliverNotifications(options, runId);
      return result;
    });
    return { run, admission };
  }

  async resume(
    playbook: Playbook,
    run: RunRecord,
    secretInputs: Record<string, unknown>,
    by: string,
  ): Promise<RunRecord> {
    const { store, logger, options, inFlight } = this;
    if (inFlight.has(run.id))
      throw new UsageError(`run ${run.id} is already being driven by this server`, ServerErrorCode.runActive);
    logger.info(
      { event: 'audit.runResumed', runId: run.id, playbook: run.playbook, by },
      `${by} resumed run ${run.id} of ${run.playbook}`,
    );
    let resolveStarted: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (resolveStarted = resolve));
    const controller = new AbortController();
    // Given now (the API's resume), else as given to this server when the run started.
    const given = { ...this.secretInputs.get(run.id), ...secretInputs };
    const done = resumeStored(playbook, run, options, {
      runId: run.id,
      secretInputs: given,
      signal: controller.signal,
    }).then(async (result) => {
      this.keepSecrets(run.id, given, result.status);
      await deliverNotifications(options, run.id);
      return result;
    });
    inFlight.set(run.id, { controller, done });
    void done
      .catch((error: unknown) =>
        logger.error({ event: 'run.error', runId: run.id, err: error }, `run ${run.id}: ${String(error)}`),
      )
      .finally(() => {
        inFlight.delete(run.id);
        resolveStarted();
      });
    // The resume marks the run running before its first step; a refusal (changed playbook) comes first.
    for (;;) {
      const current = await store.getRun(run.id);
      if (current && current.resumes > run.resumes) return current;
      const outcome = await Promise.race([
        done.then(
          () => 'ended' as const,
          (error: unknown) => {
            throw error;
          },
        ),
        new Promise<'poll'>((resolve) => setTimeout(() => resolve('poll'), 10)),
        started.then(() => 'ended' as const),
      ]);
      if (outcome === 'ended') return (await store.getRun(run.id)) ?? run;
    }
  }

  async decide(playbook: Playbook | undefined, request: ApprovalRequest): Promise<RunRecord> {
    const { store, logger, options } = this;
    const recorded = await recordApproval(store, request, (options.decisionClock ?? systemClock).now);
    const gate = recorded.wait.path;
    logger.info(
      {
        event: recorded.refused ? 'audit.decisionTooLate' : `audit.${request.decision}`,
        runId: request.runId,
        gate,
        by: request.by,
        ...(request.comment ? { comment: request.comment } : {}),
      },
      recorded.refused
        ? `${request.by}'s ${request.decision === 'approved' ? 'approval' : 'denial'} of ${gate} in run ${request.runId} came after its timeout: refused; its onTimeout applies`
        : `${request.by} ${request.decision} ${gate} of run ${request.runId}${recorded.status === RunStatus.waiting ? `: ${approvalProgress(recorded.wait, recorded.run.trigger.by)}` : ''}`,
    );
    const after = (await store.getRun(request.runId)) ?? recorded.run;
    // The drive that left the run waiting may still be finishing here (sending its `waiting`
    // notification): the decision is recorded, so the run is continued once that drive is over.
    await this.inFlight.get(request.runId)?.done.catch(() => undefined);
    // A shared store queued the run for a worker; a local one left it interrupted for us to resume.
    const continued =
      recorded.status !== RunStatus.interrupted || !playbook
        ? after
        : await this.resume(playbook, after, {}, request.by).catch((error: unknown) => {
            throw decidedButNotContinued(error, request);
          });
    // Too late: the gate's onTimeout applies (the run goes on with it), and the decider gets a 409.
    if (recorded.refused) throw recorded.refused;
    return continued;
  }

  async cancel(runId: string, by: string): Promise<{ outcome: string; run: RunRecord }> {
    const { store, logger } = this;
    const outcome = await store.cancelRun(runId, by);
    logger.info(
      { event: 'audit.cancelled', runId, by, outcome: outcome.outcome },
      `${by} cancelled run ${runId} (${outcome.outcome})`,
    );
    const run = await store.getRun(runId);
    if (!run) throw new Error(`run ${runId} disappeared`);
    return { outcome: outcome.outcome, run };
  }

  driving(): number {
    return this.inFlight.size;
  }

  async stop(): Promise<void> {
    for (const { controller } of this.inFlight.values()) controller.abort(new Error('the server is stopping'));
    await Promise.allSettled([...this.inFlight.values()].map((entry) => entry.done));
  }
}
