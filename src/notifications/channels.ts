/**
 * Sending one notification to one channel: e-mail over SMTP (nodemailer), or an HTTP POST of
 * the channel's JSON (Slack-compatible `{text, blocks}`, a Teams MessageCard, or the generic
 * record). Every send carries the notification's key as its idempotency key (the
 * `Idempotency-Key` header; the e-mail's Message-ID is derived from it), so a receiver can
 * drop the second copy that a crash between a send and its record may cause. A send that does
 * not succeed throws, with a message that never holds the channel's URL or credentials.
 */
import { createHash } from 'node:crypto';
import nodemailer from 'nodemailer';
import { request } from 'undici';
import type { NewNotification } from '../store/index.js';
import type { Channel, EmailChannel, WebhookChannel } from './config.js';
import {
  messageFacts,
  messageTitle,
  renderHtml,
  renderMarkdown,
  renderTable,
  renderText,
  type NotificationMessage,
} from './message.js';

/** How long one send may take before it counts as failed. */
export const SEND_TIMEOUT_MS = 30_000;

export type SendNotification = (channel: Channel, notification: NewNotification) => Promise<void>;

/** The generic webhook's body: the message as recorded, with the key and a version. */
export function webhookPayload(notification: NewNotification): Record<string, unknown> {
  return { version: 1, idempotencyKey: notification.key, ...(notification.message as NotificationMessage) };
}

/** A Slack-compatible incoming-webhook body: `text` for notifications and old clients, `blocks` for the layout. */
export function slackPayload(message: NotificationMessage): Record<string, unknown> {
  const facts = messageFacts(message);
  return {
    text: renderMarkdown(message),
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: messageTitle(message).slice(0, 150) } },
      {
        type: 'section',
        // A section shows at most 10 fields; the rest go in the text below.
        fields: facts
          .slice(0, 10)
          .map(([label, value]) => ({ type: 'mrkdwn', text: `*${label}:*\n${value}`.slice(0, 2000) })),
      },
      ...(facts.length > 10
        ? [
            {
              type: 'section',
              text: {
                type: 'mrkdwn',
                text: facts
                  .slice(10)
                  .map(([label, value]) => `*${label}:* ${value}`)
                  .join('\n')
                  .slice(0, 3000),
              },
            },
          ]
        : []),
      ...(message.runUrl
        ? [
            {
              type: 'actions',
              elements: [{ type: 'button', text: { type: 'plain_text', text: 'Open run' }, url: message.runUrl }],
            },
          ]
        : []),
    ],
  };
}

const themeColors: Record<NotificationMessage['event'], string> = {
  failed: 'D13438',
  succeeded: '2EB886',
  toleranceUsed: 'F2C744',
  waiting: '0078D7',
};

/** A Teams-compatible incoming-webhook body: an Office 365 connector MessageCard. */
export function teamsPayload(message: NotificationMessage): Record<string, unknown> {
  return {
    '@type': 'MessageCard',
    '@context': 'https://schema.org/extensions',
    summary: messageTitle(message),
    themeColor: themeColors[message.event],
    title: messageTitle(message),
    ...(message.table ? { text: ['```', ...renderTable(message), '```'].join('\n') } : {}),
    sections: [{ facts: messageFacts(message).map(([name, value]) => ({ name, value })), markdown: true }],
    ...(message.runUrl
      ? {
          potentialAction: [
            { '@type': 'OpenUri', name: 'Open run', targets: [{ os: 'default', uri: message.runUrl }] },
          ],
        }
      : {}),
  };
}

async function postJson(channel: WebhookChannel, notification: NewNotification, body: unknown): Promise<void> {
  let response;
  try {
    response = await request(channel.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'idempotency-key': notification.key,
        'user-agent': 'fleetbook-notifications',
      },
      body: JSON.stringify(body),
      headersTimeout: SEND_TIMEOUT_MS,
      bodyTimeout: SEND_TIMEOUT_MS,
    });
  } catch (error) {
    // undici's errors name the host and port, never the path or query that may hold a token.
    const code = (error as { code?: string }).code;
    throw new Error(`the ${channel.type} webhook could not be reached (${code ?? (error as Error).message})`);
  }
  await response.body.dump();
  if (response.statusCode < 200 || response.statusCode >= 300)
    throw new Error(`the ${channel.type} webhook answered HTTP ${response.statusCode}`);
}

