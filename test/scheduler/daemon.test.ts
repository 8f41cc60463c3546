import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Writable } from 'node:stream';
import { captureLogs } from '../../src/api/testing.js';
import { createLogger, createSecretRegistry } from '../../src/logging/index.js';
import { createPlatformClient } from '../../src/api/index.js';
import { SCHEDULER_LEASE_KEY, startDaemon, type Daemon } from '../../src/scheduler/daemon.js';
import { createFireDriver } from '../../src/admission/index.js';
import { readScheduleState } from '../../src/scheduler/schedule-state.js';
import { isSchedulerError } from '../../src/scheduler/scheduler-error.js';
import type { FireRequest } from '../../src/scheduler/scheduler.js';
import { createManualClock, type ManualClock } from '../../src/scheduler/testing.js';
import { startSimulator } from '../../src/simulator/index.js';
import {
  createMemoryRunStore,
  createSqliteRunStore,
  newLeaseOwner,
  RunStatus,
  type RunStore,
} from '../../src/store/index.js';

const fixtures = join(import.meta.dirname, 'fixtures');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fleetbook-daemon-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Moves several clocks together in small steps, so each daemon sees the other's lease renewals in time. */
async function advanceTogether(clocks: ManualClock[], iso: string, stepMs = 5000): Promise<void> {
  const target = Date.parse(iso);
  for (let at = Math.min(...clocks.map((clock) => clock.now())) + stepMs; ; at = Math.min(at + stepMs, target)) {
    for (const clock of clocks) if (clock.now() < at) await clock.advanceTo(at);
    if (at >= target) return;
  }
}

