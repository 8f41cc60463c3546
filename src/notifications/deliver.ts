/**
 * Delivery from the outbox: each pending notification is claimed (a lease on its row), sent
 * with its key as idempotency key, then marked sent; a failed send is tried again after an
 * exponential backoff, up to `retry.maxAttempts` tries, then given up. Every failure is logged
 * as one JSON line; nothing here throws to the run that caused the notification.
 *
 * Exactly once, by the store's claim: only a pending row whose claim is absent or lapsed (or
 * held by a dead process) is claimed, by one sender, this process's other deliveries included;
 * a sent row is never claimed again. One window remains: a process killed after the channel
 * took the message and before the row is marked sent leaves it pending, and the next process
 * sends it again, with the same idempotency key (see docs/notifications.md).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage } from '../errors/index.js';
import type { Logger } from '../logging/index.js';
import { isDeadLeaseOwner, newLeaseOwner, type NotificationRecord, type RunStore } from '../store/index.js';
import { sendNotification, SEND_TIMEOUT_MS, type SendNotification } from './channels.js';
import type { NotificationConfig, RetrySettings } from './config.js';

export interface NotifierOptions {
  store: Pick<RunStore, 'listNotifications' | 'claimNotification' | 'settleNotification'>;
  config: NotificationConfig;
  logger: Logger;
  /** @default Date.now */
  now?: () => number;
  /** How the notifier waits for a retry that is due. @default a timer */
  wait?: (ms: number) => Promise<void>;
  /** @default the real channels */
  send?: SendNotification;
  /** How long a claim lasts: longer than a send may take, so a live sender keeps its row. @default 2 × the send timeout */
  claimTtlMs?: number;
}

export interface DeliveryReport {
  sent: number;
  /** Tried, failed, to be tried again later (by this process when it waits, else the next). */
  retrying: number;
  /** Given up: every try failed, or the channel is no longer configured. */
  failed: number;
  /** Claimed by another live process: its to send. */
  skipped: number;
}

export interface Notifier {
  /**
   * Sends the pending notifications (of one run, or all). With `untilSettled`, waits out the
   * backoff of failed sends and tries again until each is sent or given up; otherwise a failed
   * send stays pending for a later call (a daemon's next sweep).
   */
  deliverPending(filter?: { runId?: string; untilSettled?: boolean }): Promise<DeliveryReport>;
}

/** The delay before try `attempt + 1`: the initial delay doubled per try, at most `maxDelayMs`. */
export function retryDelayMs(retry: RetrySettings, attempt: number): number {
  return Math.min(retry.maxDelayMs, retry.initialDelayMs * 2 ** Math.max(0, attempt - 1));
}

/** What one notifier's sends share: where the rows are, how to send, and the name its claims carry. */
interface Delivery {
  store: NotifierOptions['store'];
  config: NotificationConfig;
  logger: Logger;
  now: () => number;
  send: SendNotification;
  claimTtlMs: number;
  owner: string;
}

type Outcome = keyof DeliveryReport | 'notDue';

export function createNotifier(options: NotifierOptions): Notifier {
  const { store, config, logger } = options;
  const now = options.now ?? Date.now;
  const wait = options.wait ?? ((ms: number) => sleep(ms));
  const delivery: Delivery = {
    store,
    config,
    logger,
    now,
    send: options.send ?? sendNotification,
    claimTtlMs: options.claimTtlMs ?? 2 * SEND_TIMEOUT_MS,
    // One owner per notifier: its claims name this process, so another on this host can tell when it died.
    owner: newLeaseOwner(),
  };

  return {
    async deliverPending(filter = {}) {
      const report: DeliveryReport = { sent: 0, retrying: 0, failed: 0, skipped: 0 };
      for (;;) {
        const pending = await store.listNotifications({
          state: 'pending',
          limit: 500,
          ...(filter.runId === undefined ? {} : { runId: filter.runId }),
        });
        let nextDueMs = Infinity;
        const counted = { sent: 0, retrying: 0, failed: 0, skipped: 0 };
        for (const row of pending) {
          const outcome = await attemptLogged(delivery, row);
          if (outcome === 'notDue') nextDueMs = Math.min(nextDueMs, Date.parse(row.nextAttemptAt));
          else counted[outcome] += 1;
          if (outcome === 'retrying')
            nextDueMs = Math.min(nextDueMs, now() + retryDelayMs(config.retry, row.attempts + 1));
        }
        report.sent += counted.sent;
        report.failed += counted.failed;
        report.skipped = counted.skipped;
        report.retrying = counted.retrying;
        if (!filter.untilSettled || nextDueMs === Infinity) return report;
        await wait(Math.max(0, nextDueMs - now()));
      }
    },
  };
}

