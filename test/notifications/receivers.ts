/**
 * Local receivers for notification tests: an SMTP sink (the `smtp-server` package, each message
 * parsed with `mailparser`) and HTTP receivers on 127.0.0.1 port 0 that answer as a test says
 * (take it, refuse it, or hold it unanswered) and count what arrives, by arrival and by
 * idempotency key (the e-mail's `X-Fleetbook-Notification`, the webhook's `Idempotency-Key`).
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import Database from 'better-sqlite3';
import { SMTPServer } from 'smtp-server';

/** What the SMTP sink answers a message's DATA: take it (250), refuse it for now (451), or never answer. */
/** `refuse`: 451 (try again later); `{ code, message }`: that reply (a 5xx refuses for good). */
export type SmtpAnswer = 'accept' | 'refuse' | 'hold' | { code: number; message: string };

/**
 * An SMTP answer that, when the first message arrives, takes the SQLite store's write lock
 * before the server answers 250: the sender cannot record what the server took, and a test
 * kills it in exactly that window. `release` gives the lock back (after the kill).
 */
export function lockStoreOnFirstArrival(storeFile: string): {
  answer: (arrival: number) => SmtpAnswer;
  release(): void;
} {
  let lock: Database.Database | undefined;
  return {
    answer: (arrival) => {
      if (arrival === 1) {
        lock = new Database(storeFile);
        lock.exec('BEGIN IMMEDIATE');
      }
      return 'accept';
    },
    release: () => {
      lock?.exec('ROLLBACK');
      lock?.close();
    },
  };
}

export interface SmtpArrival {
  /** The Message-ID header: the same for every send of one notification key. */
  messageId: string | undefined;
  /** The `X-Fleetbook-Notification` header: the notification's key. */
  key: string | undefined;
  /** What the sink answered; undefined while held (or when the sender went away first). */
  answered?: 'accept' | 'refuse';
}

export interface SmtpSink {
  port: number;
  /** The messages taken (answered 250), in order. */
  mails: ParsedMail[];
  /** Every message whose data arrived, taken, refused or held. */
  arrivals: SmtpArrival[];
  /** How many copies of each key were taken: a key delivered exactly once counts 1. */
  takenPerKey(): Record<string, number>;
  /** Resolves once `count` messages have been taken. */
  received(count: number): Promise<void>;
  /** Resolves once the data of `count` messages has arrived (taken, refused or held). */
  arrived(count: number): Promise<void>;
  /** Answers every held message: 250, as if the sink had been slow. */
  release(): void;
  close(): Promise<void>;
}

/**
 * An SMTP server that takes mail only from `user` with `password` (plain auth, no TLS: a local
 * sink). `answer(n)` says what the n-th message (from 1) is answered: by default every one is taken.
 */
export async function startSmtpSink(
  user: string,
  password: string,
  answer: (arrival: number) => SmtpAnswer = () => 'accept',
): Promise<SmtpSink> {
  const mails: ParsedMail[] = [];
  const arrivals: SmtpArrival[] = [];
  const held: Array<() => void> = [];
  const waiters: Array<() => void> = [];
  const wakeAll = (): void => {
    for (const wake of waiters.splice(0)) wake();
  };
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === user && auth.password === password) callback(null, { user });
      else callback(new Error('authentication failed'));
    },
    onData(stream, _session, callback) {
      simpleParser(stream).then(
        (mail) => {
          const header = mail.headers.get('x-fleetbook-notification');
          const arrival: SmtpArrival = {
            messageId: mail.messageId,
            key: typeof header === 'string' ? header : undefined,
          };
          arrivals.push(arrival);
          const take = (): void => {
            arrival.answered = 'accept';
            mails.push(mail);
            wakeAll();
            callback();
          };
          const how = answer(arrivals.length);
          wakeAll();
          if (how === 'hold') held.push(take);
          else if (how === 'accept') take();
          else {
            arrival.answered = 'refuse';
            const { code, message } = how === 'refuse' ? { code: 451, message: 'try again later' } : how;
            callback(Object.assign(new Error(message), { responseCode: code }));
          }
        },
        (error: Error) => callback(error),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  const until = (done: () => boolean): Promise<void> =>
    new Promise((resolve) => {
      const check = (): void => (done() ? resolve() : void waiters.push(check));
      check();
    });
  return {
    port,
    mails,
    arrivals,
    takenPerKey: () => {
      const counts: Record<string, number> = {};
      for (const arrival of arrivals)
        if (arrival.answered === 'accept') counts[arrival.key ?? ''] = (counts[arrival.key ?? ''] ?? 0) + 1;
      return counts;
    },
    received: (count) => until(() => mails.length >= count),
    arrived: (count) => until(() => arrivals.length >= count),
    release: () => {
      for (const take of held.splice(0)) take();
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export interface Arrival {
  key: string | undefined;
  body: Record<string, unknown>;
  /** The status answered; undefined while held (or when the sender went away first). */
  answered?: number;
}

export interface HttpReceiver {
  url: string;
  arrivals: Arrival[];
  /** Idempotency keys of the requests answered 2xx, each once. */
  deliveredKeys(): string[];
  /** How many copies of each key were answered 2xx: a key delivered exactly once counts 1. */
  deliveredPerKey(): Record<string, number>;
  /** Resolves once `count` requests have arrived. */
  arrived(count: number): Promise<void>;
  close(): Promise<void>;
}

/** `answer(n)`: the status for the n-th arrival (from 1), or `hold` to keep it unanswered. */
export async function startHttpReceiver(answer: (arrival: number) => number | 'hold'): Promise<HttpReceiver> {
  const arrivals: Arrival[] = [];
  const held: ServerResponse[] = [];
  const waiters: Array<() => void> = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const header = request.headers['idempotency-key'];
      const arrival: Arrival = {
        key: Array.isArray(header) ? header[0] : header,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
      };
      arrivals.push(arrival);
      for (const wake of waiters.splice(0)) wake();
      const status = answer(arrivals.length);
      if (status === 'hold') {
        held.push(response);
        return;
      }
      arrival.answered = status;
      response.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'failed');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook/path-T0KEN-7731`,
    arrivals,
    deliveredKeys: () => [
      ...new Set(
        arrivals
          .filter((arrival) => arrival.answered !== undefined && arrival.answered < 300)
          .map((arrival) => arrival.key ?? ''),
      ),
    ],
    deliveredPerKey: () => {
      const counts: Record<string, number> = {};
      for (const arrival of arrivals)
        if (arrival.answered !== undefined && arrival.answered < 300)
          counts[arrival.key ?? ''] = (counts[arrival.key ?? ''] ?? 0) + 1;
      return counts;
    },
    arrived: (count) =>
      new Promise((resolve) => {
        const check = (): void => (arrivals.length >= count ? resolve() : void waiters.push(check));
        check();
      }),
    close: () =>
      new Promise((resolve) => {
        for (const response of held) response.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
