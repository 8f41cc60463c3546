/**
 * Benchmark 15, a fleet of 10,000 systems in one run (issue 22): the bundled
 * `rolling-cluster-update` playbook on N systems of exactly 3 clusters (N = 10,000; 1,000 quick),
 * cluster by cluster, 200 systems at a time, on the simulator at a time scale that makes the run
 * last a few minutes, once on the SQLite store and once on the PostgreSQL one (a throwaway
 * cluster; skipped with a line when PostgreSQL is not installed). The run is a process of its
 * own on the compiled engine (`lib/fleet-run-child.mjs`), so its RSS is Fleetbook's alone.
 * Figures per store:
 * - makespan / lower bound (as benchmark 4: the `systems` loop's wall time from its journal
 *   against max(chain, Σ chains / concurrency));
 * - the run process's peak RSS, and its CPU time per system (what the engine costs, which the
 *   machine's load moves far less than the makespan);
 * - journal bytes per finished system at 25, 50 and 100% of the systems (JSON of the events and
 *   their times, read with SQL while the run goes): equal figures mean linear growth;
 * - `fleetbook runs show` of the finished run: wall time of the CLI process;
 * - `fleetbook runs show -o json`: wall time and peak RSS of the CLI process, against the size
 *   of the JSON it wrote and of the journal;
 * - a second run SIGKILLed once half its systems finished, then resumed: the replay time (from
 *   `resumeRun` to the first entry the resumed run journals) and the whole resume process's time
 *   to that point. The resumed run is stopped there (it would only repeat the first run's second half).
 * Targets: makespan ≤ 1.05×, peak RSS < 500 MB, runs show < 2 s, replay < 10 s.
 * Run alone: npm run build && npx tsx bench/15-fleet-10k.ts [--quick] [--store sqlite|postgres] [--run-only] [--keep]
 * `--keep` leaves the benchmark's folder (the SQLite store with both runs' journals) and says where,
 * for measuring `runs show` again or growing the journal (`lib/grow-journal.ts`).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import {
  closeSync,
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { listFleet } from './lib/fleet.js';
import { createBenchClient, ms, printFigures, quick, rootDir, type Verdict } from './lib/harness.js';
import { createTestDatabase } from './lib/postgres.js';
import { findPostgresBin, installHint, startPostgresCluster } from '../test/support/postgres-cluster.js';
import { startSimulatorProcess, type SimulatorProcess } from './lib/simulator-process.js';

const NAME = '15 fleet-10k';
const TARGETS = { ratio: 1.05, rssMB: 500, showMs: 2_000, replayMs: 10_000 };
const systemsArg = process.argv.indexOf('--systems');
/** `--systems N` overrides the size (a smoke run of the benchmark itself). */
const count = systemsArg > 0 ? Number(process.argv[systemsArg + 1]) : quick ? 1_000 : 10_000;
/** Where the benchmark is, on stderr (a full run lasts several minutes per store). */
const progress = (text: string): void => console.error(`[${new Date().toISOString().slice(11, 19)}] ${text}`);
const CONCURRENCY = 200;
const CLUSTERS = 3;
/** A cluster is a 5-minute precheck and a 45-minute update (simulated). */
const CHAIN_SIMULATED_MS = CLUSTERS * (5 + 45) * 60_000;
const BOUND_SIMULATED_MS = Math.max(CHAIN_SIMULATED_MS, (count * CHAIN_SIMULATED_MS) / CONCURRENCY);
/**
 * The lower bound in real time: 7.5 minutes (45 s quick). At 2,000 (3.75 minutes) the engine's
 * CPU alone (~29 ms per system, 290 s for 10,000) would exceed the bound on its one core, so the
 * makespan would measure the compression, not the engine (bench/results.md, 2026-11-25 evening).
 */
const TIME_SCALE = 1_000;
/**
 * Waits poll every 60 simulated seconds (twice the suggested interval): 200 waits polling at
 * the suggestion would ask the simulator for more than its one core serves at this scale.
 */
