/** What `fleetbook server` does (see server.ts), imported when the command runs. */
import { ExitCode, UsageError } from '../../errors/index.js';
import { createSecretRegistry } from '../../logging/index.js';
import { hasErrors } from '../../playbook/index.js';
import {
  createEngineExecutor,
  createQueueExecutor,
  loadPlaybookFolder,
  runWorker,
  startDaemon,
  type Daemon,
} from '../../scheduler/index.js';
import { createServerMetrics, startServer } from '../../server/index.js';
import { isQueueStore, openRunStore } from '../../store/index.js';
import { countingRateWaits, metricsTee } from '../process-metrics.js';
import { openConnection, profileStore } from '../connection.js';
import type { CliIo } from '../io.js';
import { outputFormat } from '../output.js';
import { playbookLoadOptions } from '../playbook-load-options.js';
import { formatProblems } from '../problems.js';
import { createCommandLogger, parseTimeScale } from '../run-session.js';
import { runSettingsOf } from '../run-settings.js';
import { loadQueuedPlaybook, secretInputsFromEnv } from './worker-action.js';

export interface ServerCommandOptions {
  port: string;
  host: string;
  worker: boolean;
  concurrency: string;
  playbooks: string;
  target?: string;
  profile?: string;
  timeScale?: string;
  output?: string;
  logFile?: string;
  logLevel: string;
}

export async function serverAction(io: CliIo, options: ServerCommandOptions): Promise<void> {
  const port = Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UsageError(`--port must be a port number from 0 to 65535, got '${options.port}'.`, 'INVALID_OPTION');
  const concurrency = Number(options.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000)
    throw new UsageError(
      `--concurrency must be a whole number from 1 to 1000, got '${options.concurrency}'.`,
      'INVALID_OPTION',
    );
  const timeScale = parseTimeScale(options.timeScale);
  const format = outputFormat(options, 'json');
  if (format !== 'json' && format !== 'text')
    throw new UsageError(`a server writes log lines: --output json or text, not '${format}'`, 'INVALID_OPTION');

  // Checked before anything starts, as the daemon checks it.
  const loadOptions = playbookLoadOptions(io.env);
  const folder = loadPlaybookFolder(options.playbooks, loadOptions);
  if (hasErrors(folder.problems)) {
    io.stderr.write(`${formatProblems(folder.problems)}\n\nfleetbook server: not started; fix the errors above.\n`);
    io.exitCode = ExitCode.usage;
    return;
  }
  const settings = runSettingsOf(io.env);
  const secrets = createSecretRegistry();
  const opened = await openRunStore({ env: io.env, store: profileStore(options.profile) });
  const metrics = createServerMetrics(opened);
  const logger = createCommandLogger(io, options, secrets, format === 'text', undefined, {
    stream: metricsTee(metrics),
    level: 'debug',
  });
  const queue = isQueueStore(opened);
  if (!options.worker && !queue) {
    await opened.close();
    throw new UsageError(
      '--no-worker needs a shared store (FLEETBOOK_STORE=postgres://...): with the embedded store this server is the only one to drive the runs it starts.',
      'NO_SHARED_STORE',
    );
  }
  const store = countingRateWaits(opened, metrics);
  const connection = await openConnection({
    store,
    target: options.target,
    profile: options.profile,
    timeScale,
    env: io.env,
    logger,
    secrets,
  }).catch(async (error: unknown) => {
    await opened.close();
    throw error;
  });
  let daemon: Daemon | undefined;
  const drain = new AbortController();
  let worker: Promise<unknown> | undefined;
  try {
    const server = await startServer({
      store,
      client: connection.client,
      logger,
      secrets,
      playbooksDir: folder.dir,
      loadOptions,
      host: options.host,
      port,
      metrics,
      ...settings,
    });
    try {
      const observed = server.store;
      daemon = await startDaemon({
        playbooksDir: folder.dir,
        loadOptions,
        store: observed,
        logger,
        ...(isQueueStore(observed)
          ? { teamLeadership: observed, execute: createQueueExecutor({ store: observed, logger, env: io.env }) }
          : {
              execute: createEngineExecutor({
                client: connection.client,
                store: observed,
                logger,
                secrets,
                ...settings,
                embeddedSimulator: options.target === 'simulator',
              }),
            }),
      });
      if (isQueueStore(observed) && options.worker) {
        worker = runWorker({
          store: observed,
          client: connection.client,
          logger,
          secrets,
          concurrency,
          signal: drain.signal,
          ...settings,
          loadPlaybook: (run) => loadQueuedPlaybook(run, loadOptions),
          secretInputsOf: secretInputsFromEnv(io.env),
        });
      }
      io.stdout.write(format === 'text' ? `Fleetbook server on ${server.url}\n` : '');
      const signal = await new Promise<NodeJS.Signals>((resolve) => {
        process.once('SIGTERM', () => resolve('SIGTERM'));
        process.once('SIGINT', () => resolve('SIGINT'));
      });
      logger.info({ event: 'server.stopping', signal }, `server: ${signal}: stopping`);
    } finally {
      // Requests first (and the runs started through them), then the scheduler, then the worker.
      await server.close();
      await daemon?.stop();
      drain.abort(new Error('the server is stopping'));
      await worker;
      logger.info({ event: 'server.stopped' }, 'server: stopped');
    }
    io.exitCode = ExitCode.success;
  } finally {
    await connection.close();
    await opened.close();
  }
}
