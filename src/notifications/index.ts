/**
 * Notifications: channels of fleetbook.yaml, rules of playbooks, messages composed from a run's
 * end, and their durable, exactly-once delivery through the run store's outbox. The engine
 * knows nothing of it: it records what the `notify` hook the CLI and the scheduler pass it
 * returns, with the run's end; the CLI, the daemon and the worker deliver.
 */
import { errorMessage } from '../errors/index.js';
import type { SecretRegistry, Logger } from '../logging/index.js';
import type { NotifyRule } from '../playbook/index.js';
import type { NewNotification, RunStore } from '../store/index.js';
import { loadNotificationConfig, type NotificationConfig } from './config.js';
import { createNotifier, type DeliveryReport, type Notifier } from './deliver.js';
import type { RunEnding } from './message.js';
import { notificationsFor, unknownChannelProblems } from './rules.js';

export {
  ChannelType,
  DEFAULT_RETRY,
  loadNotificationConfig,
  noNotifications,
  parseNotificationConfig,
  type Channel,
  type EmailChannel,
  type NotificationConfig,
  type RetrySettings,
  type WebhookChannel,
} from './config.js';
export { NotificationErrorCode } from './error-codes.js';
export {
  composeMessage,
  formatDuration,
  messageTitle,
  renderHtml,
  renderMarkdown,
  renderText,
  type NotificationMessage,
  type RunEnding,
} from './message.js';
export {
  checkNotifyRules,
  emailChannelProblems,
  endingEvents,
  notificationKey,
  notificationsFor,
  unknownChannelProblems,
  type EmailStepUse,
} from './rules.js';
export {
  emailMessageId,
  MailNotSentError,
  sendMail,
  sendNotification,
  slackPayload,
  teamsPayload,
  webhookPayload,
  type MailReceipt,
  type OutgoingMail,
} from './channels.js';
export { createChannelMailer, emailChannels, type ChannelMailer } from './mailer.js';
export { createNotifier, retryDelayMs, type DeliveryReport, type Notifier, type NotifierOptions } from './deliver.js';

/** The notifications of one process: its settings and the notifier that delivers from its store. */
export interface Notifications {
  config: NotificationConfig;
  notifier: Notifier;
  /** The engine's `notify` hook for runs of a playbook with these rules. */
  hookFor(rules: readonly NotifyRule[] | undefined): (ending: RunEnding) => NewNotification[];
  /**
   * Sends what is pending (of one run, or all), waiting out retries when `untilSettled`. Never
   * throws: a failure is logged, and a notification never changes a run's result.
   */
  deliver(filter?: { runId?: string; untilSettled?: boolean }): Promise<DeliveryReport | undefined>;
}

/**
 * Reads fleetbook.yaml in `cwd` (a mistake is a UsageError, exit 2) and registers the values it
 * read from the environment as secrets, so no log line shows them. Done before a run starts.
 */
export function readNotificationConfig(options: {
  cwd: string;
  env: NodeJS.ProcessEnv;
  secrets: SecretRegistry;
}): NotificationConfig {
  const config = loadNotificationConfig(options.cwd, options.env);
  for (const value of config.secretValues) options.secrets.add(value);
  return config;
}

/** The notifications of a process using `store`, with `config` (see `readNotificationConfig`). */
export function createNotifications(
  config: NotificationConfig,
  options: { store: RunStore; logger: Logger },
): Notifications {
  const notifier = createNotifier({ store: options.store, config, logger: options.logger });
  return {
    config,
    notifier,
    hookFor: (rules) => {
      // Refused before a run by run, resume and the daemon's start; a playbook reloaded by a daemon
      // or loaded by a worker is not: its rules naming no channel here are said to send nothing.
      const unknown = unknownChannelProblems({ notify: [...(rules ?? [])] }, config);
      for (const problem of unknown)
        options.logger.warn(
          { event: 'notification.unknownChannel', file: problem.file, line: problem.line },
          `${problem.message} Nothing is sent to it.`,
        );
      return (ending) => notificationsFor(ending, config, rules ?? []);
    },
    async deliver(filter = {}) {
      try {
        return await notifier.deliverPending(filter);
      } catch (error) {
        options.logger.error(
          { event: 'notification.deliveryFailed', err: error, ...(filter.runId ? { runId: filter.runId } : {}) },
          `notifications could not be delivered (${errorMessage(error)}); they stay pending for the next process`,
        );
        return undefined;
      }
    },
  };
}

/**
 * Delivers what is pending in the store now and every `intervalMs` (a daemon or a worker):
 * notifications left by a process that died, and retries that came due.
 */
export function startOutboxSweep(
  notifications: Pick<Notifications, 'deliver'>,
  logger: Logger,
  intervalMs = 5000,
): { stop(): Promise<void> } {
  const sweep = async (): Promise<void> => {
    const report = await notifications.deliver();
    if (report) logger.debug({ event: 'notification.swept', ...report }, 'notifications: outbox swept');
  };
  let running: Promise<void> = sweep();
  const timer = setInterval(() => {
    running = running.then(sweep);
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
