/** What `fleetbook server` does (see server.ts), imported when the command runs. */
import { createFireDriver } from '../../admission/index.js';
import { ExitCode, UsageError } from '../../errors/index.js';
import { startOutboxSweep } from '../../notifications/index.js';
import { hasErrors, type LoadPlaybookOptions, type PlaybookFolder } from '../../playbook/index.js';
import { createFireQueuer, loadPlaybookFolder, runWorker, startDaemon, type Daemon } from '../../scheduler/index.js';
import {
  createServerMetrics,
  loadOidcConfig,
  startServer,
  type OidcSettings,
  type ServerMetrics,
} from '../../server/index.js';
import { isQueueStore } from '../../store/index.js';
import { countingRateWaits, metricsTee } from '../process-metrics.js';
import type { Connection } from '../connection.js';
import type { CliIo } from '../io.js';
import { outputFormat } from '../output.js';
import { playbookLoadOptions } from '../playbook-load-options.js';
import { formatProblems } from '../problems.js';
import { withProcessHost, type ProcessHost } from '../process-host.js';
import { parseTimeScale } from '../run-session.js';
import { readServerSettings, type ServerSettings } from '../server-settings.js';
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
  // Read before anything opens: a bad server section is refused at start, exit 2.
  const settings = readServerSettings(process.cwd());
  const folder = loadPlaybookFolder(options.playbooks, loadOptions);
  if (hasErrors(folder.problems)) {
    io.stderr.write(`${formatProblems(folder.problems)}\n\nfleetbook server: not started; fix the errors above.\n`);
    io.exitCode = ExitCode.usage;
    return;
  }
  // `server.oidc` of fleetbook.yaml: a mistake stops the start (exit 2), located.
  const oidc = loadOidcConfig(process.cwd(), io.env);
  let metrics: ServerMetrics | undefined;
  await withProcessHost(
    io,
    {
      ...options,
      readable: format === 'text',
      instrument(opened) {
        metrics = createServerMetrics(opened);
        return { store: countingRateWaits(opened, metrics), tee: { stream: metricsTee(metrics), level: 'debug' } };
      },
    },
    async (host) => {
      if (!options.worker && !isQueueStore(host.parts.opened))
        throw new UsageError(
          '--no-worker needs a shared store (FLEETBOOK_STORE=postgres://...): with the embedded store this server is the only one to drive the runs it starts.',
          'NO_SHARED_STORE',
        );
      if (oidc) host.parts.secrets.add(oidc.clientSecret);
      const connection = await host.connect({ timeScale });
      for (const playbook of folder.playbooks) host.warnNotifyRules(playbook);
      await serve(io, host, connection, options, {
        folder,
        loadOptions,
        port,
        concurrency,
        format,
        metrics,
        oidc,
        settings,
      });
    },
  );
}

interface Serving {
  folder: PlaybookFolder;
  loadOptions: LoadPlaybookOptions;
  port: number;
  concurrency: number;
  format: string;
  metrics: ServerMetrics | undefined;
  oidc: OidcSettings | undefined;
  settings: ServerSettings;
}

/** The server, its scheduler and (with --worker) its worker, on the process host's parts, until SIGTERM or SIGINT. */
async function serve(
  io: CliIo,
  host: ProcessHost,
  connection: Connection,
  command: ServerCommandOptions,
  options: Serving,
): Promise<void> {
  const { logger, notifications } = host.parts;
  const parts = host.runParts(connection);
  const server = await startServer({
    ...parts,
    playbooksDir: options.folder.dir,
    loadOptions: options.loadOptions,
    host: command.host,
    port: options.port,
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.oidc ? { oidc: options.oidc } : {}),
    ...(options.settings.secureCookies ? { secureCookies: true } : {}),
  });
  let daemon: Daemon | undefined;
  const drain = new AbortController();
  let worker: Promise<unknown> | undefined;
  // What a process that died mid-send left pending (any run's), and retries coming due.
  const sweep = startOutboxSweep(notifications, logger);
  try {
    // Every part writes through the server's observed store, so its appends reach the event streams at once.
    const observed = server.store;
    daemon = await startDaemon({
      playbooksDir: options.folder.dir,
      loadOptions: options.loadOptions,
      store: observed,
      logger,
      ...(isQueueStore(observed)
        ? { teamLeadership: observed, execute: createFireQueuer({ store: observed, logger, env: io.env }) }
        : {
            execute: createFireDriver({
              ...parts,
              store: observed,
              embeddedSimulator: command.target === 'simulator',
              notifications,
            }),
          }),
    });
    if (isQueueStore(observed) && command.worker) {
      worker = runWorker({
        ...parts,
        store: observed,
        concurrency: options.concurrency,
        signal: drain.signal,
        loadPlaybook: (run) => loadQueuedPlaybook(run, options.loadOptions),
        secretInputsOf: secretInputsFromEnv(io.env),
        notifications,
      });
    }
    io.stdout.write(options.format === 'text' ? `Fleetbook server on ${server.url}\n` : '');
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
    await sweep.stop();
    logger.info({ event: 'server.stopped' }, 'server: stopped');
  }
  io.exitCode = ExitCode.success;
}
