/**
 * A large run's journal without a large run: copies a finished run of benchmark 15 (kept with
 * `--keep`) `--times` times over into one run of `--times` × as many systems, the copies of a
 * `systems` item numbered after the originals (item i of copy k is item i + k × N), written to a
 * SQLite store and/or a PostgreSQL one. So a 1,000-system run measured in two minutes makes the
 * 10,000-system journal `fleetbook runs show` is measured on (issue 22), with the entries, sizes
 * and interleaving of a real run: each entry of an item is followed by its copies.
 *
 *   npx tsx bench/lib/grow-journal.ts --from <runs.sqlite> --run <runId> --times 10 \
 *     [--to-sqlite <file>] [--to-postgres <url>] [--as <new run id>] [--without-view]
 *
 * The run's own record (inputs, outputs, status) is copied as it is; the `systems` loop's
 * `step.finished` lists every copy's items. As the engine does when a run ends, the store then
 * keeps the journal's view (`checkpointJournalView`, what `runs show` reads); `--without-view`
 * leaves it out, so `runs show` folds the whole journal. Prints the new run's id, entries and
 * bytes, and the time the view took.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { checkpointJournalView, createPostgresRunStore, createSqliteRunStore } from '../../src/store/index.js';
import type { RunRecord, RunStore } from '../../src/store/types.js';

const LOOP = 'systems';

function option(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? undefined : process.argv[at + 1];
}

function required(name: string): string {
  const value = option(name);
  if (value === undefined) throw new Error(`--${name} is required (see the comment at the top of grow-journal.ts)`);
  return value;
}

interface Row {
  seq: number;
  at: string;
  eventJson: string;
}

/** Item i of the loop as item i + offset: its path (`systems[3].work...`) or, for its own events, its index. */
function shifted(event: Record<string, unknown>, offset: number): Record<string, unknown> | undefined {
  const path = event.path as string;
  if (path === LOOP && (event.type === 'item.started' || event.type === 'item.finished'))
    return { ...event, index: (event.index as number) + offset };
  const match = /^systems\[(\d+)\]/.exec(path);
  if (!match) return undefined;
  return { ...event, path: `${LOOP}[${Number(match[1]) + offset}]${path.slice(match[0].length)}` };
}

/** The source journal's entries, each item's followed by its copies, renumbered from 1. */
function* grownEntries(rows: Iterable<Row>, times: number, systems: number): Generator<[string, string]> {
  for (const row of rows) {
    const event = JSON.parse(row.eventJson) as Record<string, unknown>;
    if (event.type === 'step.finished' && event.path === LOOP && event.outputs !== undefined) {
      // The loop's end lists its items ({ index, item, status }): every copy's.
      const outputs = event.outputs as { items?: Array<Record<string, unknown>> };
      const items = outputs.items ?? [];
      const grown = Array.from({ length: times }, (_, copy) =>
        items.map((item) => ({ ...item, index: (item.index as number) + copy * systems })),
      ).flat();
      yield [row.at, JSON.stringify({ ...event, outputs: { ...outputs, items: grown } })];
      continue;
    }
    if (shifted(event, 0) === undefined) {
      yield [row.at, row.eventJson];
      continue;
    }
    yield [row.at, row.eventJson];
    for (let copy = 1; copy < times; copy += 1) yield [row.at, JSON.stringify(shifted(event, copy * systems))];
  }
}

async function copyRun(store: RunStore, run: RunRecord, id: string): Promise<void> {
  await store.createRun({
    id,
    playbook: run.playbook,
    playbookSource: run.playbookSource,
    playbookHash: run.playbookHash,
    inputs: run.inputs,
    secretInputNames: run.secretInputNames,
    dryRun: run.dryRun,
    trigger: run.trigger,
    startedAt: run.startedAt,
  });
}

const from = required('from');
const sourceRunId = required('run');
const times = Number(required('times'));
const toSqlite = option('to-sqlite');
const toPostgres = option('to-postgres');
const id = option('as') ?? `${sourceRunId.slice(0, 8)}-x${times}`;
const withView = !process.argv.includes('--without-view');

