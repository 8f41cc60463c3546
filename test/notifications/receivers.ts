/**
 * Local receivers for notification tests: an SMTP sink (the `smtp-server` package, each message
 * parsed with `mailparser`) and HTTP receivers on 127.0.0.1 port 0 that answer as a test says
 * (200, an error status, or hold the request unanswered) and count what arrives, by arrival and
 * by idempotency key.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface SmtpSink {
  port: number;
  mails: ParsedMail[];
  /** Resolves once `count` messages have arrived. */
  received(count: number): Promise<void>;
  close(): Promise<void>;
}

/** An SMTP server that takes mail only from `user` with `password` (plain auth, no TLS: a local sink). */
export async function startSmtpSink(user: string, password: string): Promise<SmtpSink> {
  const mails: ParsedMail[] = [];
  const waiters: Array<() => void> = [];
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
          mails.push(mail);
          for (const wake of waiters.splice(0)) wake();
          callback();
        },
        (error: Error) => callback(error),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    mails,
    received: (count) =>
      new Promise((resolve) => {
        const check = (): void => (mails.length >= count ? resolve() : void waiters.push(check));
        check();
      }),
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