describe('daemon', () => {
  it('refuses to start when a playbook is invalid, with every problem located', async () => {
    const dir = tempDir();
    copyFileSync(join(fixtures, 'five', 'every-five-minutes.yaml'), join(dir, 'a.yaml'));
    copyFileSync(join(fixtures, 'five', 'every-five-minutes.yaml'), join(dir, 'b.yaml'));
    writeFileSync(
      join(dir, 'c.yaml'),
      'name: broken\nschedules:\n  - cron: "0 25 * * *"\n    timezone: Mars/Olympus\nsteps:\n  - log: hi\n',
    );
    writeFileSync(
      join(dir, 'd.yaml'),
      'name: needs-input\ninputs:\n  systemId: { type: string }\nschedules:\n  - id: d\n    cron: "0 6 * * *"\n    inputs: { sytemId: abc }\nsteps:\n  - log: hi\n',
    );
    const logs = captureLogs();
    const store = createMemoryRunStore();
    let caught: unknown;
    try {
      await startDaemon({
        playbooksDir: dir,
        store,
        logger: logs.logger,
        execute: async () => ({ status: RunStatus.succeeded }),
        watch: false,
      });
    } catch (error) {
      caught = error;
    }
    expect(isSchedulerError(caught) && caught.code).toBe('INVALID_PLAYBOOKS');
    expect(isSchedulerError(caught) && caught.exitCode).toBe(2);
    const problems = (caught as { details: { problems: Array<{ code: string; file: string; line: number }> } }).details
      .problems;
    expect(problems.map((problem) => [problem.code, problem.file.split('/').pop(), problem.line])).toEqual(
      expect.arrayContaining([
        ['INVALID_CRON', 'c.yaml', 3],
        ['INVALID_TIMEZONE', 'c.yaml', 4],
        ['DUPLICATE_SCHEDULE_ID', 'b.yaml', 3],
        ['INVALID_SCHEDULE_INPUTS', 'd.yaml', 7],
      ]),
    );
    expect(problems.find((problem) => problem.code === 'INVALID_SCHEDULE_INPUTS')).toMatchObject({
      message: expect.stringContaining("unknown input 'sytemId'"),
    });
    expect(await store.acquireLease('scheduler', 'someone-else', 1000)).toBe(true);
  });

  it('two daemons on one store fire each schedule once: a standby takes over when the leader stops renewing', async () => {
    const dir = tempDir();
    const file = join(dir, 'runs.sqlite');
    // Two processes' worth: two connections to one store file, two clocks. The store's clock is B's.
    const clockA = createManualClock(Date.parse('2025-01-01T00:01:00Z'));
    const clockB = createManualClock(Date.parse('2025-01-01T00:01:00Z'));
    const storeA = createSqliteRunStore({ file, now: () => new Date(clockB.now()) });
    const storeB = createSqliteRunStore({ file, now: () => new Date(clockB.now()) });
    cleanups.push(
      () => storeA.close(),
      () => storeB.close(),
    );
    const fires: Array<{ owner: string; scheduledAt: string }> = [];
    const logsA = captureLogs();
    const logsB = captureLogs();
    const start = (owner: string, store: RunStore, clock: ManualClock, logger: typeof logsA.logger): Promise<Daemon> =>
      startDaemon({
        playbooksDir: join(fixtures, 'five'),
        store,
        logger,
        clock,
        owner,
        watch: false,
        execute: async (request: FireRequest) => {
          fires.push({ owner, scheduledAt: request.scheduledAt.toISOString() });
          return { status: RunStatus.succeeded };
        },
      });
    const a = await start('daemon-a', storeA, clockA, logsA.logger);
    const b = await start('daemon-b', storeB, clockB, logsB.logger);
    cleanups.push(
      () => a.stop(),
      () => b.stop(),
    );
    expect(a.isLeader()).toBe(true);
    expect(b.isLeader()).toBe(false);
    expect(logsB.lines().filter((line) => line.event === 'lease.standby')).toEqual([
      expect.objectContaining({ heldBy: 'daemon-a' }),
    ]);

    await advanceTogether([clockA, clockB], '2025-01-01T00:16:00Z');
    expect(fires).toEqual(
      ['00:05', '00:10', '00:15'].map((at) => ({ owner: 'daemon-a', scheduledAt: `2025-01-01T${at}:00.000Z` })),
    );

    // A freezes (a stopped process, a paused VM): its lease lapses after 30 s and B takes over.
    await advanceTogether([clockB], '2025-01-01T00:26:00Z');
    expect(b.isLeader()).toBe(true);
    expect(logsB.lines().find((line) => line.event === 'lease.acquired')).toMatchObject({ takeover: true });
    // A wakes up, finds the lease taken, and fires nothing more.
    await advanceTogether([clockA, clockB], '2025-01-01T00:31:00Z');
    expect(a.isLeader()).toBe(false);
    expect(logsA.lines().some((line) => line.event === 'lease.lost')).toBe(true);
    expect(fires.map((fire) => `${fire.owner} ${fire.scheduledAt.slice(11, 16)}`)).toEqual([
      'daemon-a 00:05',
      'daemon-a 00:10',
      'daemon-a 00:15',
      'daemon-b 00:20',
      'daemon-b 00:25',
      'daemon-b 00:30',
    ]);

    // B stops and releases the lease: A takes over at its next try and continues after 00:30.
    await b.stop();
    await advanceTogether([clockA, clockB], '2025-01-01T00:36:00Z');
    expect(a.isLeader()).toBe(true);
    expect(fires.map((fire) => fire.scheduledAt.slice(11, 16))).toEqual([
      '00:05',
      '00:10',
      '00:15',
      '00:20',
      '00:25',
      '00:30',
      '00:35',
    ]);
    expect(fires.at(-1)?.owner).toBe('daemon-a');
  });

  it('takes the lease at once from a daemon verifiably dead on this host; waits as a standby for a live one', async () => {
    const child = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => child.on('exit', resolve));
    const own = JSON.parse(newLeaseOwner()) as Record<string, unknown>;
    const start = (store: RunStore, logger: ReturnType<typeof captureLogs>['logger']) =>
      startDaemon({
        playbooksDir: join(fixtures, 'five'),
        store,
        logger,
        clock: createManualClock(Date.now()),
        watch: false,
        execute: async () => ({ status: RunStatus.succeeded }),
      });

    // Killed with SIGKILL an hour into its lease, then restarted: no wait for the lease to lapse.
    const killed = createMemoryRunStore();
    expect(await killed.acquireLease(SCHEDULER_LEASE_KEY, JSON.stringify({ ...own, pid: child.pid }), 3_600_000)).toBe(
      true,
    );
    const restartedLogs = captureLogs();
    const restarted = await start(killed, restartedLogs.logger);
    cleanups.push(() => restarted.stop());
    expect(restarted.isLeader()).toBe(true);
    expect(restartedLogs.lines().some((line) => line.event === 'lease.acquired')).toBe(true);

    // The parent of this test process is alive: its lease is waited for, and named readably.
    const held = createMemoryRunStore();
    expect(await held.acquireLease(SCHEDULER_LEASE_KEY, JSON.stringify({ ...own, pid: process.ppid }), 3_600_000)).toBe(
      true,
    );
    const standbyLogs = captureLogs();
    const standby = await start(held, standbyLogs.logger);
    cleanups.push(() => standby.stop());
    expect(standby.isLeader()).toBe(false);
    expect(standbyLogs.lines().find((line) => line.event === 'lease.standby')).toMatchObject({
      heldBy: `${hostname()}:${process.ppid}:${String(own.id).slice(0, 8)}`,
    });
  });

  it('reloads when a playbook file of the folder changes, and keeps the old set when the new one is invalid', async () => {
    const dir = tempDir();
    const clock = createManualClock(Date.parse('2025-01-01T00:01:00Z'));
    const logs = captureLogs();
    const store = createMemoryRunStore({ now: () => new Date(clock.now()) });
    const daemon = await startDaemon({
      playbooksDir: dir,
      store,
      logger: logs.logger,
      clock,
      execute: async () => ({ status: RunStatus.succeeded }),
      reloadDebounceMs: 200,
    });
    cleanups.push(() => daemon.stop());
    const events = (name: string) => logs.lines().filter((line) => line.event === name);
    const reloaded = async (event: string, count: number) =>
      vi.waitFor(
        async () => {
          await clock.advanceBy(250);
          await daemon.idle();
          expect(events(event)).toHaveLength(count);
        },
        // A reload checks the folder in a worker thread: its first start (the TypeScript source under
        // the tests, the playbook schema compiled) takes seconds on a loaded machine.
        { timeout: 60_000, interval: 50 },
      );

    copyFileSync(join(fixtures, 'five', 'every-five-minutes.yaml'), join(dir, 'every-five-minutes.yaml'));
    await reloaded('daemon.reloaded', 1);
    expect(events('daemon.reloaded')[0]).toMatchObject({ playbooks: 1, schedules: 1 });

    writeFileSync(join(dir, 'broken.yaml'), 'name: broken\nsteps: 3\n');
    await reloaded('daemon.reloadFailed', 1);
    // A file that once crashed the loader (an alias inside the node it names) is one more failed reload.
    writeFileSync(join(dir, 'broken.yaml'), 'name: broken\nsteps: &s [ {log: a}, {block: *s} ]\n');
    await reloaded('daemon.reloadFailed', 2);
    expect(JSON.stringify(events('daemon.reloadFailed')[1])).toContain('YAML_ALIAS_CYCLE');
    await clock.advanceTo(Date.parse('2025-01-01T00:06:00Z'));
    await daemon.idle();
    expect(events('schedule.fired').map((line) => line.scheduledAt)).toContain('2025-01-01T00:05:00.000Z');
  });
});