/** The run's end as the engine writes it: its status, then the view of its journal. */
async function endRun(
  store: RunStore,
  record: RunRecord,
  ended: Parameters<RunStore['setRunStatus']>[2],
): Promise<string> {
  await store.setRunStatus(id, record.status, ended);
  if (!withView) return 'no view';
  const started = performance.now();
  const seq = await checkpointJournalView(store, id);
  return seq === undefined
    ? 'no view (short journal)'
    : `view through ${seq} in ${((performance.now() - started) / 1000).toFixed(1)} s`;
}

const source = createSqliteRunStore({ file: from });
const run = await source.getRun(sourceRunId);
if (!run) throw new Error(`no run ${sourceRunId} in ${from}`);
await source.close();
const db = new Database(from, { readonly: true, fileMustExist: true });
const systems = (
  db
    .prepare<[string], { n: number }>(
      `SELECT COUNT(*) AS n FROM journal WHERE run_id = ? AND event_json LIKE '{"type":"item.finished","path":"systems",%'`,
    )
    .get(sourceRunId) ?? { n: 0 }
).n;
const rows = () =>
  db
    .prepare<[string], Row>(`SELECT seq, at, event_json AS eventJson FROM journal WHERE run_id = ? ORDER BY seq`)
    .iterate(sourceRunId);
/** The run's outputs as a run of that many systems would have them: its lists (the report's rows) repeated. */
const grownOutputs =
  run.outputs !== null && typeof run.outputs === 'object' && !Array.isArray(run.outputs)
    ? Object.fromEntries(
        Object.entries(run.outputs).map(([name, value]) => [
          name,
          Array.isArray(value) ? Array.from({ length: times }, () => value).flat() : value,
        ]),
      )
    : run.outputs;
const ended = { outputs: grownOutputs, ...(run.error ? { error: run.error } : {}) };

if (toSqlite) {
  const store = createSqliteRunStore({ file: toSqlite });
  await copyRun(store, run, id);
  await store.close();
  const target = new Database(toSqlite);
  const insert = target.prepare(`INSERT INTO journal (run_id, seq, at, event_json) VALUES (?, ?, ?, ?)`);
  let seq = 0;
  let bytes = 0;
  target.transaction(() => {
    for (const [at, eventJson] of grownEntries(rows(), times, systems)) {
      seq += 1;
      bytes += eventJson.length + at.length;
      insert.run(id, seq, at, eventJson);
    }
  })();
  target.close();
  const done = createSqliteRunStore({ file: toSqlite });
  const view = await endRun(done, run, ended);
  await done.close();
  console.log(
    `SQLite ${toSqlite}: run ${id}, ${systems * times} systems, ${seq} entries, ${(bytes / 1e6).toFixed(1)} MB, ${view}`,
  );
}

if (toPostgres) {
  const store = await createPostgresRunStore({ url: toPostgres });
  await copyRun(store, run, id);
  await store.close();
  const pool = new pg.Pool({ connectionString: toPostgres, max: 1 });
  let seq = 0;
  let bytes = 0;
  let batch: { seqs: number[]; ats: string[]; events: string[] } = { seqs: [], ats: [], events: [] };
  const flush = async () => {
    if (batch.seqs.length === 0) return;
    await pool.query(
      `INSERT INTO journal (run_id, seq, at, event_json) SELECT $1, unnest($2::int[]), unnest($3::text[]), unnest($4::text[])`,
      [id, batch.seqs, batch.ats, batch.events],
    );
    batch = { seqs: [], ats: [], events: [] };
  };
  for (const [at, eventJson] of grownEntries(rows(), times, systems)) {
    seq += 1;
    bytes += eventJson.length + at.length;
    batch.seqs.push(seq);
    batch.ats.push(at);
    batch.events.push(eventJson);
    if (batch.seqs.length >= 2_000) await flush();
  }
  await flush();
  await pool.query(`UPDATE runs SET journal_seq = $2 WHERE id = $1`, [id, seq]);
  await pool.query(`ANALYZE journal`);
  await pool.end();
  const done = await createPostgresRunStore({ url: toPostgres });
  const view = await endRun(done, run, ended);
  await done.close();
  console.log(
    `PostgreSQL: run ${id}, ${systems * times} systems, ${seq} entries, ${(bytes / 1e6).toFixed(1)} MB, ${view}`,
  );
}
db.close();
