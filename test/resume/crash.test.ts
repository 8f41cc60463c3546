// The crash test: a rolling update across the simulated world, the simulator in a process of
// its own, Fleetbook killed with SIGKILL at 20 seeded points spread over the whole run's progress
// and resumed each time until done. Some kills wait for a write in flight or a wait in flight,
// and the journal left by each kill proves where it landed.
// Runs the built CLI (`bin/fleetbook.js`, `npm run build`), as `npm test` does.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlatformClient, type PlatformClient } from '../../src/api/index.js';
import type { RequestLogEntry } from '../../src/simulator/index.js';
import { createResumePlan } from '../../src/engine/resume-plan.js';
import { openRunStore, runStoreFileName, type JournalEntry } from '../../src/store/index.js';
import { fixture } from './harness.js';

const root = join(import.meta.dirname, '..', '..');
const bin = join(root, 'bin', 'fleetbook.js');
const KILLS = 20;
/**
 * Simulated ms per real ms: the rolling update takes about a minute of real time. The kills are
 * placed by progress, so a slow restart (the simulated clock runs on meanwhile) cannot end the
 * run before the 20th kill.
 */
const TIME_SCALE = 100;
const SEED = 5;
/** Real ms the simulator holds each write before handling it: a kill aimed at a write in flight lands in it. */
const WRITE_LATENCY_MS = 100;
const WRITES = [
  'privateCloud.runSoftwarePrechecks',
  'privateCloud.runSoftwareUpdate',
  'privateCloud.resumeSoftwareUpdate',
];
const CATALOG = '2.4.0';
const REGIONS = ['us-west', 'eu-west', 'eu-central', 'ap-northeast'];

/** mulberry32: the kill points are the same on every run of the test. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Connection {
  url: string;
  authUrl: string;
  baseUrl: string;
  regionalUrl: string;
}

let dir: string;
let simulator: ChildProcessByStdio<null, Readable, Readable>;
let connection: Connection;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  if (!existsSync(join(root, 'dist', 'cli', 'main.js')))
    throw new Error('the crash test runs the built CLI: run `npm run build` first');
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-crash-'));
  simulator = spawn(process.execPath, [bin, 'simulate', '--port', '0', '--json', '--time-scale', String(TIME_SCALE)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  connection = await new Promise<Connection>((resolve, reject) => {
    let text = '';
    simulator.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('\n')) resolve(JSON.parse(text.split('\n')[0]!) as Connection);
    });
    simulator.on('exit', (code) => reject(new Error(`the simulator exited with ${code}`)));
  });
  env = {
    ...process.env,
    FLEETBOOK_HOME: join(dir, 'home'),
    FLEETBOOK_CLIENT_ID: 'sim-admin',
    FLEETBOOK_CLIENT_SECRET: 'sim-admin-secret',
    FLEETBOOK_AUTH_URL: connection.authUrl,
    FLEETBOOK_BASE_URL: connection.baseUrl,
    FLEETBOOK_REGIONAL_URL: connection.regionalUrl,
    FLEETBOOK_REGION: 'us-west',
    // A simulated minute before a reconciliation read instead of the default 5 s (8 minutes
    // here, in which the rest of the fleet moves on and the kill points' timing with it); still
    // longer than the writes the simulator holds.
    FLEETBOOK_RECONCILE_SETTLE: '600ms',
  };
}, 30_000);

afterAll(async () => {
  if (simulator && simulator.exitCode === null) {
    const exited = new Promise((resolve) => simulator.on('exit', resolve));
    simulator.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

interface Attempt {
  code: number | null;
  signal: NodeJS.Signals | null;
  runId?: string;
  stderr: string;
}

/**
 * What the journal (one run in the store) shows: its entries; its progress, the distinct steps
 * that succeeded (entries of steps started again by a resume do not count); its last event.
 * Read-only; zeros before the store exists.
 */
interface Observed {
  entries: number;
  progress: number;
  last?: { type: string; method?: string; httpStatus?: number };
}

