/**
 * Notifications: channels of fleetbook.yaml, rules of playbooks, messages composed from a run's
 * end, and their durable, exactly-once delivery through the run store's outbox. The engine
 * knows nothing of it: it records what the `notify` hook the CLI and the scheduler pass it
 * returns, with the run's end; the CLI, the daemon and the worker deliver.
 */
import type { SecretRegistry, Logger } from '../logging/index.js';
import type { NotifyRule } from '../playbook/index.js';
import type { NewNotification, RunStore } from '../store/index.js';
import { loadNotificationConfig, type NotificationConfig } from './config.js';
import { createNotifier, type DeliveryReport, type Notifier } from './deliver.js';
import type { RunEnding } from './message.js';
import { notificationsFor } from './rules.js';

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
export { checkNotifyRules, endingEvents, notificationKey, notificationsFor } from './rules.js';
export { emailMessageId, sendNotification, slackPayload, teamsPayload, webhookPayload } from './channels.js';
export { createNotifier, retryDelayMs, type DeliveryReport, type Notifier, type NotifierOptions } from './deliver.js';

/** The notification side of one process: its settings, and the notifier that delivers from the store. */
export interface Notifications {
  config: NotificationConfig;
  notifier: Notifier;
  /** The engine's `notify` hook for runs of a playbook with these rules. */
  hookFor(rules: readonly NotifyRule[] | undefined): (ending: RunEnding) => NewNotification[];
}

/**
 * Reads fleetbook.yaml in `cwd` (a mistake is a UsageError, exit 2), registers the values it
 * read from the environment as secrets, and makes the notifier of `store`.
 */
export function openNotifications(options: {
  cwd: string;
  env: NodeJS.ProcessEnv;
  store: RunStore;
  logger: Logger;
  secrets: SecretRegistry;
}): Notifications {
  const config = loadNotificationConfig(options.cwd, options.env);
  for (const value of config.secretValues) options.secrets.add(value);
  const notifier = createNotifier({ store: options.store, config, logger: options.logger });
  return {
    config,
    notifier,
    hookFor: (rules) => (ending) => notificationsFor(ending, config, rules ?? []),
  };
}

/**
 * Records and sends the notifications of a run that now waits for a person (`waiting`): the
 * approval gate calls this once the run is `waiting` in the store. The key holds the gate's
 * step and the run's resume count, so waiting at another gate (or again after a resume) is a new
 * event, and a call repeated after a crash records nothing twice.
 */
export async function notifyRunWaiting(
  store: RunStore,
  notifications: Notifications,
  rules: readonly NotifyRule[] | undefined,
  ending: Omit<RunEnding, 'status'> & { waiting: NonNullable<RunEnding['waiting']> },
): Promise<DeliveryReport> {
  const occurrence = `${ending.waiting.step}@${ending.occurrence}`;
  const items = notificationsFor({ ...ending, occurrence, status: 'waiting' }, notifications.config, rules ?? []);
  if (items.length > 0) await store.addNotifications(items);
  return notifications.notifier.deliverPending({ runId: ending.runId, untilSettled: true });
}
