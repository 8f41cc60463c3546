/**
 * Who hears of what: each channel's default rule (fleetbook.yaml, `on: [failed]` unless set)
 * and the playbook's `notify:` rules, applied to the events of a run's end.
 */
import { didYouMean, UsageError } from '../errors/index.js';
import { NotificationEvent, type NotifyRule, type Playbook, type Problem } from '../playbook/index.js';
import { notificationKeyOf, type NewNotification } from '../store/index.js';
import type { NotificationConfig } from './config.js';
import { NotificationErrorCode } from './error-codes.js';
import { composeMessage, type RunEnding } from './message.js';

/**
 * The events of `ending`, the most specific first: a run that succeeded with failed loop items
 * (within their tolerance) is `toleranceUsed` and `succeeded`.
 */
export function endingEvents(ending: Pick<RunEnding, 'status' | 'steps'>): NotificationEvent[] {
  switch (ending.status) {
    case 'failed':
      return [NotificationEvent.failed];
    case 'waiting':
      return [NotificationEvent.waiting];
    case 'succeeded':
      return ending.steps.some((step) => step.kind === 'item' && step.status === 'failed')
        ? [NotificationEvent.toleranceUsed, NotificationEvent.succeeded]
        : [NotificationEvent.succeeded];
    default:
      // Interrupted (resumable) or anything else: not an end anyone is told of.
      return [];
  }
}

/** The outbox key, also the idempotency key the channel is sent: one per (run, event, occurrence, channel). */
export function notificationKey(runId: string, event: string, occurrence: string, channel: string): string {
  return notificationKeyOf({ runId, event, segment: occurrence, channel });
}

/**
 * The notifications `ending` causes: for each configured channel whose default rule or a rule
 * of the playbook takes one of its events, one message about the most specific of them (a
 * channel taking both `succeeded` and `toleranceUsed` is told once). Dry runs notify only
 * through rules that say `dryRun: true`.
 */
export function notificationsFor(
  ending: RunEnding,
  config: NotificationConfig,
  rules: readonly NotifyRule[] = [],
): NewNotification[] {
  const events = endingEvents(ending);
  if (events.length === 0) return [];
  return [...config.channels.values()].flatMap((channel): NewNotification[] => {
    const takes = (event: NotificationEvent): boolean =>
      (!ending.dryRun && channel.on.includes(event)) ||
      rules.some(
        (rule) => rule.channels.includes(channel.name) && rule.on.includes(event) && (!ending.dryRun || rule.dryRun),
      );
    const event = events.find(takes);
    if (!event) return [];
    return [
      {
        key: notificationKey(ending.runId, event, ending.occurrence, channel.name),
        runId: ending.runId,
        event,
        segment: ending.occurrence,
        channel: channel.name,
        message: composeMessage(event, ending, { serverUrl: config.serverUrl }),
      },
    ];
  });
}

/**
 * The `notify:` channels of `playbook` that fleetbook.yaml does not configure, as located problems
 * (`fleetbook validate` lists them): none when it configures no channel at all (see `checkNotifyRules`).
 */
export function unknownChannelProblems(playbook: Pick<Playbook, 'notify'>, config: NotificationConfig): Problem[] {
  const known = [...config.channels.keys()];
  if (known.length === 0) return [];
  return (playbook.notify ?? []).flatMap((rule) =>
    rule.channels.flatMap((channel, index): Problem[] =>
      config.channels.has(channel)
        ? []
        : [
            {
              code: NotificationErrorCode.unknownChannel,
              message: `notify channels[${index}] '${channel}' is not a channel of ${config.file ?? 'fleetbook.yaml'} (channels: ${known.join(', ')}).${didYouMean(channel, known)}`,
              severity: 'error',
              file: rule.location.file,
              line: rule.location.line,
              column: rule.location.column,
              pointer: `${rule.location.pointer}/channels/${index}`,
            },
          ],
    ),
  );
}

/**
 * Refuses (exit 2) a `notify:` rule naming a channel fleetbook.yaml does not configure, when it
 * configures channels: a typo would silence the rule. Without a `notifications:` section the
 * rules are inert (a bundled playbook run where no channel is set up): the warning returned says so.
 */
export function checkNotifyRules(playbook: Pick<Playbook, 'name' | 'notify'>, config: NotificationConfig): string[] {
  if ((playbook.notify ?? []).length === 0) return [];
  if (config.channels.size === 0)
    return [
      `playbook ${playbook.name} has notify: rules, but no notification channel is configured (notifications.channels in fleetbook.yaml): nothing will be sent`,
    ];
  const [first] = unknownChannelProblems(playbook, config);
  if (first)
    throw new UsageError(`${first.file}:${first.line}:${first.column}: ${first.message}`, first.code, {
      pointer: first.pointer,
    });
  return [];
}
