import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRunStore } from '../../src/store/open-run-store.js';
import { migrations, schemaVersion } from '../../src/store/sqlite/schema.js';
import { createSqliteRunStore } from '../../src/store/sqlite/index.js';
import type { NewRun, RunStore } from '../../src/store/types.js';

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

let dir: string;
let file: string;
const opened: RunStore[] = [];
function open(options: { now?: () => Date } = {}): RunStore {
  const store = createSqliteRunStore({ file, ...options });
  opened.push(store);
  return store;
}

/** Runs the append worker on run r1 in a process of its own, which SIGKILLs itself; resolves to the signal it ended by. */
function appendThenKill(count: string, mode: 'kill' | 'kill-buffered'): Promise<NodeJS.Signals | null> {
  const worker = join(import.meta.dirname, 'fixtures', 'append-worker.ts');
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', worker, file, 'r1', 'a', count, mode], (error) => {
      if (error && error.signal === null) reject(error);
      else resolve(error?.signal ?? null);
    });
  });
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-sqlite-'));
  file = join(dir, 'runs.sqlite');
});
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('SQLite run store', () => {
  it('keeps runs and journals across close and reopen, in WAL mode', async () => {
    const first = open();
    // Its driver's lease outlives the reopen: the run reads running (without one, interrupted).
    await first.acquireLease('run:r1', 'driver', 60_000);
    await first.createRun(run('r1'));
    await first.append('r1', { type: 'step.started', path: 'update', stepId: 'update', kind: 'call' });
    await first.append('r1', {
      type: 'request.answered',
      path: 'update',
      attempt: 1,
      httpStatus: 202,
      location: '/async-operations/op-1',
    });
    await first.close();
    const second = open();
    expect((await second.getRun('r1'))?.status).toBe('running');
    expect(await second.steps('r1')).toMatchObject([
      { path: 'update', status: 'running', location: '/async-operations/op-1' },
    ]);
    const raw = new Database(file, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(raw.pragma('user_version', { simple: true })).toBe(schemaVersion);
    raw.close();
  });

  it('refuses a store written by a newer version, with exit code 2 and what to do', async () => {
    await open().close();
    const raw = new Database(file);
    raw.pragma(`user_version = ${schemaVersion + 1}`);
    raw.close();
    let error: unknown;
    try {
      open();
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: 'STORE_TOO_NEW', exitCode: 2 });
    expect((error as Error).message).toContain(`schema version ${schemaVersion + 1}`);
    expect((error as Error).message).toContain('Upgrade Fleetbook');
    // Refused before touching it: the newer version's stamp is still there.
    const after = new Database(file, { readonly: true });
    expect(after.pragma('user_version', { simple: true })).toBe(schemaVersion + 1);
    after.close();
  });

  it('migrates an empty (version 0) file on open', async () => {
    new Database(file).close();
    const store = open();
    await store.createRun(run('r1'));
    expect((await store.listRuns()).map((r) => r.id)).toEqual(['r1']);
  });

  it('migrates a version 1 store: its runs read as having had every secret input given', async () => {
    const raw = new Database(file);
    raw.exec(migrations[0]!);
    raw.pragma('user_version = 1');
    raw
      .prepare(
        `INSERT INTO runs (id, playbook, playbook_source, playbook_hash, inputs_json, secret_input_names_json, dry_run, trigger_json, started_at, status)
      VALUES ('old', 'p', 'p.yaml', 'h', '{}', '["token"]', 0, '{"kind":"manual"}', '2026-03-01T10:00:00.000Z', 'failed')`,
      )
      .run();
    raw.close();
    const store = open();
    expect(await store.getRun('old')).toMatchObject({ secretInputNames: ['token'], defaultedSecretInputs: [] });
    await store.close();
  });

  it('migrates an outbox without segments: each row takes its segment from its key, one row per (run, event, segment, channel)', async () => {
    const raw = new Database(file);
    // The store as it was before the migration that gave the outbox its segments.
    const before = migrations.findIndex((migration) => migration.includes('ADD COLUMN segment'));
    for (const migration of migrations.slice(0, before)) raw.exec(migration);
    raw.pragma(`user_version = ${before}`);
    raw
      .prepare(
        `INSERT INTO runs (id, playbook, playbook_source, playbook_hash, inputs_json, secret_input_names_json, dry_run, trigger_json, started_at, status)
      VALUES ('old', 'p', 'p.yaml', 'h', '{}', '[]', 0, '{"kind":"manual"}', '2026-03-01T10:00:00.000Z', 'failed')`,
      )
      .run();
    const insert = raw.prepare(
      `INSERT INTO notifications (key, run_id, event, channel, message_json, state, attempts, created_at, next_attempt_at_ms)
      VALUES (?, 'old', ?, ?, '{}', ?, 1, '2026-03-01T10:00:00.000Z', 0)`,
    );
    insert.run('old/failed/r0/ops-mail', 'failed', 'ops-mail', 'sent');
    insert.run('old/waiting/deploy/gate@r1/chat', 'waiting', 'chat', 'pending');
    raw.close();

    const store = open();
    expect((await store.listNotifications()).map((row) => [row.key, row.segment, row.state])).toEqual([
      ['old/failed/r0/ops-mail', 'r0', 'sent'],
      ['old/waiting/deploy/gate@r1/chat', 'deploy/gate@r1', 'pending'],
    ]);
    // Recorded again after the upgrade (a process recovering the end): the sent row stays as it is.
    await store.addNotifications([
      { key: 'old/failed/r0/ops-mail', runId: 'old', event: 'failed', segment: 'r0', channel: 'ops-mail', message: {} },
    ]);
    expect(await store.listNotifications({ state: 'sent' })).toMatchObject([{ attempts: 1 }]);
    await store.close();
    // The file itself holds the rule: a second row for the same end is refused, whatever its key.
    const check = new Database(file);
    expect(() =>
      check
        .prepare(
          `INSERT INTO notifications (key, run_id, event, segment, channel, message_json, state, attempts, created_at, next_attempt_at_ms)
          VALUES ('another-key', 'old', 'failed', 'r0', 'ops-mail', '{}', 'pending', 0, '2026-03-01T10:00:00.000Z', 0)`,
        )
        .run(),
    ).toThrow(
      /UNIQUE constraint failed: notifications.run_id, notifications.event, notifications.segment, notifications.channel/,
    );
    check.close();
  });

  it('refuses a file that is not a store, with exit code 2', () => {
    writeFileSync(file, 'id,name\n1,not a database\n'.repeat(200));
    expect(() => open()).toThrow(expect.objectContaining({ code: 'STORE_UNREADABLE', exitCode: 2 }));
  });

  it('a lease held through one connection is refused through another until it expires', async () => {
    let nowMs = Date.parse('2026-03-01T10:00:00Z');
    const now = () => new Date(nowMs);
    const a = open({ now });
    const b = open({ now });
    expect(await a.acquireLease('run:r1', 'process-a', 10_000)).toBe(true);
    expect(await b.acquireLease('run:r1', 'process-b', 10_000)).toBe(false);
    nowMs += 10_000;
    expect(await b.acquireLease('run:r1', 'process-b', 10_000)).toBe(true);
    expect(await a.acquireLease('run:r1', 'process-a', 10_000)).toBe(false);
  });

  it('two processes appending to one run at once get one gap-free sequence, each in its own order', async () => {
    const store = open();
    await store.createRun(run('r1'));
    const perWriter = 300;
    const worker = join(import.meta.dirname, 'fixtures', 'append-worker.ts');
    const exec = promisify(execFile);
    await Promise.all(
      ['a', 'b'].map((writer) =>
        exec(process.execPath, ['--import', 'tsx', worker, file, 'r1', writer, String(perWriter)]),
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

  it('every append that resolved survives a SIGKILL of the appending process', async () => {
    const store = open();
    await store.createRun(run('r1'));
    expect(await appendThenKill('200', 'kill')).toBe('SIGKILL');
    const reopened = open();
    expect((await reopened.journal('r1')).map((entry) => entry.seq)).toEqual(
      Array.from({ length: 200 }, (_, index) => index + 1),
    );
  });

  it('commits buffered appends in order with the next unbuffered one, on a read, or on close', async () => {
    const writer = open();
    const reader = open();
    await writer.createRun(run('r1'));
    const started = (index: number) => ({ type: 'item.started', path: 'systems', index }) as const;
    await writer.append('r1', started(0), { buffered: true });
    await writer.append('r1', started(1), { buffered: true });
    // Another connection (another process, or this one after a crash) does not see them yet.
    expect(await reader.journal('r1')).toEqual([]);
    await writer.append('r1', started(2));
    expect((await reader.journal('r1')).map((entry) => entry.event)).toEqual([started(0), started(1), started(2)]);
    await writer.append('r1', started(3), { buffered: true });
    expect((await writer.journal('r1')).map((entry) => entry.seq)).toEqual([1, 2, 3, 4]);
    await writer.append('r1', started(4), { buffered: true });
    await writer.close();
    expect((await reader.journal('r1')).map((entry) => entry.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it('commits a batch of buffered appends of two runs (multi-row inserts of any size) gap-free and in order', async () => {
    // 256 fill the buffer; 245 + 1 unbuffered make a batch that is no power of two (64s, then 32, 16, 4, 2).
    const writer = createSqliteRunStore({ file, maxBufferedEntries: 256 });
    opened.push(writer);
    await writer.createRun(run('r1'));
    await writer.createRun(run('r2'));
    const item = (index: number) => ({ type: 'item.finished', path: 'loop', index, status: 'succeeded' }) as const;
    for (let index = 0; index < 500; index += 1)
      await writer.append(index % 3 === 0 ? 'r2' : 'r1', item(index), { buffered: true });
    await writer.append('r1', item(500));
    const reader = open();
    const r1 = await reader.journal('r1');
    const r2 = await reader.journal('r2');
    expect(r1.map((entry) => entry.seq)).toEqual(Array.from({ length: r1.length }, (_, index) => index + 1));
    expect(r2.map((entry) => entry.seq)).toEqual(Array.from({ length: r2.length }, (_, index) => index + 1));
    const indexes = (entries: typeof r1) => entries.map((entry) => (entry.event as { index: number }).index);
    expect(indexes(r2)).toEqual(Array.from({ length: 167 }, (_, index) => index * 3));
    expect(indexes(r1)).toEqual([
      ...Array.from({ length: 501 }, (_, index) => index).filter((index) => index % 3 !== 0),
    ]);
  });

  it('commits buffered appends after a short delay, and refuses one for an unknown run at once', async () => {
    const writer = createSqliteRunStore({ file, flushAfterMs: 10 });
    opened.push(writer);
    const reader = open();
    await writer.createRun(run('r1'));
    await writer.append('r1', { type: 'item.started', path: 'systems', index: 0 }, { buffered: true });
    await expect.poll(async () => (await reader.journal('r1')).length, { timeout: 2000 }).toBe(1);
    await expect(
      writer.append('nope', { type: 'item.started', path: 'systems', index: 0 }, { buffered: true }),
    ).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
  });

  it('commits the unbuffered appends made together in one transaction (group commit), each resolved once durable', async () => {
    const store = open();
    const reader = open();
    await store.createRun(run('r1'));
    await store.createRun(run('r2'));
    const walBytes = (): number => (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);
    const before = walBytes();
    // 200 systems' answers arriving together: each would rewrite the journal's last page alone.
    const appends = Array.from({ length: 200 }, (_, index) =>
      store
        .append(index % 2 ? 'r2' : 'r1', { type: 'item.started', path: 'systems', index })
        .then(async () =>
          (await reader.journal(index % 2 ? 'r2' : 'r1')).some(
            (entry) => entry.event.type === 'item.started' && entry.event.index === index,
          ),
        ),
    );
    expect(await Promise.all(appends)).toEqual(Array(200).fill(true));
    const indexes = (await reader.journal('r1')).map((entry) =>
      entry.event.type === 'item.started' ? entry.event.index : -1,
    );
    expect(indexes).toEqual(Array.from({ length: 100 }, (_, index) => index * 2));
    // One commit writes a few pages to the write-ahead log; 200 commits wrote at least 200.
    expect(walBytes() - before).toBeLessThan(50 * 4096);
    // An append for an unknown run is refused at once, and does not fail the others of its turn.
    const [known, unknown] = await Promise.allSettled([
      store.append('r1', { type: 'item.started', path: 'systems', index: 1000 }),
      store.append('nope', { type: 'item.started', path: 'systems', index: 0 }),
    ]);
    expect(known).toEqual({ status: 'fulfilled', value: undefined });
    expect(unknown).toMatchObject({ status: 'rejected', reason: { code: 'RUN_NOT_FOUND' } });
  });

  it('after a SIGKILL with buffered appends, what survives is a prefix holding every unbuffered append', async () => {
    const store = open();
    await store.createRun(run('r1'));
    expect(await appendThenKill('205', 'kill-buffered')).toBe('SIGKILL');
    const indexes = (await open().journal('r1')).map((entry) =>
      entry.event.type === 'item.started' ? entry.event.index : -1,
    );
    expect(indexes.length).toBeGreaterThanOrEqual(200);
    expect(indexes).toEqual(Array.from({ length: indexes.length }, (_, index) => index));
  });

  it('appends fast enough for the engine (µs per append logged, not asserted)', async () => {
    const store = open();
    await store.createRun(run('r1'));
    const count = 5000;
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
      `sqlite store: ${microsPerAppend.toFixed(1)} µs per journal append (${count} appends, WAL, synchronous=NORMAL)`,
    );
    expect((await store.journal('r1')).length).toBe(count);
  });
});

describe('openRunStore', () => {
  it('creates FLEETBOOK_HOME on demand and keeps runs.sqlite there', async () => {
    const home = join(dir, 'nested', 'home');
    const store = await openRunStore({ env: { FLEETBOOK_HOME: home } });
    opened.push(store);
    await store.createRun(run('r1'));
    expect(existsSync(join(home, 'runs.sqlite'))).toBe(true);
    const again = await openRunStore({ home });
    opened.push(again);
    expect((await again.getRun('r1'))?.id).toBe('r1');
  });
});