const MIN_POLL_MS = 60_000 / TIME_SCALE;
const UNLIMITED = 1_000_000;
const CHECKPOINTS = [0.25, 0.5, 1];

/** `--run-only`: the first run's figures (makespan, RSS, CPU, journal) without `runs show` and the killed run. */
const runOnly = process.argv.includes('--run-only');
const storeArg = process.argv.indexOf('--store');
const keep = process.argv.includes('--keep');
const stores = storeArg < 0 ? ['sqlite', 'postgres'] : [process.argv[storeArg + 1] ?? ''];

const childScript = fileURLToPath(new URL('./lib/fleet-run-child.mjs', import.meta.url));
const measuredCli = fileURLToPath(new URL('./lib/measured-cli.mjs', import.meta.url));
const playbookFile = join(rootDir, 'playbooks', 'rolling-cluster-update.yaml');

interface ChildResult {
  status: string;
  error?: unknown;
  durationMs: number;
  runId: string;
  peakRssBytes: number;
  /** The peak before the ended run kept its journal view (absent when it kept none). */
  peakRssBeforeViewBytes?: number;
  /** CPU time of the run's process (user + system), ms. */
  cpuMs: number;
  replayMs?: number;
}

/** How far a run's journal is: entries, bytes (event JSON and time) and systems finished. */
interface JournalSize {
  entries: number;
  bytes: number;
  items: number;
}

/**
 * A second connection to the store that counts, as an operator's query would, while the run writes.
 * `size` reads only the entries appended since its last call for that run and adds them up: the
 * query over the whole journal it made each second before scanned a few hundred MB at 10,000
 * systems every time, taking CPU from the run it measures (bench/results.md).
 */
interface StoreProbe {
  size(runId: string): Promise<JournalSize>;
  loopSpanMs(runId: string): Promise<number>;
  /** The first failed steps' entries (event JSON), so a run that failed says why. */
  failures(runId: string): Promise<string[]>;
  close(): Promise<void>;
}

/** The entries of a run after a seq: a run's seqs are committed in order, so none is missed. */
const SIZE_SQL = (runId: string, afterSeq: string) => `
  SELECT COUNT(*) AS entries, COALESCE(SUM(LENGTH(event_json) + LENGTH(at)), 0) AS bytes,
    COALESCE(SUM(CASE WHEN event_json LIKE '{"type":"item.finished","path":"systems",%' THEN 1 ELSE 0 END), 0) AS items,
    MAX(seq) AS "lastSeq"
  FROM journal WHERE run_id = ${runId} AND seq > ${afterSeq}`;
type SizeRow = JournalSize & { lastSeq: number | null };

/** `read(runId, afterSeq)` of the new entries, added to the run's totals so far. */
function sizeSoFar(read: (runId: string, afterSeq: number) => Promise<SizeRow | undefined>): StoreProbe['size'] {
  const totals = new Map<string, JournalSize & { lastSeq: number }>();
  return async (runId) => {
    const total = totals.get(runId) ?? { entries: 0, bytes: 0, items: 0, lastSeq: 0 };
    const added = await read(runId, total.lastSeq);
    if (added && added.lastSeq !== null) {
      total.entries += Number(added.entries);
      total.bytes += Number(added.bytes);
      total.items += Number(added.items);
      total.lastSeq = Number(added.lastSeq);
    }
    totals.set(runId, total);
    return { entries: total.entries, bytes: total.bytes, items: total.items };
  };
}
const LOOP_SQL = (param: string) => `
  SELECT at, event_json AS "eventJson" FROM journal WHERE run_id = ${param}
    AND (event_json LIKE '{"type":"step.started","path":"systems",%' OR event_json LIKE '{"type":"step.finished","path":"systems",%')
  ORDER BY seq`;