function observe(): Observed {
  const file = join(dir, 'home', runStoreFileName);
  if (!existsSync(file)) return { entries: 0, progress: 0 };
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    // The store's file exists a moment before its tables do.
    if (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'journal'").get() === undefined)
      return { entries: 0, progress: 0 };
    const { entries } = db.prepare('SELECT COUNT(*) AS entries FROM journal').get() as { entries: number };
    const { progress } = db
      .prepare(
        "SELECT COUNT(DISTINCT json_extract(event_json, '$.path')) AS progress FROM journal WHERE json_extract(event_json, '$.type') = 'step.finished' AND json_extract(event_json, '$.status') = 'succeeded'",
      )
      .get() as { progress: number };
    const last = db.prepare('SELECT event_json AS eventJson FROM journal ORDER BY seq DESC LIMIT 1').get() as
      { eventJson: string } | undefined;
    return { entries, progress, ...(last ? { last: JSON.parse(last.eventJson) as Observed['last'] } : {}) };
  } finally {
    db.close();
  }
}

/**
 * Where a kill is aimed: once the run's progress reaches `progress` and the killed process has
 * journaled `ownEntries` of its own; `at: 'write'` then waits for a write just journaled as sent
 * (its answer not yet: the simulator delays the writes by WRITE_LATENCY_MS), `at: 'wait'` for a
 * 202 just journaled (its operation being followed).
 */
interface KillPoint {
  progress: number;
  ownEntries: number;
  at: 'any' | 'write' | 'wait';
}

function aimedAt(point: KillPoint, observed: Observed, startEntries: number): boolean {
  if (observed.progress < point.progress || observed.entries - startEntries < point.ownEntries) return false;
  if (point.at === 'write') return observed.last?.type === 'request.sending' && observed.last.method === 'POST';
  if (point.at === 'wait') return observed.last?.type === 'request.answered' && observed.last.httpStatus === 202;
  return true;
}

/**
 * Runs the CLI; with `kill`, SIGKILLs it at that point. Kill points are chosen by the run's
 * progress, not by time: the simulated clock runs on while a CLI restarts, and a slow restart
 * must not let the run end before the 20th kill.
 */
function fleetbook(args: string[], kill?: KillPoint): Promise<Attempt> {
  const child = spawn(process.execPath, [bin, ...args, '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let runId: string | undefined;
  let probe: NodeJS.Timeout | undefined;
  if (kill !== undefined) {
    const startEntries = observe().entries;
    probe = setInterval(() => {
      if (!aimedAt(kill, observe(), startEntries)) return;
      clearInterval(probe);
      child.kill('SIGKILL');
    }, 5);
  }
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    runId ??= /"runId":"([0-9a-f-]+)"/.exec(stdout)?.[1];
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) =>
    child.on('close', (code, signal) => {
      clearInterval(probe);
      resolve({ code, signal, stderr, ...(runId === undefined ? {} : { runId }) });
    }),
  );
}

async function requestLog(): Promise<RequestLogEntry[]> {
  const answer = (await (await fetch(`${connection.url}/_sim/requests`)).json()) as
    { items: RequestLogEntry[] } | RequestLogEntry[];
  return Array.isArray(answer) ? answer : answer.items;
}

/** How many of the run's writes have an answer journaled. */
function answeredWrites(journal: readonly JournalEntry[]): number {
  const writes = new Set(
    journal.flatMap(({ event }) =>
      event.type === 'request.sending' && WRITES.includes(event.operationId) ? [`${event.path}#${event.attempt}`] : [],
    ),
  );
  return journal.filter(
    ({ event }) => event.type === 'request.answered' && writes.has(`${event.path}#${event.attempt}`),
  ).length;
}

async function journalOf(runId: string): Promise<JournalEntry[]> {
  const store = await openRunStore({ home: join(dir, 'home') });
  try {
    return await store.journal(runId);
  } finally {
    await store.close();
  }
}

