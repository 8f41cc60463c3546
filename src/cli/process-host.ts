/**
 * The process host: the one place a command assembles the parts of a process that runs or
 * continues runs. Every such command (`run`, `resume`, `approve`/`deny`, `schedules trigger`,
 * `daemon`, `worker`, `server`, `demo`) gets the same parts, built the same way, in the same
 * order: run settings and notification channels resolved first (a bad one is refused before
 * anything is stored), then the store, the logger that scrubs the secrets registry, the
 * notifier, and the connection to the platform or the embedded simulator when a run needs one.
 * Closing releases them in the reverse order.
 */
import type { Writable } from 'node:stream';
import type { Caller, Door, RunParts } from '../admission/index.js';
import { userInfo } from 'node:os';
import type { pino } from 'pino';
import { UsageError } from '../errors/index.js';
import { createSecretRegistry, type Logger, type SecretRegistry } from '../logging/index.js';
import {
  checkNotifyRules,
  createChannelMailer,
  emailChannelProblems,
  createNotifications,
  emailChannels,
  readNotificationConfig,
  type Notifications,
} from '../notifications/index.js';
import type { Playbook } from '../playbook/index.js';
import { openRunStore, TokenRole, type RunStore } from '../store/index.js';
import { openConnection, profileStore, type Connection, type ConnectionOptions } from './connection.js';
import type { CliIo } from './io.js';
import { LOG_LEVELS } from './log-levels.js';
import { createCommandLogger, type LoggingOptions } from './run-session.js';
import { runSettingsOf, type RunSettings } from './run-settings.js';
import { keepWorld } from './saved-world.js';
import { rehearsalMailer } from './rehearsal-mailer.js';
import { emailStepUses } from './email-uses.js';

export interface HostOptions extends LoggingOptions {
  profile?: string | undefined;
  /** `simulator`, or absent for the platform of the FLEETBOOK_* variables and the profile. */
  target?: string | undefined;
  /** The logger's readable view (default: as the output format says). */
  readable?: boolean;
  /** Where the log lines go instead of standard output (the live progress of a run). */
  screen?: NodeJS.WritableStream;
  /**
   * Wraps the opened store (live progress, metrics; every part then writes through the wrapper)
   * and adds another destination of the JSON lines (the metrics of a server, daemon or worker).
   */
  instrument?: (opened: RunStore) => { store?: RunStore; tee?: { stream: Writable; level: pino.Level } };
  /** The notifier's log lines carry this run. */
  runId?: string;
  /**
   * A store of the command's own instead of the configured one (the demo's runs stay out of the
   * operator's history); closed with the host all the same.
   */
  store?: RunStore;
}

/** The parts of the process, before a connection (a run that is refused opens none). */
export interface HostParts extends RunSettings {
  store: RunStore;
  /** The store as opened (the wrapper's inner store), for what must not be observed. */
  opened: RunStore;
  logger: Logger;
  secrets: SecretRegistry;
  notifications: Notifications;
}

export interface ProcessHost {
  parts: HostParts;
  /**
   * Connects to the target (the host's `target` and profile): the embedded simulator or the
   * platform; closed with the host.
   */
  connect(
    options?: Pick<ConnectionOptions, 'timeScale' | 'simulator' | 'region'> & {
      logger?: Logger;
      target?: string | undefined;
      /** The run whose embedded simulator's world is kept beside it when the host closes (`saved-world.ts`). */
      keepWorldOf?: string;
    },
  ): Promise<Connection>;
  /** What a run driven here needs: the parts and a connection's client. */
  runParts(connection: Connection): RunParts;
  /**
   * Warns of `notify:` rules that name no configured channel (nothing would be sent); refuses
   * (exit 2) an `email` step whose channel fleetbook.yaml does not settle.
   */
  warnNotifyRules(playbook: Pick<Playbook, 'name' | 'notify' | 'steps'>): void;
}

/** A person at this machine: the operating-system user, with every role (they hold the store itself). */
export function localCaller(door: Door): Caller {
  return { name: userInfo().username, role: TokenRole.admin, door };
}

function checkLogLevel(level: string): void {
  if (!(LOG_LEVELS as readonly string[]).includes(level))
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got '${level}'.`, 'INVALID_OPTION');
}

/** Assembles the host, runs `work` with it, and closes what it opened, whatever `work` did. */
export async function withProcessHost<T>(
  io: CliIo,
  options: HostOptions,
  work: (host: ProcessHost) => Promise<T>,
): Promise<T> {
  // Resolved before anything is stored: a bad FLEETBOOK_RETENTION or notification channel is refused first.
  const settings = runSettingsOf(io.env);
  const secrets = createSecretRegistry();
  const notificationConfig = readNotificationConfig({ cwd: process.cwd(), env: io.env, secrets });
  checkLogLevel(options.logLevel);
  const opened = options.store ?? (await openRunStore({ env: io.env, store: profileStore(options.profile) }));
  /** Each connection, and what saves its world before it closes (a rehearsal's). */
  const connections: Array<{ connection: Connection; keep?: () => void }> = [];
  try {
    const instrumented = options.instrument?.(opened) ?? {};
    const store = instrumented.store ?? opened;
    const logger = createCommandLogger(io, options, secrets, options.readable, options.screen, instrumented.tee);
    const notifications = createNotifications(notificationConfig, {
      store,
      logger: options.runId ? logger.child({ runId: options.runId }) : logger,
    });
    const parts: HostParts = { ...settings, store, opened, logger, secrets, notifications };
    return await work({
      parts,
      async connect(connect = {}) {
        const connection = await openConnection({
          store,
          target: connect.target ?? options.target,
          profile: options.profile,
          timeScale: connect.timeScale,
          ...(connect.region ? { region: connect.region } : {}),
          ...(connect.simulator ? { simulator: connect.simulator } : {}),
          env: io.env,
          logger: connect.logger ?? logger,
          secrets,
        });
        const runId = connect.keepWorldOf;
        connections.push({
          connection,
          ...(runId ? { keep: () => keepWorld(io.env, runId, connection, secrets, logger) } : {}),
        });
        return connection;
      },
      runParts: (connection) => {
        // A rehearsal mails no one: the embedded simulator's outbox takes what `email` steps send.
        const channels = [...emailChannels(notificationConfig).keys()];
        const mailer = connection.simulator
          ? rehearsalMailer(connection.simulator, channels, notificationConfig.serverUrl)
          : channels.length > 0
            ? createChannelMailer(notificationConfig)
            : undefined;
        return { ...parts, client: connection.client, ...(mailer ? { mailer } : {}) };
      },
      warnNotifyRules(playbook) {
        for (const warning of checkNotifyRules(playbook, notificationConfig))
          logger.warn({ event: 'notification.noChannels', playbook: playbook.name }, warning);
        for (const problem of emailChannelProblems(emailStepUses(playbook), notificationConfig)) {
          const where = `${problem.file}:${problem.line}:${problem.column}`;
          if (problem.severity === 'error')
            throw new UsageError(`${where}: ${problem.message}`, problem.code, { pointer: problem.pointer });
          logger.warn({ event: 'email.noChannel', playbook: playbook.name }, `${where}: ${problem.message}`);
        }
      },
    });
  } finally {
    for (const { connection, keep } of connections.reverse()) {
      // A rehearsal's world outlives its process: approve, deny and resume of the run continue on it.
      keep?.();
      await connection.close();
    }
    await opened.close();
  }
}
