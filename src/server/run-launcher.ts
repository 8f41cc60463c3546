/**
 * Starts and resumes runs for the API. With a shared store (team mode) a new run is queued
 * for the workers, as `fleetbook run --queue` does; otherwise the server drives it in this
 * process with the engine, under the playbook's lock, as `fleetbook run` would. Either way
 * the answer waits only until the run is recorded, never for its end. Stopping aborts the
 * runs this process drives: they stop at a journaled point, `interrupted` and resumable.
 */
import { randomUUID } from 'node:crypto';
import type { PlatformClient } from '../api/index.js';
import {
  enqueuePlaybookRun,
  recordApproval,
  resolveInputs,
  runEnvironmentOf,
  type ApprovalRequest,
  type RunEnvironment,
} from '../engine/index.js';
import { UsageError } from '../errors/index.js';
import { ServerErrorCode } from './error-codes.js';
import type { Logger, SecretRegistry } from '../logging/index.js';
import type { Playbook } from '../playbook/index.js';
import { resumeRunWithLock, runPlaybookWithLock } from '../scheduler/index.js';
import { isQueueStore, RunStatus, type RunRecord, type RunStore } from '../store/index.js';
import { systemClock, type Clock } from '../timers/index.js';

export interface RunLauncherOptions extends RunEnvironment {
  /** The store runs are written through (the server's observed store). */
  store: RunStore;
  client: PlatformClient;
  logger: Logger;
  secrets: SecretRegistry;
  env: Record<string, string | undefined>;
  /** The time of approval decisions, compared with a gate's timeout. @default systemClock */
  clock?: Clock;
}

export interface LaunchRequest {
  inputs: Record<string, unknown>;
  dryRun: boolean;
  /** Who asked (the token's name), for the audit line. */
  by: string;
  /** What the run records as its trigger, when not a plain manual run (a schedule triggered by hand). */
  trigger?: { kind: 'manual' | 'trigger'; scheduleId?: string; by?: string };
}

export interface RunLauncher {
  /** Records a run of `playbook` and starts (or queues) it; a `UsageError` for inputs it refuses. */
  start(playbook: Playbook, request: LaunchRequest): Promise<RunRecord>;
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
  const { store, logger } = options;
  const inFlight = new Map<string, { controller: AbortController; done: Promise<unknown> }>();
  const common = () => ({
    client: options.client,
    store,
    secrets: options.secrets,
    env: options.env,
    ...runEnvironmentOf(options),
  });

  /** Drives `work` here; resolves once the run's record exists (or rejects with why it never did). */
  async function drive(runId: string, work: (signal: AbortSignal) => Promise<unknown>): Promise<RunRecord> {
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

  return {
    async start(playbook, request) {
      // Checked before anything is recorded: a bad input is the caller's 400, not a failed run.
      const resolved = resolveInputs(playbook.inputs, request.inputs, playbook.name);
      const runId = randomUUID();
      const audit = {
        event: 'audit.runStarted',
        runId,
        playbook: playbook.name,
        by: request.by,
        dryRun: request.dryRun,
        ...(request.trigger?.scheduleId === undefined ? {} : { scheduleKey: request.trigger.scheduleId }),
      };
      // The record keeps `by` too: the engine stores the trigger as given.
      const trigger = request.trigger === undefined ? {} : { trigger: request.trigger };
      if (isQueueStore(store)) {
        const given = resolved.secretNames.filter((name) => request.inputs[name] !== undefined);
        if (given.length > 0)
          throw new UsageError(
            `secret inputs are never stored, so a queued run cannot carry them: give ${given.map((name) => `'${name}'`).join(', ')} to the workers (FLEETBOOK_INPUT_<NAME>)`,
            ServerErrorCode.secretInputQueued,
            { field: `body/inputs/${given[0]}` },
          );
        const run = await enqueuePlaybookRun(playbook, {
          store,
          inputs: request.inputs,
          dryRun: request.dryRun,
          runId,
          env: options.env,
          ...trigger,
        });
        logger.info(audit, `${request.by} queued run ${runId} of ${playbook.name}`);
        return run;
      }
      for (const name of resolved.secretNames) {
        const value = request.inputs[name];
        if (typeof value === 'string') options.secrets.add(value);
      }
      logger.info(audit, `${request.by} started run ${runId} of ${playbook.name}`);
      return drive(runId, (signal) =>
        runPlaybookWithLock(playbook, {
          ...common(),
          inputs: request.inputs,
          dryRun: request.dryRun,
          runId,
          signal,
          logger,
          ...trigger,
        }),
      );
    },

    async resume(playbook, run, secretInputs, by) {
      if (inFlight.has(run.id))
        throw new UsageError(`run ${run.id} is already being driven by this server`, ServerErrorCode.runActive);
      for (const value of Object.values(secretInputs)) if (typeof value === 'string') options.secrets.add(value);
      logger.info(
        { event: 'audit.runResumed', runId: run.id, playbook: run.playbook, by },
        `${by} resumed run ${run.id} of ${run.playbook}`,
      );
      let resolveStarted: () => void = () => undefined;
      const started = new Promise<void>((resolve) => (resolveStarted = resolve));
      const controller = new AbortController();
      const done = resumeRunWithLock(playbook, {
        ...common(),
        runId: run.id,
        secretInputs,
        signal: controller.signal,
        logger,
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
    },

    async decide(playbook, request) {
      const recorded = await recordApproval(store, request, (options.clock ?? systemClock).now);
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
          : `${request.by} ${request.decision} ${gate} of run ${request.runId}`,
      );
      const after = (await store.getRun(request.runId)) ?? recorded.run;
      // A shared store queued the run for a worker; a local one left it interrupted for us to resume.
      const continued =
        recorded.status !== RunStatus.interrupted || !playbook
          ? after
          : await this.resume(playbook, after, {}, request.by);
      // Too late: the gate's onTimeout applies (the run goes on with it), and the decider gets a 409.
      if (recorded.refused) throw recorded.refused;
      return continued;
    },

    async cancel(runId, by) {
      const outcome = await store.cancelRun(runId, by);
      logger.info(
        { event: 'audit.cancelled', runId, by, outcome: outcome.outcome },
        `${by} cancelled run ${runId} (${outcome.outcome})`,
      );
      const run = await store.getRun(runId);
      if (!run) throw new Error(`run ${runId} disappeared`);
      return { outcome: outcome.outcome, run };
    },

    driving: () => inFlight.size,

    async stop() {
      for (const { controller } of inFlight.values()) controller.abort(new Error('the server is stopping'));
      await Promise.allSettled([...inFlight.values()].map((entry) => entry.done));
    },
  };
}