describe('crash test: SIGKILL at 20 points of a rolling update, resumed each time', () => {
  it('ends with every updatable cluster on the catalog, and no write sent twice unless the first was refused', async () => {
    const random = seeded(SEED);
    const startedMs = Date.now();
    const client: PlatformClient = createPlatformClient({
      credentials: { clientId: 'sim-operator', clientSecret: 'sim-operator-secret' },
      authUrl: connection.authUrl,
      baseUrl: connection.baseUrl,
      regionalUrl: connection.regionalUrl,
    });
    // What the rollout should update: online systems with an update path, read before it starts.
    const updatable = new Map<string, { region: string; clusterIds: string[] }>();
    for (const region of REGIONS) {
      const catalogs = await client.invoke(
        'privateCloud.listSoftwareCatalogs',
        { filter: `version eq '${CATALOG}'` },
        { region },
      );
      const paths =
        (
          catalogs.body as {
            items: Array<{
              systemsWithUpdatePath?: Array<{ id: string; hypervisorClusters: Array<{ hypervisorClusterId: string }> }>;
            }>;
          }
        ).items[0]?.systemsWithUpdatePath ?? [];
      for (const path of paths) {
        const system = await client.invoke('privateCloud.getSystem', { id: path.id }, { region });
        if ((system.body as { state: string }).state === 'ONLINE')
          updatable.set(path.id, {
            region,
            clusterIds: path.hypervisorClusters.map((cluster) => cluster.hypervisorClusterId),
          });
      }
    }
    expect(updatable.size).toBeGreaterThanOrEqual(3);

    const faults = await fetch(`${connection.url}/_sim/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rules: WRITES.map((route) => ({ route, latencyMs: WRITE_LATENCY_MS })) }),
    });
    expect(faults.status).toBe(200);

    // Progress runs from 0 to the steps that succeed in a run without failures: `regions`, its 4
    // items' 2 reads, `plan`, each system's prechecks and update, `rollout`. Kill points are
    // spread (seeded, sorted) up to 85% of it, so the last kills fall in the rollout's end, not
    // after the run. Each killed process journals 1 to 4 entries of its own first. The 4th and
    // 10th kills wait for a write in flight, the 6th and 14th for a wait in flight.
    const finalProgress = 11 + 2 * updatable.size;
    const points: KillPoint[] = Array.from(
      { length: KILLS },
      () => 1 + Math.floor(random() * (0.85 * finalProgress - 1)),
    )
      .sort((a, b) => a - b)
      .map((progress, index) => ({
        progress,
        ownEntries: 1 + Math.floor(random() * 4),
        at: index === 3 || index === 9 ? 'write' : index === 5 || index === 13 ? 'wait' : 'any',
      }));

    let runId: string | undefined;
    const attempts: Attempt[] = [];
    let kills = 0;
    /** Journal entries and progress when each kill landed, and what it left in flight. */
    const killedAt: number[] = [];
    const killedAtProgress: number[] = [];
    const landed = { writeInFlight: 0, waitInFlight: 0 };
    /** Writes answered when the first kill landed. */
    let answeredAtFirstKill: number | undefined;
    while (kills < KILLS) {
      const attempt = await fleetbook(
        runId === undefined ? ['run', fixture('rolling-update.yaml')] : ['resume', runId],
        points[kills],
      );
      attempts.push(attempt);
      runId ??= attempt.runId;
      if (attempt.signal !== 'SIGKILL') break;
      kills += 1;
      const observed = observe();
      killedAt.push(observed.entries);
      killedAtProgress.push(observed.progress);
      // What the next resume will find in flight, as it reads the journal.
      const journal = await journalOf(runId!);
      answeredAtFirstKill ??= answeredWrites(journal);
      const plan = createResumePlan(journal);
      const unfinished = [...plan.inFlight]
        .filter(([path]) => plan.records.get(path)?.status !== 'succeeded')
        .map(([, request]) => request);
      if (unfinished.some((request) => request.state === 'unknown' && WRITES.includes(request.operationId)))
        landed.writeInFlight += 1;
      if (unfinished.some((request) => request.state !== 'unknown' && request.location !== undefined))
        landed.waitInFlight += 1;
    }
    // Past the kills (or if the run ended first), resumed until it ends.
    let last = attempts.at(-1)!;
    for (let more = 0; last.signal === 'SIGKILL' && more < 3; more += 1) {
      last = await fleetbook(['resume', runId!]);
      attempts.push(last);
    }
    const durationMs = Date.now() - startedMs;

    // One process ended by itself, with 0: the last resume (or, killed after the run's end, a resume saying so).
    expect(attempts.filter((attempt) => attempt.signal === null).map((attempt) => attempt.code)).toEqual([0]);
    const complaints = attempts.flatMap((attempt) =>
      attempt.stderr.split('\n').filter((line) => line.startsWith('fleetbook:')),
    );
    expect(
      complaints.filter((line) => line !== `fleetbook: run ${runId} already succeeded; there is nothing to resume`),
    ).toEqual([]);
    expect(kills, `the run ended before kill ${kills + 1}, aimed at ${JSON.stringify(points[kills])}`).toBe(KILLS);
    // Each kill landed after the killed process had journaled entries of its own.
    expect(new Set(killedAt).size).toBe(KILLS);
    // Spread over the whole run: from before its second write was answered to its last quarter.
    // (The reads before the first write are buffered and committed with its request, so the
    // first progress a kill can see already counts them.) The probe looks every 5 ms, so on a
    // loaded machine a kill can land a step or two past its aim.
    expect(answeredAtFirstKill).toBeLessThanOrEqual(1);
    expect(killedAtProgress.at(-1)).toBeGreaterThanOrEqual(0.7 * finalProgress);
    // And in the places a crash hurts: a write sent with no answer journaled, a wait being followed.
    expect(landed.writeInFlight).toBeGreaterThanOrEqual(1);
    expect(landed.waitInFlight).toBeGreaterThanOrEqual(1);

    // Every updatable cluster is on the catalog.
    for (const [id, { region, clusterIds }] of updatable) {
      const system = await client.invoke('privateCloud.getSystem', { id }, { region });
      const clusters = (
        system.body as {
          softwareInfo: { hypervisorClusters: Array<{ id: string; currentSoftwareCatalog: { version: string } }> };
        }
      ).softwareInfo.hypervisorClusters;
      expect(
        clusters
          .filter((cluster) => clusterIds.includes(cluster.id))
          .map((cluster) => [id, cluster.currentSoftwareCatalog.version]),
      ).toEqual(clusterIds.map(() => [id, CATALOG]));
    }

    // No prechecks, update or resume POST twice for one system, unless the journal shows the first refused (4xx).
    const journal = await journalOf(runId!);
    const refused = new Map<string, number>();
    const sent = new Map<string, { operationId: string; system: unknown }>();
    for (const { event } of journal) {
      if (event.type === 'request.sending')
        sent.set(`${event.path}#${event.attempt}`, { operationId: event.operationId, system: event.idempotency?.id });
      if (
        event.type === 'request.failed' &&
        (event.error.httpStatus ?? 0) >= 400 &&
        (event.error.httpStatus ?? 0) < 500
      ) {
        const request = sent.get(`${event.path}#${event.attempt}`);
        if (request)
          refused.set(
            `${request.operationId} ${String(request.system)}`,
            (refused.get(`${request.operationId} ${String(request.system)}`) ?? 0) + 1,
          );
      }
    }
    const posts = (await requestLog()).filter((entry) => entry.method === 'POST' && WRITES.includes(entry.operationId));
    const perSystem = new Map<string, number>();
    for (const post of posts) {
      const system = /systems\/([^/]+)\//.exec(post.path)?.[1];
      const key = `${post.operationId} ${system}`;
      perSystem.set(key, (perSystem.get(key) ?? 0) + 1);
    }
    const repeated = [...perSystem].filter(([key, count]) => count > 1 + (refused.get(key) ?? 0));
    expect(repeated).toEqual([]);
    for (const id of updatable.keys()) {
      expect(perSystem.get(`privateCloud.runSoftwareUpdate ${id}`)).toBeGreaterThanOrEqual(1);
    }
    const resumes = attempts.length - 1;
    console.log(
      JSON.stringify({
        crashTest: {
          durationMs,
          kills,
          killedAt,
          killedAtProgress,
          finalProgress,
          landed,
          journalEntries: journal.length,
          resumes,
          posts: posts.length,
          perSystem: Object.fromEntries(perSystem),
          refused: Object.fromEntries(refused),
        },
      }),
    );
  }, 180_000);
});
