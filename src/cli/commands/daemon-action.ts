/** What `fleetbook daemon` does (see daemon.ts), imported when the command runs. */
import { createFireDriver } from '../../admission/index.js';
import { ExitCode, UsageError } from '../../errors/index.js';
import { parseDuration } from '../../expressions/index.js';
import { startOutboxSweep } from '../../notifications/index.js';
import { hasErrors, type LoadPlaybookOptions, type PlaybookFolder, type Problem } from '../../playbook/index.js';
import { createFireQueuer, isSchedulerError, loadPlaybookFolder, startDaemon } from '../../scheduler/index.js';
import { isQueueStore } from '../../store/index.js';
import type { Connection } from '../connection.js';
import type { CliIo } from '../io.js';
import { playbookLoadOptions } from '../playbook-load-options.js';
import { outputFormat } from '../output.js';
import { formatProblems } from '../problems.js';
import { parseTimeScale } from '../run-session.js';
import { processMetricsOf } from '../process-metrics.js';
import { withProcessHost, type ProcessHost } from '../process-host.js';

export interface DaemonCommandOptions {
  playbooks: string;
  target?: string;
  profile?: string;
  timeScale?: string;
  leaseTtl: string;
  logFile?: string;
  logLevel: string;
  output?: string;
  json?: boolean;
  metricsPort?: string;
  metricsHost: string;
}

function refuse(io: CliIo, problems: readonly Problem[]): void {
  io.stderr.write(
    `${formatProblems(problems)}\n\nfleetbook daemon: not started; fix the errors above (fleetbook validate <file> checks one file).\n`,
  );
  io.exitCode = ExitCode.usage;
}

/** Checks the folder, connects and runs the scheduler until SIGTERM or SIGINT. */
export async function daemonAction(io: CliIo, options: DaemonCommandOptions): Promise<void> {
  const timeScale = parseTimeScale(options.timeScale);
  const leaseTtlMs = parseDuration(options.leaseTtl);
  if (leaseTtlMs === undefined || leaseTtlMs < 1000)
    throw new UsageError(
      `--lease-ttl must be a duration of at least 1s, like 30s or 2m, got '${options.leaseTtl}'.`,
      'INVALID_OPTION',
    );
  const measured = processMetricsOf(options);

  // Checked before connecting: an invalid folder costs no simulator start or token.
  const loadOptions = playbookLoadOptions(io.env);
  const folder = loadPlaybookFolder(options.playbooks, loadOptions);
  if (hasErrors(folder.problems)) return refuse(io, folder.problems);

  // A daemon's output is read by machines: JSON lines, unless a person asks for `-o text`.
  const format = outputFormat(options, 'json');
  if (format !== 'json' && format !== 'text')
    throw new UsageError(`a daemon writes log lines: --output json or text, not '${format}'`, 'INVALID_OPTION');
  await withProcessHost(
    io,
    {
      ...options,
      readable: format === 'text',
      ...(measured ? { instrument: (opened) => ({ store: measured.instrument(opened), tee: measured.tee }) } : {}),
    },
    async (host) => {
      // Checked before connecting too: a playbook naming an unknown channel is said to send nothing.
      for (const playbook of folder.playbooks) host.warnNotifyRules(playbook);
      const connection = await host.connect({ timeScale });
      const endpoint = await measured?.serve(host.parts.logger);
      try {
        await schedule(io, host, connection, { ...options, folder, loadOptions, leaseTtlMs });
      } finally {
        await endpoint?.close();
      }
    },
  );
}

/** The scheduler on the host's parts, until SIGTERM or SIGINT; SIGHUP reloads the folder. */
async function schedule(
  io: CliIo,
  host: ProcessHost,
  connection: Connection,
  options: DaemonCommandOptions & { folder: PlaybookFolder; loadOptions: LoadPlaybookOptions; leaseTtlMs: number },
): Promise<void> {
  const { store, logger, notifications } = host.parts;
  // What a process that died mid-send left pending (any run's), and retries coming due.
  const sweep = startOutboxSweep(notifications, logger);
  let stopped: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (stopped = resolve));
  try {
    logger.info(
      { event: 'daemon.connection', target: connection.description },
      `daemon: runs go to ${connection.description}`,
    );
    const daemon = await startDaemon({
      playbooksDir: options.folder.dir,
      loadOptions: options.loadOptions,
      store,
      logger,
      leaseTtlMs: options.leaseTtlMs,
      // Team mode (a shared store): one leader among the daemons by the store's lock; it only queues, workers run.
      ...(isQueueStore(store)
        ? { teamLeadership: store, execute: createFireQueuer({ store, logger, env: io.env }) }
        : {
            execute: createFireDriver({
              ...host.runParts(connection),
              embeddedSimulator: options.target === 'simulator',
              notifications,
            }),
          }),
    }).catch((error: unknown) => {
      // The folder changed between the check above and the start.
      if (isSchedulerError(error) && error.code === 'INVALID_PLAYBOOKS') {
        refuse(io, (error.details?.problems ?? []) as Problem[]);
        return undefined;
      }
      throw error;
    });
    if (!daemon) return;
    const stop = (signal: NodeJS.Signals): void => {
      logger.info({ event: 'daemon.signal', signal }, `daemon: ${signal}: stopping`);
      daemon.stop().then(stopped, stopped);
    };
    const reload = (): void => {
      logger.info({ event: 'daemon.signal', signal: 'SIGHUP' }, 'daemon: SIGHUP: reloading the playbooks');
      void daemon.reload();
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    process.on('SIGHUP', reload);
    await done;
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    process.off('SIGHUP', reload);
    io.exitCode = ExitCode.success;
  } finally {
    await sweep.stop();
  }
}