/** `store` whose scheduler lease calls throw while `down` is true (a locked or unreachable store). */
function leaseOutage(store: RunStore): { store: RunStore; down: boolean } {
  const outage = { down: false, store };
  outage.store = new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (name !== 'acquireLease' || typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        outage.down
          ? Promise.reject(new Error('database is locked'))
          : (value as (...a: unknown[]) => unknown).apply(target, args);
    },
  });
  return outage;
}

describe('daemon: store errors on the lease', () => {
  const fiveMinutes = (
    store: RunStore,
    clock: ManualClock,
    owner: string,
    logger: ReturnType<typeof captureLogs>['logger'],
    fires: string[],
  ) =>
    startDaemon({
      playbooksDir: join(fixtures, 'five'),
      store,
      logger,
      clock,
      owner,
      watch: false,
      execute: async (request: FireRequest) => {
        fires.push(`${owner} ${request.scheduledAt.toISOString().slice(11, 16)}`);
        return { status: RunStatus.succeeded };
      },
    });

  it('a standby whose lease try failed keeps trying, and takes over when the leader stops', async () => {
    const clock = createManualClock(Date.parse('2025-01-01T00:01:00Z'));
    const shared = createMemoryRunStore({ now: () => new Date(clock.now()) });
    const outageB = leaseOutage(shared);
    const fires: string[] = [];
    const a = await fiveMinutes(shared, clock, 'daemon-a', captureLogs().logger, fires);
    const logsB = captureLogs();
    const b = await fiveMinutes(outageB.store, clock, 'daemon-b', logsB.logger, fires);
    cleanups.push(
      () => a.stop(),
      () => b.stop(),
    );
    outageB.down = true;
    await clock.advanceTo(Date.parse('2025-01-01T00:02:00Z'));
    expect(logsB.lines().filter((line) => line.event === 'lease.renewFailed').length).toBeGreaterThan(0);
    outageB.down = false;
    await a.stop();
    await clock.advanceTo(Date.parse('2025-01-01T00:11:00Z'));
    await b.idle();
    expect(b.isLeader()).toBe(true);
    expect(fires).toEqual(['daemon-b 00:05', 'daemon-b 00:10']);
  });

  it('a leader that cannot renew before its lease expires stops firing, and leads again when the store answers', async () => {
    const clock = createManualClock(Date.parse('2025-01-01T00:01:00Z'));
    const outage = leaseOutage(createMemoryRunStore({ now: () => new Date(clock.now()) }));
    const logs = captureLogs();
    const fires: string[] = [];
    const daemon = await fiveMinutes(outage.store, clock, 'daemon-a', logs.logger, fires);
    cleanups.push(() => daemon.stop());
    await clock.advanceTo(Date.parse('2025-01-01T00:05:30Z'));
    expect(fires).toEqual(['daemon-a 00:05']);
    outage.down = true;
    // Renewals at 00:05:40, 00:05:50 fail within the lease; the one at 00:06:00 finds it expired (renewed last at 00:05:30).
    await clock.advanceTo(Date.parse('2025-01-01T00:05:55Z'));
    expect(daemon.isLeader()).toBe(true);
    await clock.advanceTo(Date.parse('2025-01-01T00:12:00Z'));
    await daemon.idle();
    expect(daemon.isLeader()).toBe(false);
    expect(logs.lines().filter((line) => line.event === 'lease.lost')).toEqual([
      expect.objectContaining({ reason: 'the scheduler lease expired before it could be renewed' }),
    ]);
    expect(fires).toEqual(['daemon-a 00:05']);
    outage.down = false;
    await clock.advanceTo(Date.parse('2025-01-01T00:16:00Z'));
    await daemon.idle();
    expect(daemon.isLeader()).toBe(true);
    // 00:10 was missed while it could not lead: catch-up (last) runs it, then 00:15 on time.
    expect(fires).toEqual(['daemon-a 00:05', 'daemon-a 00:10', 'daemon-a 00:15']);
  });
});

