/**
 * The outbox's rows as every store keeps them (scalars for what is filtered on, the message as
 * JSON text), and the one pair of conversions they share.
 */
import { decodePayload, encodePayload } from './payload.js';
import type { ResolvedStoreOptions } from './run-row.js';
import { StoreError, StoreErrorCode } from './store-error.js';
import type { NewNotification, NotificationRecord, NotificationState } from './types.js';

export interface NotificationRow {
  key: string;
  runId: string;
  event: string;
  segment: string;
  channel: string;
  messageJson: string;
  state: NotificationState;
  attempts: number;
  createdAt: string;
  nextAttemptAtMs: number;
  sentAt: string | null;
  lastError: string | null;
  claimedBy: string | null;
  claimExpiresAtMs: number | null;
}

/** The key of the one notification of (run, event, segment, channel): its idempotency key too. */
export function notificationKeyOf(parts: Pick<NewNotification, 'runId' | 'event' | 'segment' | 'channel'>): string {
  return `${parts.runId}/${parts.event}/${parts.segment}/${parts.channel}`;
}

export function newNotificationToRow(item: NewNotification, options: ResolvedStoreOptions): NotificationRow {
  const parts = [item.runId, item.event, item.segment, item.channel];
  if (parts.some((part) => typeof part !== 'string' || part.length === 0))
    throw new StoreError(
      'A notification needs a run, an event, a segment and a channel.',
      StoreErrorCode.invalidArgument,
    );
  // The key is what a receiver dedupes by: one made otherwise could name another notification.
  const expected = notificationKeyOf(item);
  if (item.key !== expected)
    throw new StoreError(
      `A notification's key is <run>/<event>/<segment>/<channel> ('${expected}'), not '${item.key}'.`,
      StoreErrorCode.invalidArgument,
    );
  const now = options.now();
  return {
    key: item.key,
    runId: item.runId,
    event: item.event,
    segment: item.segment,
    channel: item.channel,
    messageJson: encodePayload(item.message, `the notification ${item.key}`, options.maxPayloadBytes),
    state: 'pending',
    attempts: 0,
    createdAt: now.toISOString(),
    nextAttemptAtMs: now.getTime(),
    sentAt: null,
    lastError: null,
    claimedBy: null,
    claimExpiresAtMs: null,
  };
}

export function rowToNotification(row: NotificationRow): NotificationRecord {
  const record: NotificationRecord = {
    key: row.key,
    runId: row.runId,
    event: row.event,
    segment: row.segment,
    channel: row.channel,
    message: decodePayload<unknown>(row.messageJson),
    state: row.state,
    attempts: Number(row.attempts),
    createdAt: row.createdAt,
    nextAttemptAt: new Date(Number(row.nextAttemptAtMs)).toISOString(),
  };
  if (row.sentAt !== null) record.sentAt = row.sentAt;
  if (row.lastError !== null) record.lastError = row.lastError;
  if (row.claimedBy !== null && row.claimExpiresAtMs !== null) {
    record.claimedBy = row.claimedBy;
    record.claimExpiresAt = new Date(Number(row.claimExpiresAtMs)).toISOString();
  }
  return record;
}

/**
 * Whether `row` may be claimed at `nowMs` (the rule every store's claim applies): pending (a sent
 * or given-up row never is), due, and free: never claimed, its claim lapsed, or held by
 * `takeOverFrom`, a holder the caller knows to be dead. A live claim is never claimed again, not
 * even by its own holder: two deliveries in one process (a sweep and a run's own) share an
 * owner, and the second would send the message the first is sending.
 */
export function claimable(row: NotificationRow, nowMs: number, takeOverFrom?: string): boolean {
  return (
    row.state === 'pending' &&
    row.nextAttemptAtMs <= nowMs &&
    (row.claimedBy === null ||
      (row.claimExpiresAtMs ?? 0) <= nowMs ||
      (takeOverFrom !== undefined && row.claimedBy === takeOverFrom))
  );
}

/** Whether `row` is `other`'s notification: the same key, or the same (run, event, segment, channel). */
export function sameNotification(row: NotificationRow, other: NotificationRow): boolean {
  return (
    row.key === other.key ||
    (row.runId === other.runId &&
      row.event === other.event &&
      row.segment === other.segment &&
      row.channel === other.channel)
  );
}

/** The columns a settled send writes. */
export function settledColumns(
  outcome:
    { state: 'sent' } | { state: 'pending'; retryAtMs: number; error: string } | { state: 'failed'; error: string },
  options: ResolvedStoreOptions,
): Pick<NotificationRow, 'state' | 'sentAt' | 'lastError'> & { nextAttemptAtMs: number | null } {
  const now = options.now();
  if (outcome.state === 'sent')
    return { state: 'sent', sentAt: now.toISOString(), lastError: null, nextAttemptAtMs: null };
  if (outcome.state === 'pending')
    return { state: 'pending', sentAt: null, lastError: outcome.error, nextAttemptAtMs: Math.ceil(outcome.retryAtMs) };
  return { state: 'failed', sentAt: null, lastError: outcome.error, nextAttemptAtMs: null };
}
