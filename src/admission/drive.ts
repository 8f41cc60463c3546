/**
 * What happens to an admitted run, the same whichever door admitted it: queued for a worker
 * (team mode), or driven here under the playbook's lock with the process's notifier, secrets
 * registry and run settings; and the resume of a stored run, with its windows and notifier.
 * The process host (the CLI) assembles `RunParts` once per process; the server, the daemon and
 * the commands hand the same parts here.
 */
import type { PlatformClient } from '../api/index.js';
import { enqueuePlaybookRun, runEnvironmentOf, type RunEnvironment, type RunResult } from '../engine/index.js';
import type { Logger, SecretRegistry } from '../logging/index.js';
import type { Notifications } from '../notifications/index.js';
import type { Playbook } from '../playbook/index.js';
import { resumeRunWithLock, runPlaybookWithLock, startGateOfRun, type Clock } from '../scheduler/index.js';
import { isQueueStore, type RunRecord, type RunStore } from '../store/index.js';
import { UsageError } from '../errors/index.js';
import type { Admission } from './admit.js';

/** The parts of a process that drive runs: one of each per process (see the CLI's process host). */
export interface RunParts extends RunEnvironment {
  store: RunStore;
  client: PlatformClient;
  logger: Logger;
  secrets: SecretRegistry;
  /** What expressions see of the environment (`FLEETBOOK_VAR_*`). */
  env: Record<string, string | undefined>;
  /** The notifications of the runs' ends (`notify:` rules); absent: none is recorded. */
  notifications?: Pick<Notifications, 'hookFor' | 'deliver'>;
  clock?: Clock;
}

function registerSecrets(parts: Pick<RunParts, 'secrets'>, values: Record<string, unknown>, names: readonly string[]) {
  for (const name of names) {
    const value = values[name];
    if (typeof value === 'string') parts.secrets.add(value);
  }
}

/** Records an admitted run `queued` in the shared store, for a worker to claim. */
export async function queueAdmitted(
  admission: Admission,
  parts: Pick<RunParts, 'store' | 'env'> & RunEnvironment,
  runId?: string,
): Promise<RunRecord> {
  const { store } = parts;
  if (!isQueueStore(store))
    throw new UsageError(
      "a queued run needs a shared store: set FLEETBOOK_STORE=postgres://user:password@host:5432/database (or a profile's `store:`).",
      'NO_SHARED_STORE',
    );
  return enqueuePlaybookRun(admission.request.playbook, {
    store,
    inputs: admission.request.inputs,
    dryRun: admission.request.dryRun,
    env: parts.env,
    trigger: admission.trigger,
    ...(runId === undefined ? {} : { runId }),
    ...(admission.request.rerun?.retry ? { retry: admission.request.rerun.retry } : {}),
    ...runEnvironmentOf(parts),
  });
}

export interface DriveOptions {
  runId: string;
  signal: AbortSignal;
  /** The run's logger (the parts' by default). */
  logger?: Logger;
  /** A scheduled run waits for a held lock; one asked for by a person is refused (`LOCK_HELD`). @default false */
  waitForLock?: boolean;
}

function common(parts: RunParts, options: DriveOptions, playbook: Playbook) {
  return {
    client: parts.client,
    store: parts.store,
    logger: options.logger ?? parts.logger,
    secrets: parts.secrets,
    env: parts.env,
    signal: options.signal,
    runId: options.runId,
    ...(parts.clock ? { clock: parts.clock } : {}),
    ...runEnvironmentOf(parts),
    ...(options.waitForLock ? { waitForLock: true } : {}),
    ...(parts.notifications ? { notify: parts.notifications.hookFor(playbook.notify) } : {}),
  };
}

/**
 * Drives an admitted run here to its end (or its wait, or an interruption). Its notifications
 * are recorded with its end; `deliverNotifications` sends them.
 */
export async function driveAdmitted(admission: Admission, parts: RunParts, options: DriveOptions): Promise<RunResult> {
  const { request, inputs } = admission;
  registerSecrets(parts, request.inputs, inputs.secretNames);
  return runPlaybookWithLock(request.playbook, {
    ...common(parts, options, request.playbook),
    inputs: request.inputs,
    dryRun: request.dryRun,
    ...(request.planWrites ? { planWrites: true } : {}),
    ...(request.planGuard ? { planGuard: request.planGuard } : {}),
    trigger: admission.trigger,
    startGate: admission.startGate,
    ...(request.rerun?.retry ? { retry: request.rerun.retry } : {}),
  });
}

export interface ResumeStoredOptions extends DriveOptions {
  /** Secret inputs given again (never stored). */
  secretInputs: Record<string, unknown>;
  force?: boolean;
  confirmUnknown?: boolean;
}

/** Resumes a stored run here, with its own windows (`startGateOfRun`) and the process's notifier. */
export async function resumeStored(
  playbook: Playbook,
  run: RunRecord,
  parts: RunParts,
  options: ResumeStoredOptions,
): Promise<RunResult> {
  registerSecrets(parts, options.secretInputs, Object.keys(options.secretInputs));
  return resumeRunWithLock(playbook, {
    ...common(parts, options, playbook),
    secretInputs: options.secretInputs,
    ...(options.force ? { force: true } : {}),
    ...(options.confirmUnknown ? { confirmUnknown: true } : {}),
    startGate: startGateOfRun(playbook, run),
  });
}

/** Sends the run's pending notifications (after its result is out: a slow channel delays nothing else). */
export async function deliverNotifications(
  parts: Pick<RunParts, 'notifications'>,
  runId: string,
  untilSettled = false,
): Promise<void> {
  await parts.notifications?.deliver({ runId, untilSettled });
}
