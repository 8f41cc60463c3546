/** What `fleetbook worker` does (see worker.ts), imported when the command runs. */
import { UsageError } from '../../errors/index.js';
import { parseDuration } from '../../expressions/index.js';
import { startOutboxSweep } from '../../notifications/index.js';
import { hasErrors, loadPlaybook, type LoadPlaybookOptions } from '../../playbook/index.js';
import { runWorker } from '../../scheduler/index.js';
import { isQueueStore, type RunRecord } from '../../store/index.js';
import type { CliIo } from '../io.js';
import { playbookLoadOptions } from '../playbook-load-options.js';
import { formatProblems } from '../problems.js';
import { parseTimeScale } from '../run-session.js';
import { processMetricsOf } from '../process-metrics.js';
import { withProcessHost } from '../process-host.js';
import { secretInputVariable } from '../../admission/index.js';

export interface WorkerCommandOptions {
  concurrency: string;
  claimTtl: string;
  poll: string;
  exitWhenIdle?: boolean;
  target?: string;
  profile?: string;
  timeScale?: string;
  logFile?: string;
  logLevel: string;
  metricsPort?: string;
  metricsHost: string;
}

function durationOption(name: string, text: string, minMs: number): number {
  const ms = parseDuration(text);
  if (ms === undefined || ms < minMs)
    throw new UsageError(
      `--${name} must be a duration of at least ${minMs} ms, like 30s or 2m, got '${text}'.`,
      'INVALID_OPTION',
    );
  return ms;
}

/** A queued run's secret inputs from this worker's environment (FLEETBOOK_INPUT_<NAME>), as resume reads them. */
export function secretInputsFromEnv(env: NodeJS.ProcessEnv): (run: RunRecord) => Record<string, unknown> {
  return (run) => {
    const values: Record<string, unknown> = {};
    for (const name of run.secretInputNames) {
      const value = env[secretInputVariable(name)];
      if (value !== undefined) values[name] = value;
      else if (!run.defaultedSecretInputs.includes(name)) {
        throw new UsageError(
          `the secret input '${name}' is never stored: set ${secretInputVariable(name)} in the workers' environment`,
          'SECRET_INPUT_MISSING',
        );
      }
    }
    return values;
  };
}

/** Loads a queued run's playbook from where it was queued; its problems, located, as the error. */
export function loadQueuedPlaybook(run: RunRecord, options: LoadPlaybookOptions) {
  const loaded = loadPlaybook(run.playbookSource, options);
  if (!loaded.playbook || hasErrors(loaded.problems))
    throw new UsageError(formatProblems(loaded.problems), 'INVALID_PLAYBOOK');
  return loaded.playbook;
}

export async function workerAction(io: CliIo, options: WorkerCommandOptions): Promise<void> {
  const concurrency = Number(options.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000)
    throw new UsageError(
      `--concurrency must be a whole number from 1 to 1000, got '${options.concurrency}'.`,
      'INVALID_OPTION',
    );
  const claimTtlMs = durationOption('claim-ttl', options.claimTtl, 1000);
  const pollMs = durationOption('poll', options.poll, 10);
  const timeScale = parseTimeScale(options.timeScale);
  const loadOptions = playbookLoadOptions(io.env);
  const measured = processMetricsOf(options);

  await withProcessHost(
    io,
    {
      ...options,
      // A worker's output is read by machines: always JSON lines.
      readable: false,
      ...(measured ? { instrument: (opened) => ({ store: measured.instrument(opened), tee: measured.tee }) } : {}),
    },
    async (host) => {
      const { store, logger, notifications } = host.parts;
      if (!isQueueStore(store))
        throw new UsageError(
          "fleetbook worker needs a shared store: set FLEETBOOK_STORE=postgres://user:password@host:5432/database (or a profile's `store:`).",
          'NO_SHARED_STORE',
        );
      const connection = await host.connect({ timeScale });
      const endpoint = await measured?.serve(logger);
      const drain = new AbortController();
      const stop = (signal: NodeJS.Signals): void => {
        logger.info(
          { event: 'worker.draining', signal },
          `worker: ${signal}: no new claims; runs in flight stop at a journaled point and go back to the queue`,
        );
        drain.abort(new Error(`worker drained by ${signal}`));
      };
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
      // What a worker that died mid-send left pending, and retries coming due, whichever run they are of.
      const sweep = startOutboxSweep(notifications, logger);
      try {
        logger.info(
          { event: 'worker.started', concurrency, claimTtlMs, target: connection.description },
          `worker: claiming up to ${concurrency} run(s) at once; runs go to ${connection.description}`,
        );
        const summary = await runWorker({
          ...host.runParts(connection),
          store,
          concurrency,
          claimTtlMs,
          pollMs,
          signal: drain.signal,
          exitWhenIdle: options.exitWhenIdle === true,
          loadPlaybook: (run) => loadQueuedPlaybook(run, loadOptions),
          secretInputsOf: secretInputsFromEnv(io.env),
          notifications,
        });
        logger.info(
          { event: 'worker.stopped', ...summary },
          `worker: stopped (${summary.finished} run(s) ended here, ${summary.requeued} put back in the queue)`,
        );
      } finally {
        process.off('SIGTERM', stop);
        process.off('SIGINT', stop);
        await sweep.stop();
        await endpoint?.close();
      }
    },
  );
}
