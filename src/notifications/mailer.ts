/**
 * The mailer of `email` steps: the e-mail channels of fleetbook.yaml, sending with the
 * notifications' SMTP code (`sendMail`) and their retry policy (`notifications.retry`). A reply
 * the server calls temporary (4xx, or no reply at all) is tried again after the policy's delay;
 * a permanent refusal (5xx) ends the send at once with the server's words.
 */
import { sleepOn, type Clock } from '../timers/index.js';
import { emailMessageId, MailNotSentError, sendMail, type MailReceipt, type OutgoingMail } from './channels.js';
import type { EmailChannel, NotificationConfig } from './config.js';
import { retryDelayMs } from './deliver.js';

/** What `email` steps send with (the steps module's `Mailer`, which this module cannot import). */
export interface ChannelMailer {
  channels: readonly string[];
  rehearsal?: string;
  serverUrl?: string;
  messageId(channel: string, key: string): string;
  send(
    channel: string,
    mail: OutgoingMail,
    options: { clock: Clock; signal: AbortSignal; onRetry?(attempt: number, delayMs: number, reason: string): void },
  ): Promise<MailReceipt>;
}

/** The e-mail channels of `config`, by name. */
export function emailChannels(config: NotificationConfig): Map<string, EmailChannel> {
  return new Map([...config.channels].filter((entry): entry is [string, EmailChannel] => entry[1].type === 'email'));
}

/** Sends through the e-mail channels of `config`; `send` is the SMTP exchange (a test's stand-in). */
export function createChannelMailer(config: NotificationConfig, send = sendMail): ChannelMailer {
  const channels = emailChannels(config);
  const channelOf = (name: string): EmailChannel => {
    const channel = channels.get(name);
    if (!channel) throw new Error(`'${name}' is not an e-mail channel of ${config.file ?? 'fleetbook.yaml'}`);
    return channel;
  };
  return {
    channels: [...channels.keys()],
    ...(config.serverUrl ? { serverUrl: config.serverUrl } : {}),
    messageId: (name, key) => emailMessageId(channelOf(name), key),
    async send(name, mail, { clock, signal, onRetry }) {
      const channel = channelOf(name);
      for (let attempt = 1; ; attempt += 1) {
        try {
          return await send(channel, mail);
        } catch (error) {
          const permanent = error instanceof MailNotSentError && error.permanent;
          if (permanent || attempt >= config.retry.maxAttempts || signal.aborted) throw error;
          const delayMs = retryDelayMs(config.retry, attempt);
          onRetry?.(attempt + 1, delayMs, (error as Error).message);
          await sleepOn(clock, delayMs, signal);
        }
      }
    },
  };
}