/** `attempt`, with a store failure logged and counted as skipped instead of thrown to the run. */
async function attemptLogged(delivery: Delivery, row: NotificationRecord): Promise<Outcome> {
  try {
    return await attempt(delivery, row);
  } catch (error) {
    // The store failed (not the channel): the row stays pending for the next process.
    delivery.logger.error(
      { event: 'notification.storeFailed', key: row.key, runId: row.runId, err: error },
      `notification ${row.key}: the outbox could not be updated (${errorMessage(error)}); it stays pending`,
    );
    return 'skipped';
  }
}

/** Sends `row` once if this process can claim it; what became of it. */
async function attempt(delivery: Delivery, row: NotificationRecord): Promise<Outcome> {
  const { store, config, logger, now, owner } = delivery;
  let takeOverFrom: string | undefined;
  if (row.claimedBy && Date.parse(row.claimExpiresAt ?? '') > now()) {
    // A live sender has it (another process, or this one's other delivery: a sweep and a run's
    // own share this owner); a dead one on this host (killed mid-send) is taken over at once.
    if (row.claimedBy === owner || !isDeadLeaseOwner(row.claimedBy)) return 'skipped';
    takeOverFrom = row.claimedBy;
  }
  if (Date.parse(row.nextAttemptAt) > now()) return 'notDue';
  const claimed = await store.claimNotification(
    row.key,
    owner,
    delivery.claimTtlMs,
    takeOverFrom ? { takeOverFrom } : {},
  );
  if (!claimed) return 'skipped';
  const facts = factsOf(claimed);
  const channel = config.channels.get(claimed.channel);
  if (!channel) {
    const error = `the channel '${claimed.channel}' is no longer configured in fleetbook.yaml`;
    await store.settleNotification(claimed.key, owner, { state: 'failed', error });
    logger.error(
      { ...facts, event: 'notification.failed', error, gaveUp: true },
      `notification ${claimed.key} not sent: ${error}`,
    );
    return 'failed';
  }
  try {
    await delivery.send(channel, claimed);
  } catch (caught) {
    return sendFailed(delivery, claimed, channel.type, errorMessage(caught));
  }
  // Sent: from here to the settle is the at-least-once window (a crash here sends it again, same key).
  await store.settleNotification(claimed.key, owner, { state: 'sent' });
  logger.info({ ...facts, event: 'notification.sent', channelType: channel.type }, `notification ${claimed.key} sent`);
  return 'sent';
}

/** The fields every log line about a claimed notification carries. */
function factsOf(claimed: NotificationRecord): Record<string, unknown> {
  return {
    event: 'notification',
    key: claimed.key,
    runId: claimed.runId,
    channel: claimed.channel,
    attempt: claimed.attempts,
  };
}

/** A failed send: given up after the last try, else pending again after the backoff. */
async function sendFailed(
  delivery: Delivery,
  claimed: NotificationRecord,
  channelType: string,
  error: string,
): Promise<Outcome> {
  const { store, config, logger, now, owner } = delivery;
  const facts = factsOf(claimed);
  if (claimed.attempts >= config.retry.maxAttempts) {
    await store.settleNotification(claimed.key, owner, { state: 'failed', error });
    logger.error(
      { ...facts, event: 'notification.failed', channelType, error, gaveUp: true },
      `notification ${claimed.key} not sent after ${claimed.attempts} tries: ${error}`,
    );
    return 'failed';
  }
  const retryInMs = retryDelayMs(config.retry, claimed.attempts);
  await store.settleNotification(claimed.key, owner, { state: 'pending', retryAtMs: now() + retryInMs, error });
  logger.warn(
    { ...facts, event: 'notification.retry', channelType, error, retryInMs },
    `notification ${claimed.key} failed (try ${claimed.attempts} of ${config.retry.maxAttempts}): ${error}; trying again in ${retryInMs} ms`,
  );
  return 'retrying';
}