describe('daemon against the simulator', () => {
  it('fires the nightly report at 06:00 Berlin time on both sides of the spring-forward night; the e-mails are in the outbox', async () => {
    const sim = await startSimulator({ port: 0, timeScale: 6000 });
    cleanups.push(() => sim.close());
    const admin = sim.clients.find((client) => client.clientId === 'sim-admin');
    if (!admin) throw new Error('no admin client');
    const logs = captureLogs();
    const client = createPlatformClient({
      credentials: admin,
      authUrl: sim.authUrl,
      baseUrl: sim.baseUrl,
      regionalUrl: sim.regionalUrl,
      region: 'us-west',
      logger: logs.logger,
    });
    const clock = createManualClock(Date.parse('2025-03-29T03:00:00Z'));
    const store = createMemoryRunStore({ now: () => new Date(clock.now()) });
    const dir = tempDir();
    mkdirSync(join(dir, 'playbooks'));
    copyFileSync(join(fixtures, 'nightly', 'nightly-subscription-report.yaml'), join(dir, 'playbooks', 'nightly.yaml'));
    const daemon = await startDaemon({
      playbooksDir: join(dir, 'playbooks'),
      store,
      logger: logs.logger,
      clock,
      watch: false,
      execute: createFireDriver({ client, store, logger: logs.logger, clock }),
    });
    cleanups.push(() => daemon.stop());
    const key = 'nightly-subscription-report';
    const runEnded = async (count: number) =>
      vi.waitFor(
        async () => {
          const runs = await store.listRuns({ playbook: 'nightly-subscription-report' });
          expect(runs.filter((run) => run.status === RunStatus.succeeded)).toHaveLength(count);
        },
        { timeout: 30_000, interval: 100 },
      );

    // Saturday 06:00 CET is 05:00 UTC.
    await clock.advanceTo(Date.parse('2025-03-29T04:59:59Z'));
    expect(logs.lines().filter((line) => line.event === 'schedule.fired')).toHaveLength(0);
    await clock.advanceTo(Date.parse('2025-03-29T05:00:00Z'));
    await runEnded(1);
    // Sunday 06:00 CEST is 04:00 UTC: an hour earlier in UTC after the clocks went forward.
    await clock.advanceTo(Date.parse('2025-03-30T04:00:00Z'));
    await runEnded(2);
    await daemon.idle();

    const fired = logs.lines().filter((line) => line.event === 'schedule.fired');
    expect(fired.map((line) => line.scheduledAt)).toEqual(['2025-03-29T05:00:00.000Z', '2025-03-30T04:00:00.000Z']);
    const runs = await store.listRuns({ playbook: 'nightly-subscription-report' });
    expect(runs.every((run) => run.trigger.kind === 'schedule' && run.trigger.scheduleId === key)).toBe(true);
    expect(await readScheduleState(store, key)).toMatchObject({
      lastFireAt: '2025-03-30T04:00:00.000Z',
      lastResult: 'succeeded',
      consecutiveFailures: 0,
    });

    const mails = sim.control.outbox().filter((mail) => mail.subject.includes('Nightly subscriptions'));
    expect(mails).toHaveLength(2);
    for (const mail of mails) expect(mail.to).toEqual(['ops@example.com', 'finance@example.com']);
  });

  it("daemon.fire: a fire's secret input, given by its schedule, is redacted in the log, the journal and the outputs", async () => {
    const secret = 'tok-5ecret-fire-5524';
    const sim = await startSimulator({ port: 0, timeScale: 6000 });
    cleanups.push(() => sim.close());
    const admin = sim.clients.find((client) => client.clientId === 'sim-admin');
    if (!admin) throw new Error('no admin client');
    // The daemon's parts as the process host makes them: one secrets registry, the logger's.
    const secrets = createSecretRegistry();
    const chunks: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        chunks.push(String(chunk));
        done();
      },
    });
    const logger = createLogger({ level: 'info', secrets, destination });
    const client = createPlatformClient({
      credentials: admin,
      authUrl: sim.authUrl,
      baseUrl: sim.baseUrl,
      regionalUrl: sim.regionalUrl,
      region: 'us-west',
      logger,
    });
    const clock = createManualClock(Date.parse('2025-06-02T02:00:00Z'));
    const store = createMemoryRunStore({ now: () => new Date(clock.now()) });
    const dir = tempDir();
    mkdirSync(join(dir, 'playbooks'));
    writeFileSync(
      join(dir, 'playbooks', 'rotate.yaml'),
      `name: rotate\ninputs:\n  token: { type: string, secret: true }\nschedules:\n  - id: rotate-nightly\n    cron: "0 3 * * *"\n    inputs: { token: ${secret} }\nsteps:\n  - id: use\n    log: "rotating with \${{ inputs.token }}"\noutputs:\n  used: "\${{ inputs.token }}"\n`,
    );
    const daemon = await startDaemon({
      playbooksDir: join(dir, 'playbooks'),
      store,
      logger,
      clock,
      watch: false,
      execute: createFireDriver({ client, store, logger, secrets, clock }),
    });
    cleanups.push(() => daemon.stop());
    await clock.advanceTo(Date.parse('2025-06-02T03:00:00Z'));
    await vi.waitFor(
      async () =>
        expect((await store.listRuns({ playbook: 'rotate' })).map((run) => run.status)).toEqual(['succeeded']),
      { timeout: 30_000, interval: 50 },
    );
    const [run] = await store.listRuns({ playbook: 'rotate' });
    expect(run?.trigger).toMatchObject({ kind: 'schedule', scheduleId: 'rotate-nightly' });
    expect((await store.getRun(run?.id ?? ''))?.outputs).toEqual({ used: '[REDACTED]' });
    expect(JSON.stringify(await store.journal(run?.id ?? ''))).not.toContain(secret);
    const log = chunks.join('');
    expect(log).toContain('rotating with [REDACTED]');
    expect(log).not.toContain(secret);
  });

  it('a daemon stopped with a scheduled run in flight: the next daemon resumes that run, which succeeds with the export posted once', async () => {
    // The export takes 50 simulated minutes (within its 60-minute time-out): two seconds, long enough to stop the daemon during its wait.
    const sim = await startSimulator({
      port: 0,
      timeScale: 1500,
      world: { reporting: { exportDurationSeconds: 3000 } },
    });
    cleanups.push(() => sim.close());
    const admin = sim.clients.find((client) => client.clientId === 'sim-admin');
    if (!admin) throw new Error('no admin client');
    const logs = captureLogs();
    const client = createPlatformClient({
      credentials: admin,
      authUrl: sim.authUrl,
      baseUrl: sim.baseUrl,
      regionalUrl: sim.regionalUrl,
      region: 'us-west',
      logger: logs.logger,
    });
    const clock = createManualClock(Date.parse('2025-03-29T04:59:00Z'));
    const store = createMemoryRunStore({ now: () => new Date(clock.now()) });
    const dir = tempDir();
    copyFileSync(join(fixtures, 'nightly', 'nightly-subscription-report.yaml'), join(dir, 'nightly.yaml'));
    const start = (owner: string) =>
      startDaemon({
        playbooksDir: dir,
        store,
        logger: logs.logger,
        clock,
        owner,
        watch: false,
        execute: createFireDriver({ client, store, logger: logs.logger, clock }),
      });
    const events = (name: string) => logs.lines().filter((line) => line.event === name);
    const exportPosts = () =>
      sim.control.requests({ operationId: 'reporting.createReportExport' }).filter((entry) => entry.method === 'POST');

    const first = await start('daemon-a');
    cleanups.push(() => first.stop());
    await clock.advanceTo(Date.parse('2025-03-29T05:00:00Z'));
    const runId = String(events('schedule.fired')[0]?.runId);
    await vi.waitFor(
      async () => {
        const journal = await store.journal(runId);
        expect(journal.some((entry) => entry.event.type === 'request.answered' && entry.event.path === 'export')).toBe(
          true,
        );
      },
      { timeout: 10_000, interval: 20 },
    );
    await first.stop();
    expect(await store.getRun(runId)).toMatchObject({ status: RunStatus.interrupted });
    expect(sim.control.outbox()).toHaveLength(0);

    const second = await start('daemon-b');
    cleanups.push(() => second.stop());
    await vi.waitFor(
      async () => expect(await store.getRun(runId)).toMatchObject({ status: RunStatus.succeeded, resumes: 1 }),
      { timeout: 30_000, interval: 100 },
    );
    await second.idle();
    expect(events('schedule.recovered')).toEqual([
      expect.objectContaining({ owner: 'daemon-b', runId, resume: true, scheduledAt: '2025-03-29T05:00:00.000Z' }),
    ]);
    expect(events('schedule.fired')).toHaveLength(1);
    expect(await store.listRuns({ playbook: 'nightly-subscription-report' })).toHaveLength(1);
    expect(exportPosts()).toHaveLength(1);
    expect(sim.control.outbox().filter((mail) => mail.subject.includes('Nightly subscriptions'))).toHaveLength(1);
    expect(await readScheduleState(store, 'nightly-subscription-report')).toMatchObject({
      lastRunId: runId,
      lastResult: 'succeeded',
      unfinished: [],
    });
  });
});