const FAILURES_SQL = (param: string) => `
  SELECT event_json AS "eventJson" FROM journal WHERE run_id = ${param}
    AND event_json LIKE '{"type":"step.finished",%' AND event_json LIKE '%"status":"failed"%'
  ORDER BY seq LIMIT 3`;

function spanOf(rows: Array<{ at: string; eventJson: string }>): number {
  const at = (type: string) => Date.parse(rows.find((row) => row.eventJson.startsWith(`{"type":"${type}"`))?.at ?? '');
  return at('step.finished') - at('step.started');
}

function sqliteProbe(file: string): StoreProbe {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  const size = db.prepare<[string, number], SizeRow>(SIZE_SQL('?', '?'));
  const loop = db.prepare<[string], { at: string; eventJson: string }>(LOOP_SQL('?'));
  const failed = db.prepare<[string], { eventJson: string }>(FAILURES_SQL('?'));
  return {
    size: sizeSoFar(async (runId, afterSeq) => size.get(runId, afterSeq)),
    loopSpanMs: async (runId) => spanOf(loop.all(runId)),
    failures: async (runId) => failed.all(runId).map((row) => row.eventJson),
    close: async () => void db.close(),
  };
}

function postgresProbe(url: string): StoreProbe {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  return {
    size: sizeSoFar(
      async (runId, afterSeq) => (await pool.query<SizeRow>(SIZE_SQL('$1', '$2'), [runId, afterSeq])).rows[0],
    ),
    async loopSpanMs(runId) {
      return spanOf((await pool.query<{ at: string; eventJson: string }>(LOOP_SQL('$1'), [runId])).rows);
    },
    async failures(runId) {
      return (await pool.query<{ eventJson: string }>(FAILURES_SQL('$1'), [runId])).rows.map((row) => row.eventJson);
    },
    close: () => pool.end(),
  };
}

interface Target {
  name: string;
  /** The child's store option. */
  store: { file: string } | { url: string };
  /** The CLI's environment for the same store. */
  env: NodeJS.ProcessEnv;
  probe(): StoreProbe;
}

/** Starts a child run; `done` resolves with its result (or rejects with its failure). */
function startChild(dir: string, job: Record<string, unknown>): { pid: number; done: Promise<ChildResult> } {
  const jobFile = join(dir, `job-${randomUUID()}.json`);
  const resultFile = `${jobFile}.result`;
  writeFileSync(jobFile, JSON.stringify({ ...job, resultFile }));
  // `BENCH_CHILD_NODE_OPTIONS` (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof-run`) go to the run's `node`, as for benchmarks 5 and 6.
  const nodeOptions = (process.env.BENCH_CHILD_NODE_OPTIONS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeOptions, childScript, jobFile], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const done = once(child, 'exit').then(([code, signal]) => {
    if (code !== 0) throw new Error(`the run process ended ${String(signal ?? code)}: ${stderr}`);
    return JSON.parse(readFileSync(resultFile, 'utf8')) as ChildResult;
  });
  return { pid: child.pid ?? 0, done };
}

/**
 * The JSON `runs show -o json` wrote parses, when it fits in one string (V8's largest is 512 MB;
 * at 10,000 systems the document is ~670 MB); beyond that its first and last bytes are checked.
 */
function checkJsonDocument(file: string, bytes: number): void {
  if (bytes < 256e6) {
    JSON.parse(readFileSync(file, 'utf8'));
    return;
  }
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(8);
    const tail = Buffer.alloc(2);
    readSync(fd, head, 0, head.length, 0);
    readSync(fd, tail, 0, tail.length, bytes - tail.length);
    if (!head.toString().startsWith('{"run":') || tail.toString() !== '}\n')
      throw new Error(
        `${file} is not one JSON document: it starts ${head.toString()} and ends ${JSON.stringify(tail.toString())}`,
      );
  } finally {
    closeSync(fd);
  }
}

