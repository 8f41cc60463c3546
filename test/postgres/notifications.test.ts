// Notifications in team mode: a worker that ends a queued run records its notification in the
// shared store's outbox with the run's end and sends it; one a dead worker left claimed is sent
// by another process once, never while a live one holds it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { simulatorClient } from '../../src/cli/connection.js';
import { enqueuePlaybookRun } from '../../src/engine/index.js';
import { createLogger, createSecretRegistry } from '../../src/logging/index.js';
import {
  createNotifications,
  createNotifier,
  parseNotificationConfig,
  startOutboxSweep,
} from '../../src/notifications/index.js';
import { loadPlaybook, type Playbook } from '../../src/playbook/index.js';
import { runWorker } from '../../src/scheduler/index.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { createPostgresRunStore, type QueueStore } from '../../src/store/index.js';
import { startHttpReceiver, startSmtpSink, type HttpReceiver } from '../notifications/receivers.js';
import { createTestDatabase, testPostgresUrl } from '../support/postgres-cluster.js';

const adminUrl = testPostgresUrl();

describe.skipIf(!adminUrl)('notifications with a shared store', () => {
  let dir: string;
  let store: QueueStore;
  let url: string;
  let simulator: Simulator;
  let receiver: HttpReceiver;
  let playbook: Playbook;
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    level: 'info',
    destination: { write: (line: string) => lines.push(JSON.parse(line)) },
  });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleetbook-pg-notify-'));
    url = await createTestDatabase(adminUrl ?? '');
    store = await createPostgresRunStore({ url });
    simulator = await startSimulator({ port: 0 });
    receiver = await startHttpReceiver(() => 200);
    writeFileSync(
      join(dir, 'team.yaml'),
      'name: team-notify\nnotify:\n  - on: [succeeded]\n    channels: [audit]\nsteps:\n  - log: done\n',
    );
    const loaded = loadPlaybook(join(dir, 'team.yaml'));
    if (!loaded.playbook) throw new Error(JSON.stringify(loaded.problems));
    playbook = loaded.playbook;
    lines.length = 0;
  });
  afterEach(async () => {
    await receiver.close();
    await simulator.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function notifications() {
    const config = parseNotificationConfig(
      `notifications:\n  channels:\n    audit:\n      type: webhook\n      url: ${receiver.url}\n`,
      'fleetbook.yaml',
      {},
    );
    return createNotifications(config, { store, logger });
  }

  it('a worker records the notification with the end of the run it drives, and sends it once', async () => {
    const run = await enqueuePlaybookRun(playbook, { store });
    const secrets = createSecretRegistry();
    const summary = await runWorker({
      store,
      client: simulatorClient(simulator, { logger, secrets }),
      logger,
      secrets,
      loadPlaybook: () => playbook,
      secretInputsOf: () => ({}),
      exitWhenIdle: true,
      pollMs: 10,
      notifications: notifications(),
    });
    expect(summary.finished).toBe(1);
    expect((await store.getRun(run.id))?.status).toBe('succeeded');
    expect(receiver.arrivals.map((arrival) => [arrival.key, arrival.answered])).toEqual([
      [`${run.id}/succeeded/r0/audit`, 200],
    ]);
    expect(await store.listNotifications({ runId: run.id })).toMatchObject([{ state: 'sent', attempts: 1 }]);
    // Another process sweeping the shared outbox finds nothing left to send.
    expect(await notifications().deliver()).toMatchObject({ sent: 0 });
    expect(receiver.arrivals).toHaveLength(1);
  });

  it("a worker whose outbox sweep runs while it sends a run's e-mail sends it once (issue 37: twice, 8 ms apart)", async () => {
    // The e-mail is held unanswered until a sweep of the same worker has looked at the outbox.
    const sink = await startSmtpSink('mailer', 'smtp-Pa55', (arrival) => (arrival === 1 ? 'hold' : 'accept'));
    try {
      const config = parseNotificationConfig(
        `notifications:\n  channels:\n    ops-mail:\n      type: email\n      host: 127.0.0.1\n      port: ${sink.port}\n      auth: { userEnv: SMTP_USER, passwordEnv: SMTP_PASSWORD }\n      from: Fleetbook <fleetbook@example.com>\n      to: [ops@example.com]\n      on: [succeeded]\n`,
        'fleetbook.yaml',
        { SMTP_USER: 'mailer', SMTP_PASSWORD: 'smtp-Pa55' },
      );
      // One process's notifications, as worker-action makes them: its sweep and its runs share them.
      const workerNotifications = createNotifications(config, { store, logger });
      const run = await enqueuePlaybookRun(playbook, { store });
      const key = `${run.id}/succeeded/r0/ops-mail`;
      // The sweep's passes, counted as they are logged: the test waits for them, not for time.
      let swept = 0;
      const sweepWaiters: Array<() => void> = [];
      const sweepLogger = createLogger({
        level: 'debug',
        destination: {
          write: (line: string) => {
            if ((JSON.parse(line) as { event?: string }).event !== 'notification.swept') return;
            swept += 1;
            for (const wake of sweepWaiters.splice(0)) wake();
          },
        },
      });
      const sweptTimes = (count: number): Promise<void> =>
        new Promise((resolve) => {
          const check = (): void => (swept >= count ? resolve() : void sweepWaiters.push(check));
          check();
        });
      const sweep = startOutboxSweep(workerNotifications, sweepLogger, 5);
      const secrets = createSecretRegistry();
      const worker = runWorker({
        store,
        client: simulatorClient(simulator, { logger, secrets }),
        logger,
        secrets,
        loadPlaybook: () => playbook,
        secretInputsOf: () => ({}),
        exitWhenIdle: true,
        pollMs: 10,
        notifications: workerNotifications,
      });
      await sink.arrived(1);
      // Whichever did not take the e-mail has looked meanwhile: the run's own delivery has ended the
      // worker, or (the run's delivery holding it) two sweep passes ran after it arrived.
      await Promise.race([worker, sweptTimes(swept + 2)]);
      sink.release();
      expect((await worker).finished).toBe(1);
      await sweep.stop();
      expect(sink.takenPerKey()).toEqual({ [key]: 1 });
      expect(
        lines.filter((line) => line.event === 'notification.sent').map((line) => [line.key, line.attempt]),
      ).toEqual([[key, 1]]);
      expect(await store.listNotifications({ runId: run.id })).toMatchObject([{ state: 'sent', attempts: 1 }]);
    } finally {
      sink.release();
      await sink.close();
    }
  });

  it('a claim held by a live sender elsewhere is left alone; once it lapses, the notification is sent once', async () => {
    // This process's view of the shared store, on a clock the test moves.
    let clock = Date.now();
    const manual = await createPostgresRunStore({ url, now: () => new Date(clock) });
    try {
      const run = await enqueuePlaybookRun(playbook, { store: manual });
      const key = `${run.id}/succeeded/r0/audit`;
      await manual.setRunStatus(run.id, 'succeeded', {
        notifications: [
          {
            key,
            runId: run.id,
            event: 'succeeded',
            segment: 'r0',
            channel: 'audit',
            message: { playbook: 'team-notify' },
          },
        ],
      });
      // A worker on another machine claimed it (it cannot be judged dead from here) for 1 s.
      const elsewhere = JSON.stringify({ id: 'w2', host: 'another-host', pid: 4242, pidSpace: 'x' });
      expect(await manual.claimNotification(key, elsewhere, 1000)).toBeDefined();
      const sweeper = createNotifier({ store: manual, config: notifications().config, logger, now: () => clock });
      expect(await sweeper.deliverPending()).toMatchObject({ sent: 0, skipped: 1 });
      expect(receiver.arrivals).toHaveLength(0);
      // Its claim lapses (the worker died): the next sweep takes it over and sends it.
      clock += 1000;
      expect(await sweeper.deliverPending()).toMatchObject({ sent: 1 });
      expect(receiver.deliveredKeys()).toEqual([key]);
      // The late worker cannot mark it: its claim is gone.
      expect(await manual.settleNotification(key, elsewhere, { state: 'sent' })).toBe(false);
      expect(await manual.listNotifications({ runId: run.id })).toMatchObject([{ state: 'sent', attempts: 2 }]);
    } finally {
      await manual.close();
    }
  });
});
