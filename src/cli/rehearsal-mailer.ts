/**
 * The mailer of a rehearsal (`--target simulator`): an `email` step's message goes to the
 * embedded simulator's outbox (`/_sim/outbox`, what `fleetbook demo` shows), never to a channel.
 * The channels of fleetbook.yaml are still the ones `via:` may name, so a rehearsal refuses what
 * the real run would.
 */
import { createHash } from 'node:crypto';
import type { Mailer } from '../steps/index.js';
import type { Simulator } from '../simulator/index.js';

export function rehearsalMailer(simulator: Simulator, channels: readonly string[], serverUrl?: string): Mailer {
  return {
    channels,
    rehearsal: "the simulator's outbox",
    ...(serverUrl ? { serverUrl } : {}),
    messageId: (_channel, key) =>
      `<${createHash('sha256').update(key).digest('hex').slice(0, 40)}.fleetbook@simulator.invalid>`,
    send(_channel, mail) {
      const posted = simulator.control.postMail({
        kind: 'fleetbook.email',
        to: mail.to,
        cc: mail.cc,
        bcc: mail.bcc,
        subject: mail.subject,
        body: mail.text,
        html: mail.html,
        messageId: mail.messageId,
        links: [],
        attachments: mail.attachments.map((file) => ({ filename: file.filename, bytes: file.content.length })),
      });
      return Promise.resolve({
        accepted: [...mail.to, ...mail.cc, ...mail.bcc],
        rejected: [],
        response: `outbox ${posted.id}`,
      });
    },
  };
}