/** `fleetbook <args>` in a process of its own: wall time, peak RSS, bytes written to stdout. */
async function cli(
  args: string[],
  env: NodeJS.ProcessEnv,
  stdoutFile: string,
): Promise<{ ms: number; peakRssMB: number; bytes: number }> {
  const started = performance.now();
  const out = createWriteStream(stdoutFile);
  await once(out, 'open');
  const rssFile = `${stdoutFile}.rss`;
  const child = spawn(process.execPath, [measuredCli, ...args], {
    env: { ...process.env, ...env, BENCH_RSS_FILE: rssFile },
    stdio: ['ignore', out, 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  const ms = performance.now() - started;
  out.close();
  if (code !== 0) throw new Error(`fleetbook ${args.join(' ')} exited ${String(code)}: ${stderr.slice(-2000)}`);
  return { ms, peakRssMB: Number(readFileSync(rssFile, 'utf8')) / 1e6, bytes: statSync(stdoutFile).size };
}

/** A simulator of its own for each store: each store's two runs update 2 × N systems of its world. */
async function startFleet(): Promise<{ sim: SimulatorProcess; first: string[]; second: string[] }> {
  progress(`the simulator: ${count * 6 + 120} systems of ${CLUSTERS} clusters`);
  const sim = await startSimulatorProcess({
    // Systems of 3 clusters, a third of them with an update path to 2.4.0 (online, supported, older).
    world: { privateCloud: { systems: count * 6 + 120, clustersPerSystem: CLUSTERS, failures: [] } },
    timeScale: TIME_SCALE,
    rateLimitScale: 10_000,
  });
  try {
    const client = createBenchClient(sim, {
      rateLimits: { defaultPerMinute: UNLIMITED, perMinute: { privateCloud: UNLIMITED } },
    });
    const eligible = (await listFleet(client))
      .filter((system) => system.state === 'ONLINE' && system.updateSupported && system.offers('2.4.0'))
      .map((system) => system.id);
    if (eligible.length < 2 * count) throw new Error(`only ${eligible.length} systems with an update path`);
    return { sim, first: eligible.slice(0, count), second: eligible.slice(count, 2 * count) };
  } catch (error) {
    await sim.close();
    throw error;
  }
}

async function benchStore(target: Target, dir: string): Promise<{ figures: string; verdicts: Verdict[] }> {
  const { sim, first, second } = await startFleet();
  try {
    return await benchRuns(sim, first, second, target, dir);
  } finally {
    await sim.close();
  }
}

async function benchRuns(
  sim: SimulatorProcess,
  systemIds: string[],
  otherSystemIds: string[],
  target: Target,
  dir: string,
): Promise<{ figures: string; verdicts: Verdict[] }> {
  const job = {
    playbook: playbookFile,
    inputs: {
      catalogVersion: '2.4.0',
      systemIds,
      maxParallelSystems: CONCURRENCY,
      clusterByCluster: true,
      maxResumes: 0,
    },
    connection: { authUrl: sim.authUrl, baseUrl: sim.baseUrl, regionalUrl: sim.regionalUrl, clients: sim.clients },
    store: target.store,
    outputsDir: join(dir, 'outputs'),
    wait: { minPollMs: MIN_POLL_MS },
    rateLimits: { defaultPerMinute: UNLIMITED, perMinute: { privateCloud: UNLIMITED, dataServices: UNLIMITED } },
  };

  // 1. The whole run, its journal measured at each checkpoint.
  const runId = randomUUID();
  progress(`${target.name}: the run of ${count} systems (run ${runId})`);
  const run = startChild(dir, { ...job, mode: 'run', runId });
  let finished: ChildResult | undefined;
  run.done.then(
    (result) => (finished = result),
    () => undefined,
  );
  let probe: StoreProbe | undefined;
  const sizes: JournalSize[] = [];
  // What the probe costs (wall time of its queries), so a run that measured itself shows it.
  const probing = { count: 0, ms: 0 };
  while (finished === undefined && sizes.length < CHECKPOINTS.length - 1) {
    await Promise.race([delay(1_000), run.done]);
    try {
      probe ??= target.probe();
      const probeStarted = performance.now();
      const size = await probe.size(runId);
      probing.count += 1;
      probing.ms += performance.now() - probeStarted;
      if (size.items >= CHECKPOINTS[sizes.length]! * count) {
        sizes.push(size);
        progress(`${target.name}: ${size.items} systems finished, ${size.entries} journal entries`);
      }
    } catch {
      // The store or the run's first rows are not there yet.
    }
  }
  progress(`${target.name}: ${probing.count} probes of the journal while it ran took ${ms(probing.ms)}`);
  const result = await run.done;
  probe ??= target.probe();
  if (result.status !== 'succeeded')
    throw new Error(
      `the run ${result.status}: ${JSON.stringify(result.error)}; its first failed steps: ${(await probe.failures(runId)).join('\n')}`,
    );
  sizes.push(await probe.size(runId));
  const makespanMs = await probe.loopSpanMs(runId);
  const ratio = makespanMs / (BOUND_SIMULATED_MS / TIME_SCALE);
  const rssMB = result.peakRssBytes / 1e6;
  const final = sizes.at(-1)!;

  const runFigures =
    `${target.name}: makespan ${(makespanMs / 1000).toFixed(1)} s against ${(BOUND_SIMULATED_MS / TIME_SCALE / 1000).toFixed(1)} s, ratio ${ratio.toFixed(3)}; ` +
    `peak RSS ${rssMB.toFixed(0)} MB${result.peakRssBeforeViewBytes === undefined ? '' : ` (${(result.peakRssBeforeViewBytes / 1e6).toFixed(0)} MB before the journal view)`}; CPU of the run ${(result.cpuMs / count).toFixed(1)} ms per system; journal ${final.entries} entries, ${(final.bytes / 1e6).toFixed(1)} MB`;
  const runVerdicts: Verdict[] = [
    { label: `${target.name} ratio ${ratio.toFixed(3)} ≤ ${TARGETS.ratio}`, pass: ratio <= TARGETS.ratio },
    { label: `RSS ${rssMB.toFixed(0)} MB < ${TARGETS.rssMB}`, pass: rssMB < TARGETS.rssMB },
  ];
  // Said at once: a later stage's failure must not lose them.
  progress(runFigures);
  if (runOnly) {
    await probe.close();
    // The simulator's request log keeps its last 100,000 requests: a count at that size is a floor.
    const requests = await sim.requests();
    const perSystem = `${requests.length >= 100_000 ? '≥ ' : ''}${(requests.length / count).toFixed(1)}`;
    const figures = `${runFigures}; platform requests per system ${perSystem}`;
    console.log(`  ${figures}`);
    return { figures, verdicts: runVerdicts };
  }

  // 2. `runs show` and `runs show -o json` of the finished run.
  progress(`${target.name}: the run ended (${(result.durationMs / 1000).toFixed(1)} s); runs show`);
  const show = await cli(['runs', 'show', runId], target.env, join(dir, 'show.txt'));
  const json = await cli(['runs', 'show', runId, '-o', 'json'], target.env, join(dir, 'show.json'));
  checkJsonDocument(join(dir, 'show.json'), json.bytes);

  // 3. A second run, SIGKILLed once half its systems finished, then resumed.
  progress(`${target.name}: a second run, to be killed at 50%`);
  const killedId = randomUUID();
  // Other systems: the first run's are on 2.4.0 now.
  const killed = startChild(dir, {
    ...job,
    inputs: { ...job.inputs, systemIds: otherSystemIds },
    mode: 'run',
    runId: killedId,
  });
  let killedEnded = false;
  killed.done.then(
    () => (killedEnded = true),
    () => (killedEnded = true),
  );
  let atKill: JournalSize | undefined;
  while (atKill === undefined) {
    await delay(200);
    if (killedEnded)
      throw new Error(
        `the second run ended before half its systems: ${JSON.stringify(await killed.done)}; ` +
          `its first failed steps: ${(await probe.failures(killedId)).join('\n')}`,
      );
    const size = await probe.size(killedId).catch(() => undefined);
    if (size && size.items >= count / 2) atKill = size;
  }
  process.kill(killed.pid, 'SIGKILL');
  progress(`${target.name}: killed at ${atKill.items} systems; resuming`);
  await killed.done.catch(() => undefined);
  const resumeStarted = performance.now();
  const resumed = await startChild(dir, { ...job, mode: 'resume', runId: killedId, stopAfterReplay: true }).done;
  const resumeProcessMs = performance.now() - resumeStarted;
  await probe.close();
  const replayMs = resumed.replayMs ?? Number.NaN;

  const perItem = sizes.map(
    (size, i) => `${Math.round(size.bytes / Math.max(1, size.items))} B at ${CHECKPOINTS[i]! * 100}%`,
  );
  const figures =
    `${runFigures}, per system ${perItem.join(', ')}; ` +
    `runs show ${(show.ms / 1000).toFixed(2)} s (${(show.bytes / 1e6).toFixed(1)} MB, peak RSS ${show.peakRssMB.toFixed(0)} MB); ` +
    `-o json ${(json.ms / 1000).toFixed(2)} s (${(json.bytes / 1e6).toFixed(1)} MB, peak RSS ${json.peakRssMB.toFixed(0)} MB); ` +
    `killed at ${atKill.items}/${count} systems (${atKill.entries} entries): replay ${(replayMs / 1000).toFixed(2)} s (resume process ${(resumeProcessMs / 1000).toFixed(2)} s)`;
  const verdicts: Verdict[] = [
    ...runVerdicts,
    { label: `show ${(show.ms / 1000).toFixed(2)} s < 2`, pass: show.ms < TARGETS.showMs },
    { label: `replay ${(replayMs / 1000).toFixed(2)} s < 10`, pass: replayMs < TARGETS.replayMs },
  ];
  console.log(`  ${figures}`);
  return { figures, verdicts };
}

const dir = mkdtempSync(join(tmpdir(), 'fleetbook-bench-fleet-'));
const results: Array<{ figures: string; verdicts: Verdict[] }> = [];
const skipped: string[] = [];
try {
  for (const name of stores) {
    if (name === 'sqlite') {
      const home = join(dir, 'home');
      mkdirSync(home, { recursive: true });
      const file = join(home, 'runs.sqlite');
      const target = { name: 'SQLite', store: { file }, env: { FLEETBOOK_HOME: home }, probe: () => sqliteProbe(file) };
      results.push(await benchStore(target, dir));
    } else if (name === 'postgres') {
      const bin = findPostgresBin();
      if (!bin) {
        skipped.push(`PostgreSQL skipped: ${installHint}`);
        continue;
      }
      const cluster = await startPostgresCluster(bin);
      try {
        const url = await createTestDatabase(cluster.adminUrl, 'fleetbook_bench_fleet');
        const env = { FLEETBOOK_STORE: url, FLEETBOOK_HOME: join(dir, 'pg-home') };
        const target = { name: 'PostgreSQL', store: { url }, env, probe: () => postgresProbe(url) };
        results.push(await benchStore(target, dir));
      } finally {
        cluster.stop();
      }
    } else {
      throw new Error(`--store must be sqlite or postgres, got '${name}'`);
    }
  }
} finally {
  if (keep) progress(`kept ${dir} (the SQLite store: ${join(dir, 'home', 'runs.sqlite')})`);
  else rmSync(dir, { recursive: true, force: true });
}
printFigures(
  NAME,
  `${count} systems × ${CLUSTERS} clusters, concurrency ${CONCURRENCY}, time scale ${TIME_SCALE}, polls every ${MIN_POLL_MS} ms. ` +
    [...results.map((result) => result.figures), ...skipped].join(' || '),
  results.flatMap((result) => result.verdicts),
);
