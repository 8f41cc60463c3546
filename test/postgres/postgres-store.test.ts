import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRunStore } from '../../src/store/open-run-store.js';
import { postgresMigrations, postgresSchemaVersion } from '../../src/store/postgres/schema.js';
import { createPostgresRunStore } from '../../src/store/postgres/index.js';
import type { NewRun, RunStore } from '../../src/store/types.js';
import { runCli } from '../support/cli.js';
import { clusterPassword, createTestDatabase, freePort, testPostgresUrl } from '../support/postgres-cluster.js';

const adminUrl = testPostgresUrl();
const exec = promisify(execFile);
const appendWorker = join(import.meta.dirname, '..', 'store', 'fixtures', 'append-worker.ts');

const run = (id: string): NewRun => ({
  id,
  playbook: 'rolling-cluster-update',
  playbookSource: 'playbooks/rolling-cluster-update.yaml',
  playbookHash: 'sha256:abc',
  inputs: { catalogVersion: '2.4.0' },
  secretInputNames: [],
  dryRun: false,
  trigger: { kind: 'manual' },
  startedAt: new Date().toISOString(),
});

async function sql<R extends pg.QueryResultRow>(url: string, text: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text)).rows;
  } finally {
    await client.end();
  }
}

describe.skipIf(!adminUrl)('PostgreSQL run store', () => {
  let url: string;
  const opened: RunStore[] = [];
  const open = async (options: { flushAfterMs?: number } = {}) => {
    const store = await createPostgresRunStore({ url, ...options });
    opened.push(store);
    return store;
  };
  beforeEach(async () => {
    url = await createTestDatabase(adminUrl ?? '');
  });
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });

  it('migrates an empty database up to the current version, once, even with several openers at once', async () => {
    await Promise.all([open(), open(), open()]);
    expect(await sql<{ version: number }>(url, 'SELECT version FROM fleetbook_schema')).toEqual([
      { version: postgresSchemaVersion },
    ]);
    const tables = await sql<{ name: string }>(
      url,
      "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
    );
    expect(tables.map((table) => table.name)).toEqual(
      expect.arrayContaining(['fleetbook_schema', 'journal', 'leases', 'runs', 'schedule_state']),
    );
  });

  it('migrates an outbox without segments: each row takes its segment from its key, one row per (run, event, segment, channel)', async () => {
    // The database as it was before the migration that gave the outbox its segments.
    const before = postgresMigrations.findIndex((migration) => migration.includes('ADD COLUMN segment'));
    await sql(
      url,
      [
        ...postgresMigrations.slice(0, before),
        'CREATE TABLE fleetbook_schema (only_row BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (only_row), version INTEGER NOT NULL)',
        `INSERT INTO fleetbook_schema (version) VALUES (${before})`,
        `INSERT INTO runs (id, playbook, playbook_source, playbook_hash, inputs_json, secret_input_names_json, dry_run, trigger_json, started_at, status)
         VALUES ('old', 'p', 'p.yaml', 'h', '{}', '[]', 0, '{"kind":"manual"}', '2026-03-01T10:00:00.000Z', 'failed')`,
        `INSERT INTO notifications (key, run_id, event, channel, message_json, state, attempts, created_at, next_attempt_at_ms)
         VALUES ('old/failed/r0/ops-mail', 'old', 'failed', 'ops-mail', '{}', 'sent', 1, '2026-03-01T10:00:00.000Z', 0),
                ('old/waiting/deploy/gate@r1/chat', 'old', 'waiting', 'chat', '{}', 'pending', 0, '2026-03-01T10:00:00.000Z', 0)`,
      ].join(';\n'),
    );
    const store = await open();
    expect((await store.listNotifications()).map((row) => [row.key, row.segment, row.state])).toEqual([
      ['old/failed/r0/ops-mail', 'r0', 'sent'],
      ['old/waiting/deploy/gate@r1/chat', 'deploy/gate@r1', 'pending'],
    ]);
    // Recorded again after the upgrade (a process recovering the end): the sent row stays as it is.
    await store.addNotifications([
      { key: 'old/failed/r0/ops-mail', runId: 'old', event: 'failed', segment: 'r0', channel: 'ops-mail', message: {} },
    ]);
    expect(await store.listNotifications({ state: 'sent' })).toMatchObject([{ attempts: 1 }]);
    // The database itself holds the rule: a second row for the same end is refused, whatever its key.
    await expect(
      sql(
        url,
        `INSERT INTO notifications (key, run_id, event, segment, channel, message_json, state, attempts, created_at, next_attempt_at_ms)
         VALUES ('another-key', 'old', 'failed', 'r0', 'ops-mail', '{}', 'pending', 0, '2026-03-01T10:00:00.000Z', 0)`,
      ),
    ).rejects.toThrow(/notifications_one_per_end/);
  });

  it('refuses a database a newer Fleetbook migrated: exit 2 and what to do, before anything is written', async () => {
    await (await open()).close();
    await sql(url, `UPDATE fleetbook_schema SET version = ${postgresSchemaVersion + 1}`);
    await expect(createPostgresRunStore({ url })).rejects.toMatchObject({ code: 'STORE_TOO_NEW', exitCode: 2 });
    const outcome = await runCli(['runs', 'list'], { env: { FLEETBOOK_STORE: url } });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain('was migrated by a newer Fleetbook');
    expect(outcome.stderr).toContain('Upgrade Fleetbook');
    expect(outcome.stderr).not.toContain(clusterPassword);
    expect(outcome.stderr).not.toMatch(/\n\s+at /);
  });

  it('keeps what one process wrote for the next: `fleetbook runs list` on another connection sees the run', async () => {
    const store = await open();
    await store.createRun(run('shared-run-1'));
    await store.append('shared-run-1', { type: 'step.started', path: 'a', stepId: 'a', kind: 'set' });
    const outcome = await runCli(['runs', 'list', '--json'], { env: { FLEETBOOK_STORE: url } });
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toContain('shared-run-1');
    const shown = await runCli(['runs', 'show', 'shared-run-1', '--json'], { env: { FLEETBOOK_STORE: url } });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('"path":"a"');
  });

  it('two processes appending to one run at once get one gap-free sequence, each in its own order', async () => {
    const store = await open();
    await store.createRun(run('r1'));
    const perWriter = 200;
    await Promise.all(
      ['a', 'b'].map((writer) =>
        exec(process.execPath, ['--import', 'tsx', appendWorker, url, 'r1', writer, String(perWriter)]),
      ),
    );
    const journal = await store.journal('r1');
    expect(journal.map((entry) => entry.seq)).toEqual(Array.from({ length: 2 * perWriter }, (_, index) => index + 1));
    for (const writer of ['writer-a', 'writer-b']) {
      const indexes = journal.flatMap((entry) =>
        entry.event.path === writer && entry.event.type === 'item.started' ? [entry.event.index] : [],
      );
      expect(indexes).toEqual(Array.from({ length: perWriter }, (_, index) => index));
    }
  });

  it('after a SIGKILL with buffered appends, what survives is a prefix holding every unbuffered append', async () => {
    const store = await open();
    await store.createRun(run('r1'));
    const killed = await exec(process.execPath, [
      '--import',
      'tsx',
      appendWorker,
      url,
      'r1',
      'a',
      '105',
      'kill-buffered',
    ]).catch((error: { signal?: string }) => error.signal);
    expect(killed).toBe('SIGKILL');
    const indexes = (await store.journal('r1')).map((entry) =>
      entry.event.type === 'item.started' ? entry.event.index : -1,
    );
    expect(indexes.length).toBeGreaterThanOrEqual(100);
    expect(indexes).toEqual(Array.from({ length: indexes.length }, (_, index) => index));
  });

  it('commits buffered appends with the next unbuffered one, on a read, after a short delay, or on close', async () => {
    const writer = await open({ flushAfterMs: 10 });
    const reader = await open();
    await writer.createRun(run('r1'));
    const started = (index: number) => ({ type: 'item.started', path: 'systems', index }) as const;
    await writer.append('r1', started(0), { buffered: true });
    await writer.append('r1', started(1), { buffered: true });
    await writer.append('r1', started(2));
    expect((await reader.journal('r1')).map((entry) => entry.event)).toEqual([started(0), started(1), started(2)]);
    await writer.append('r1', started(3), { buffered: true });
    await expect.poll(async () => (await reader.journal('r1')).length, { timeout: 2000 }).toBe(4);
    await expect(writer.append('nope', started(0), { buffered: true })).rejects.toMatchObject({
      code: 'RUN_NOT_FOUND',
    });
    await writer.append('r1', started(4), { buffered: true });
    await writer.close();
    expect((await reader.journal('r1')).map((entry) => entry.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it('commits the appends made while a commit is at the server together, each caller told once its entry is in', async () => {
    const store = await open();
    await store.createRun(run('r1'));
    // Each writing transaction takes a transaction id: their count between two reads is the commits made.
    const xid = async () => Number((await sql<{ xid: string }>(url, 'SELECT txid_current() AS xid'))[0]?.xid);
    const before = await xid();
    const count = 200;
    await Promise.all(
      Array.from({ length: count }, (_, index) =>
        store.append('r1', { type: 'step.started', path: `systems[${index}].update`, stepId: 'update', kind: 'call' }),
      ),
    );
    const commits = (await xid()) - before - 1;
    expect(commits).toBeGreaterThanOrEqual(1);
    expect(commits).toBeLessThan(10);
    const journal = await store.journal('r1');
    expect(journal.map((entry) => [entry.seq, (entry.event as { path: string }).path])).toEqual(
      Array.from({ length: count }, (_, index) => [index + 1, `systems[${index}].update`]),
    );
  });

  it('appends fast enough for the engine (µs per append logged, not asserted)', async () => {
    const store = await open();
    await store.createRun(run('r1'));
    const count = 1000;
    const started = process.hrtime.bigint();
    for (let index = 0; index < count; index += 1) {
      await store.append('r1', {
        type: 'step.finished',
        path: `systems[${index}].update`,
        status: 'succeeded',
        outputs: { status: 202, body: { id: `op-${index}` } },
      });
    }
    const microsPerAppend = Number(process.hrtime.bigint() - started) / 1000 / count;
    console.log(
      `postgres store: ${microsPerAppend.toFixed(1)} µs per journal append (${count} appends, fsync=off test cluster)`,
    );
    expect((await store.journal('r1')).length).toBe(count);
  });
});

describe.skipIf(!adminUrl)('FLEETBOOK_STORE: bad input and an unusable server, exit 2 before any run', () => {
  const withPassword = (password: string) => {
    const url = new URL(adminUrl ?? '');
    url.password = password;
    return url.toString();
  };

  it.each([
    ['not a URL', 'not a url', 'is not a PostgreSQL URL'],
    ['another scheme', 'mysql://u:p@localhost/db', 'is not a PostgreSQL URL'],
  ])('refuses %s', async (_name, store, message) => {
    const outcome = await runCli(['runs', 'list'], { env: { FLEETBOOK_STORE: store } });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain(message);
    expect(outcome.stderr).toContain('postgres://user:password@host:5432/database');
  });

  it('says the password was refused, never showing it', async () => {
    const outcome = await runCli(['runs', 'list'], { env: { FLEETBOOK_STORE: withPassword('wrong-secret-pw') } });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain('refused the user name or password');
    expect(outcome.stderr).not.toContain('wrong-secret-pw');
  });

  it('says the server cannot be reached', async () => {
    const port = await freePort();
    const outcome = await runCli(['runs', 'list'], {
      env: { FLEETBOOK_STORE: `postgres://u:p@127.0.0.1:${port}/fleetbook` },
    });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain('cannot be reached (ECONNREFUSED)');
  });

  it('says the database does not exist', async () => {
    const url = new URL(adminUrl ?? '');
    url.pathname = '/no_such_database';
    const outcome = await runCli(['runs', 'list'], { env: { FLEETBOOK_STORE: url.toString() } });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain('the database does not exist');
  });

  it('`fleetbook run` stops before the run starts: no run, no request', async () => {
    const port = await freePort();
    const outcome = await runCli(
      ['run', 'playbooks/rolling-cluster-update.yaml', '--target', 'simulator', '-i', 'catalogVersion=2.4.0'],
      {
        env: { FLEETBOOK_STORE: `postgres://u:p@127.0.0.1:${port}/fleetbook` },
      },
    );
    expect(outcome.code).toBe(2);
    expect(outcome.stdout).not.toContain('Running');
    expect(outcome.stderr).toContain('cannot be reached');
  });
});

describe.skipIf(!adminUrl)('openRunStore', () => {
  it("takes a profile's store: when FLEETBOOK_STORE is not set; FLEETBOOK_STORE wins", async () => {
    const url = await createTestDatabase(adminUrl ?? '');
    const fromProfile = await openRunStore({ env: {}, store: url });
    await fromProfile.createRun(run('via-profile'));
    await fromProfile.close();
    const other = await createTestDatabase(adminUrl ?? '');
    const fromEnv = await openRunStore({ env: { FLEETBOOK_STORE: other }, store: url });
    expect(await fromEnv.getRun('via-profile')).toBeUndefined();
    await fromEnv.close();
    const again = await openRunStore({ env: {}, store: url });
    expect(await again.getRun('via-profile')).toBeDefined();
    await again.close();
  });
});
