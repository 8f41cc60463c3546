/**
 * Who hears of what: each channel's default rule (fleetbook.yaml, `on: [failed]` unless set)
 * and the playbook's `notify:` rules, applied to the events of a run's end.
 */
import { didYouMean, UsageError } from '../errors/index.js';
import {
  NotificationEvent,
  ProblemCode,
  type NotifyRule,
  type Playbook,
  type Problem,
  type SourceLocation,
} from '../playbook/index.js';
import { notificationKeyOf, type NewNotification } from '../store/index.js';
import type { NotificationConfig } from './config.js';
import { emailChannels } from './mailer.js';
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

/** An `email` step as the channel check sees it: the channel it names, and where it is written. */
export interface EmailStepUse {
  via?: string;
  location: SourceLocation;
}

/** The problem of one `email` step's channel, or undefined: `via:` must name an e-mail channel; without it there must be exactly one. */
function emailChannelProblem(
  use: EmailStepUse,
  config: NotificationConfig,
): Omit<Problem, 'file' | 'line' | 'column' | 'pointer'> | undefined {
  const channels = [...emailChannels(config).keys()];
  const file = config.file ?? 'fleetbook.yaml';
  if (use.via !== undefined && channels.includes(use.via)) return undefined;
  if (use.via === undefined && channels.length === 1) return undefined;
  const listed = channels.length === 0 ? 'it configures none' : `e-mail channels: ${channels.join(', ')}`;
  // Nothing configured at all: a rehearsal still puts the message in the simulator's outbox.
  const severity = config.channels.size === 0 ? 'warning' : 'error';
  const consequence = severity === 'warning' ? ' Only a rehearsal (--target simulator) can run it.' : '';
  return {
    code: ProblemCode.emailChannel,
    severity,
    message:
      use.via === undefined
        ? `email: no \`via:\` and not exactly one e-mail channel in ${file} (${listed}).${consequence}`
        : `email via: '${use.via}' is not an e-mail channel of ${file} (${listed}).${didYouMean(use.via, channels)}${consequence}`,
  };
}

/** The `email` steps whose channel fleetbook.yaml does not settle, as located problems (`fleetbook validate`, before a run). */
export function emailChannelProblems(uses: readonly EmailStepUse[], config: NotificationConfig): Problem[] {
  return uses.flatMap((use): Problem[] => {
    const problem = emailChannelProblem(use, config);
    if (problem === undefined) return [];
    const { file, line, column } = use.location;
    const pointer = `${use.location.pointer}/email${use.via === undefined ? '' : '/via'}`;
    return [{ ...problem, file, line, column, pointer } as Problem];
  });
}
