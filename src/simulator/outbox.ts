import type { OutboxMessage, Rng, SimClock, SimContext } from './context.js';

export interface Outbox {
  /** Every message sent since the world was built, oldest first. */
  messages: OutboxMessage[];
  sendMail: SimContext['sendMail'];
}

/** The e-mails the platform would have sent, kept for `/_sim/outbox` and tests. */
export function createOutbox(clock: SimClock, rng: Rng): Outbox {
  const messages: OutboxMessage[] = [];
  return {
    messages,
    sendMail(message) {
      const sent: OutboxMessage = { ...message, id: rng.uuid(), sentAt: clock.nowIso() };
      messages.push(sent);
      return sent;
    },
  };
}
