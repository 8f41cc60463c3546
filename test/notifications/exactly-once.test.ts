/**
 * Exactly once per key, counted where it matters: by a real SMTP server and an HTTP receiver.
 * Within one process (a worker or daemon: its outbox sweep and the delivery after a run it
 * drove share one notifier), between processes (two notifiers on one store file), and under
 * forced retries (the sinks refuse the first tries).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/index.js';
import {
  createNotifications,
  notificationsFor,
  parseNotificationConfig,
  startOutboxSweep,
  type NotificationConfig,
} from '../../src/notifications/index.js';
import { createSqliteRunStore, type RunStore } from '../../src/store/index.js';
import { startHttpReceiver, startSmtpSink, type HttpReceiver, type SmtpAnswer, type SmtpSink } from './receivers.js';

const SMTP_PASSWORD = 'smtp-Pa55word-3119';
const RUN_ID = '5a1e0000-0000-4000-8000-000000000037';

let dir: string;
let store: RunStore;
const closers: Array<() => Promise<void>> = [];
const lines: Array<Record<string, unknown>> = [];
const logger = createLogger({ level: 'debug', destination: { write: (line: string) => lines.push(JSON.parse(line)) } });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-once-'));
  store = createSqliteRunStore({ file: join(dir, 'runs.sqlite') });
  closers.push(() => store.close());
  lines.length = 0;
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  rmSync(dir, { recursive: true, force: true });
});

async function smtpSink(answer?: (arrival: number) => SmtpAnswer): Promise<SmtpSink> {
  const sink = await startSmtpSink('mailer', SMTP_PASSWORD, answer);
  closers.push(async () => {
    sink.release();
    await sink.close();
  });
  return sink;
}

async function receiver(answer: (arrival: number) => number | 'hold'): Promise<HttpReceiver> {
  const started = await startHttpReceiver(answer);
  closers.push(() => started.close());
  return started;
}

function channelsConfig(sink: SmtpSink, hook?: HttpReceiver): NotificationConfig {
  const audit = hook ? `    audit:\n      type: webhook\n      url: ${hook.url}\n` : '';
  return parseNotificationConfig(
    `notifications:
  retry: { maxAttempts: 4, initialDelay: 10ms, maxDelay: 40ms }
  channels:
    ops-mail:
      type: email
      host: 127.0.0.1
      port: ${sink.port}
      auth: { userEnv: SMTP_USER, passwordEnv: SMTP_PASSWORD }
      from: Fleetbook <fleetbook@example.com>
      to: [ops@example.com]
${audit}`,
    'fleetbook.yaml',
    { SMTP_USER: 'mailer', SMTP_PASSWORD },
  );
}

/** A run that failed, recorded with its notifications as the engine records them. */
async function failedRun(config: NotificationConfig): Promise<void> {
  await store.createRun({
    id: RUN_ID,
    playbook: 'rolling-cluster-update',
    playbookSource: 'rolling.yaml',
    playbookHash: 'h',
    inputs: {},
    secretInputNames: [],
    dryRun: false,
    trigger: { kind: 'manual' },
    startedAt: new Date().toISOString(),
  });
  const notifications = notificationsFor(
    {
      runId: RUN_ID,
      playbook: 'rolling-cluster-update',
      dryRun: false,
      trigger: { kind: 'manual' },
      status: 'failed',
      startedAt: new Date().toISOString(),
      endedAt: new Date().toISOString(),
      error: { message: 'sys-b refused the update' },
      steps: [],
      occurrence: 'r0',
    },
    config,
    [
      {
        on: ['failed'],
        channels: ['audit'],
        dryRun: false,
        location: { file: 'p.yaml', line: 1, column: 1, pointer: '' },
      },
    ],
  );
  await store.setRunStatus(RUN_ID, 'failed', { error: { message: 'sys-b refused the update' }, notifications });
}

const mailKey = `${RUN_ID}/failed/r0/ops-mail`;
const hookKey = `${RUN_ID}/failed/r0/audit`;

describe('one process: its outbox sweep and the delivery after the run it drove', () => {
  it('sends a failure e-mail once, though both take it up while the first send is in flight', async () => {
    // The first message is held unanswered: its send is in flight while the other delivery looks.
    const sink = await smtpSink((arrival) => (arrival === 1 ? 'hold' : 'accept'));
    const config = channelsConfig(sink);
    await failedRun(config);
    const notifications = createNotifications(config, { store, logger });

    // What a worker does: its sweep starts, and the run it just drove delivers its own notifications.
    const sweep = startOutboxSweep(notifications, logger, 60_000);
    const own = notifications.deliver({ runId: RUN_ID });
    await sink.arrived(1);
    // Whichever of the two did not send: it has finished (skipped), or sent a copy meanwhile.
    await Promise.race([own, sink.arrived(2)]);
    sink.release();
    await own;
    await sweep.stop();

    expect(sink.takenPerKey()).toEqual({ [mailKey]: 1 });
    expect(sink.arrivals).toHaveLength(1);
    const sent = lines.filter((line) => line.event === 'notification.sent');
    expect(sent.map((line) => [line.key, line.attempt])).toEqual([[mailKey, 1]]);
    expect(await store.listNotifications({ runId: RUN_ID })).toMatchObject([{ state: 'sent', attempts: 1 }]);
  });
});

describe('forced retries, three deliveries at once (a sweep, the run, another process)', () => {
  it('each key is taken exactly once by the SMTP server and the webhook receiver', async () => {
    // Both refuse the first two tries: every key needs a third.
    const sink = await smtpSink((arrival) => (arrival <= 2 ? 'refuse' : 'accept'));
    const hook = await receiver((arrival) => (arrival <= 2 ? 500 : 200));
    const config = channelsConfig(sink, hook);
    await failedRun(config);
    const here = createNotifications(config, { store, logger });
    // Another process on the same store file: its own connection, its own claims.
    const otherStore = createSqliteRunStore({ file: join(dir, 'runs.sqlite') });
    closers.push(() => otherStore.close());
    const there = createNotifications(config, { store: otherStore, logger });

    const sweep = startOutboxSweep(here, logger, 5);
    await Promise.all([here.deliver({ runId: RUN_ID, untilSettled: true }), there.deliver({ untilSettled: true })]);
    // A try the sweep took over may still be due: once it has stopped, nobody else holds a claim.
    await sweep.stop();
    await here.deliver({ untilSettled: true });

    expect(sink.takenPerKey()).toEqual({ [mailKey]: 1 });
    expect(hook.deliveredPerKey()).toEqual({ [hookKey]: 1 });
    // Every try of a key carried the same idempotency key: refused twice, taken once.
    expect(sink.arrivals.map((arrival) => [arrival.key, arrival.answered])).toEqual([
      [mailKey, 'refuse'],
      [mailKey, 'refuse'],
      [mailKey, 'accept'],
    ]);
    expect(new Set(sink.arrivals.map((arrival) => arrival.messageId)).size).toBe(1);
    expect(hook.arrivals.map((arrival) => [arrival.key, arrival.answered])).toEqual([
      [hookKey, 500],
      [hookKey, 500],
      [hookKey, 200],
    ]);
    expect(await store.listNotifications({ runId: RUN_ID })).toMatchObject([
      { key: mailKey, state: 'sent', attempts: 3 },
      { key: hookKey, state: 'sent', attempts: 3 },
    ]);
  });
});
