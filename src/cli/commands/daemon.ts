/**
 * `fleetbook daemon [--playbooks dir]`: the scheduler, until SIGTERM. Refuses to start (exit
 * 2, located problems) when a playbook of the folder is invalid; connects like `fleetbook
 * run`; logs JSON lines on standard output; SIGHUP reloads the folder; SIGTERM or SIGINT
 * stops firing, stops running runs at a journaled point, releases the lease and exits 0.
 */
import type { Command } from 'commander';
import { ExitCode, UsageError } from '../../errors/index.js';
import { parseDuration } from '../../expressions/index.js';
import { createSecretRegistry } from '../../logging/index.js';
import { hasErrors, type Problem } from '../../playbook/index.js';
import { createEngineExecutor, isSchedulerError, loadPlaybookFolder, startDaemon } from '../../scheduler/index.js';
import { openRunStore } from '../../store/index.js';
import { openConnection } from '../connection.js';
import type { CliIo } from '../io.js';
import { formatProblems } from '../problems.js';
import { createCommandLogger, LOG_LEVELS, parseTimeScale } from '../run-session.js';

interface DaemonCommandOptions {
  playbooks: string;
  target?: string;
  profile?: string;
  timeScale: string;
  leaseTtl: string;
  logFile?: string;
  logLevel: string;
}

function refuse(io: CliIo, problems: readonly Problem[]): void {
  io.stderr.write(`${formatProblems(problems)}\n\nfleetbook daemon: not started; fix the errors above (fleetbook validate <file> checks one file).\n`);
  io.exitCode = ExitCode.usage;
}

export function registerDaemonCommand(program: Command, io: CliIo): void {
  program
    .command('daemon')
    .description('fire the schedules of every playbook in a folder, until SIGTERM (one daemon per store; others wait as standbys)')
    .option('--playbooks <dir>', 'folder of playbooks', 'playbooks')
    .option('--target <target>', "'simulator': run against the embedded simulator")
    .option('--time-scale <n>', 'with --target simulator: simulated ms per real ms', '60')
    .option('--profile <name>', 'connection profile of fleetbook.yaml')
    .option('--lease-ttl <duration>', 'how long the scheduler lease outlives a daemon that stopped renewing it', '30s')
    .option('--log-file <path>', 'also write the JSON log lines to this file')
    .option('--log-level <level>', `one of ${LOG_LEVELS.join(', ')}`, 'info')
    .action(async (options: DaemonCommandOptions) => {
      const timeScale = parseTimeScale(options.timeScale);
      const leaseTtlMs = parseDuration(options.leaseTtl);
      if (leaseTtlMs === undefined || leaseTtlMs < 1000) throw new UsageError(`--lease-ttl must be a duration of at least 1s, like 30s or 2m, got '${options.leaseTtl}'.`, 'INVALID_OPTION');

      // Checked before connecting: an invalid folder costs no simulator start or token.
      const folder = loadPlaybookFolder(options.playbooks);
      if (hasErrors(folder.problems)) return refuse(io, folder.problems);

      const secrets = createSecretRegistry();
      // A daemon's output is read by machines: always JSON lines.
      const logger = createCommandLogger(io, options, secrets, false);

      const store = await openRunStore({ env: io.env });
      const connection = await openConnection({ target: options.target, profile: options.profile, timeScale, env: io.env, logger, secrets }).catch(async (error: unknown) => {
        await store.close();
        throw error;
      });
      let stopped: () => void = () => undefined;
      const done = new Promise<void>((resolve) => (stopped = resolve));
      try {
        logger.info({ event: 'daemon.connection', target: connection.description }, `daemon: runs go to ${connection.description}`);
        const daemon = await startDaemon({
          playbooksDir: folder.dir,
          store,
          logger,
          leaseTtlMs,
          execute: createEngineExecutor({ client: connection.client, store, logger, secrets, env: io.env }),
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
        await connection.close();
        await store.close();
      }
    });
}