/** The Message-ID of a notification's e-mail: the same for every send of one key, so a mail system can drop a copy. */
export function emailMessageId(channel: EmailChannel, key: string): string {
  const domain = /@([^>\s]+)/.exec(channel.from)?.[1] ?? 'fleetbook.invalid';
  return `<${createHash('sha256').update(key).digest('hex').slice(0, 40)}.fleetbook@${domain}>`;
}

/** One e-mail as a channel sends it: a notification's, or an `email` step's. */
export interface OutgoingMail {
  to: string[];
  cc?: string[];
  bcc?: string[];
  subject: string;
  text: string;
  html: string;
  messageId: string;
  headers?: Record<string, string>;
  attachments?: Array<{ filename: string; content: Buffer; contentType?: string }>;
}

/** What the SMTP server said when it took a message. */
export interface MailReceipt {
  accepted: string[];
  rejected: string[];
  /** The server's last reply, e.g. `250 2.0.0 OK queued`. */
  response: string;
}

/** A message the SMTP server did not take; `permanent` when it said so with a 5xx reply. */
export class MailNotSentError extends Error {
  constructor(
    message: string,
    readonly responseCode: number | undefined,
    /** The server's words (its reply line), when it answered. */
    readonly response: string | undefined,
  ) {
    super(message);
    this.name = 'MailNotSentError';
  }

  get permanent(): boolean {
    return this.responseCode !== undefined && this.responseCode >= 500;
  }
}

/** Sends `mail` through `channel`'s SMTP server, from its sender: the one place Fleetbook speaks SMTP. */
export async function sendMail(channel: EmailChannel, mail: OutgoingMail): Promise<MailReceipt> {
  const transport = nodemailer.createTransport({
    host: channel.host,
    port: channel.port,
    secure: channel.secure,
    requireTLS: channel.requireTls,
    ...(channel.auth ? { auth: { user: channel.auth.user, pass: channel.auth.password } } : {}),
    connectionTimeout: SEND_TIMEOUT_MS,
    greetingTimeout: SEND_TIMEOUT_MS,
    socketTimeout: SEND_TIMEOUT_MS,
  });
  try {
    const info = await transport.sendMail({ from: channel.from, ...mail });
    const addresses = (list: unknown): string[] =>
      (Array.isArray(list) ? list : []).map((entry) => (typeof entry === 'string' ? entry : String(entry)));
    return { accepted: addresses(info.accepted), rejected: addresses(info.rejected), response: String(info.response) };
  } catch (error) {
    const { code, responseCode, response } = error as { code?: string; responseCode?: number; response?: string };
    throw new MailNotSentError(
      `the SMTP server ${channel.host}:${channel.port} did not take the message (${[code, responseCode].filter(Boolean).join(' ') || (error as Error).message})`,
      responseCode,
      response,
    );
  } finally {
    transport.close();
  }
}

async function sendEmail(channel: EmailChannel, notification: NewNotification): Promise<void> {
  const message = notification.message as NotificationMessage;
  await sendMail(channel, {
    to: channel.to,
    subject: `[fleetbook] ${messageTitle(message)}`,
    text: renderText(message),
    html: renderHtml(message),
    messageId: emailMessageId(channel, notification.key),
    headers: { 'X-Fleetbook-Notification': notification.key },
  });
}

/** Sends `notification` to `channel`; throws when it was not delivered. */
export const sendNotification: SendNotification = async (channel, notification) => {
  const message = notification.message as NotificationMessage;
  switch (channel.type) {
    case 'email':
      return sendEmail(channel, notification);
    case 'slack':
      return postJson(channel, notification, slackPayload(message));
    case 'teams':
      return postJson(channel, notification, teamsPayload(message));
    case 'webhook':
      return postJson(channel, notification, webhookPayload(notification));
  }
};
