// The crash test: a rolling update across the simulated world, the simulator in a process of
// its own, Fleetbook killed with SIGKILL at 20 seeded points of its progress (journal entries)
// and resumed each time until done.
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
  if (!existsSync(join(root, 'dist', 'cli', 'main.js'))) throw new Error('the crash test runs the built CLI: run `npm run build` first');
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-crash-'));
  simulator = spawn(process.execPath, [bin, 'simulate', '--port', '0', '--json', '--time-scale', String(TIME_SCALE)], { stdio: ['ignore', 'pipe', 'pipe'] });
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

/** Entries in the journal of the store under `FLEETBOOK_HOME` (0 before the store exists), read-only. */
function journalLength(): number {
  const file = join(dir, 'home', runStoreFileName);
  if (!existsSync(file)) return 0;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    // The store's file exists a moment before its tables do.
    if (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'journal'").get() === undefined) return 0;
    return (db.prepare('SELECT COUNT(*) AS entries FROM journal').get() as { entries: number }).entries;
  } finally {
    db.close();
  }
}

/**
 * Runs the CLI; with `killAfterEntries`, SIGKILLs it once it has added that many entries to the
 * journal. Kill points are chosen by the run's progress, not by time: the simulated clock runs on
 * while a CLI restarts, and a slow restart must not let the run end before the 20th kill.
 */
function fleetbook(args: string[], killAfterEntries?: number): Promise<Attempt> {
  const child = spawn(process.execPath, [bin, ...args, '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let runId: string | undefined;
  let probe: NodeJS.Timeout | undefined;
  if (killAfterEntries !== undefined) {
    const threshold = journalLength() + killAfterEntries;
    probe = setInterval(() => {
      if (journalLength() < threshold) return;
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
    child.on('exit', (code, signal) => {
      clearInterval(probe);
      resolve({ code, signal, stderr, ...(runId === undefined ? {} : { runId }) });
    }),
  );
}

async function requestLog(): Promise<RequestLogEntry[]> {
  const answer = (await (await fetch(`${connection.url}/_sim/requests`)).json()) as { items: RequestLogEntry[] } | RequestLogEntry[];
  return Array.isArray(answer) ? answer : answer.items;
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
      const catalogs = await client.invoke('privateCloud.listSoftwareCatalogs', { filter: `version eq '${CATALOG}'` }, { region });
      const paths = ((catalogs.body as { items: Array<{ systemsWithUpdatePath?: Array<{ id: string; hypervisorClusterIds: string[] }> }> }).items[0]?.systemsWithUpdatePath ?? []);
      for (const path of paths) {
        const system = await client.invoke('privateCloud.getSystem', { id: path.id }, { region });
        if ((system.body as { state: string }).state === 'ONLINE') updatable.set(path.id, { region, clusterIds: path.hypervisorClusterIds });
      }
    }
    expect(updatable.size).toBeGreaterThanOrEqual(3);

    let runId: string | undefined;
    const attempts: Attempt[] = [];
    let kills = 0;
    /** Journal entries when each kill landed: the kills are spread over the run's progress. */
    const killedAt: number[] = [];
    // Kill points by progress: after the killed process has journaled 1 to 12 entries of its
    // own. A resume first journals a burst (up to about 12 entries: the steps in flight started
    // again), so kills land across that burst and in the work right after it, at every stage of
    // the rollout. (Up to 24 entries, the run ended after 18 kills.)
    while (kills < KILLS) {
      const killAfterEntries = 1 + Math.floor(random() * 12);
      const attempt = await fleetbook(runId === undefined ? ['run', fixture('rolling-update.yaml')] : ['resume', runId], killAfterEntries);
      attempts.push(attempt);
      runId ??= attempt.runId;
      if (attempt.signal === 'SIGKILL') {
        kills += 1;
        killedAt.push(journalLength());
      }
      else break;
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
    const complaints = attempts.flatMap((attempt) => attempt.stderr.split('\n').filter((line) => line.startsWith('fleetbook:')));
    expect(complaints.filter((line) => line !== `fleetbook: run ${runId} already succeeded; there is nothing to resume`)).toEqual([]);
    expect(kills).toBe(KILLS);
    // Each kill landed after the killed process had journaled entries of its own.
    expect(new Set(killedAt).size).toBe(KILLS);

    // Every updatable cluster is on the catalog.
    for (const [id, { region, clusterIds }] of updatable) {
      const system = await client.invoke('privateCloud.getSystem', { id }, { region });
      const clusters = (system.body as { softwareInfo: { hypervisorClusters: Array<{ id: string; currentSoftwareVersion: string }> } }).softwareInfo.hypervisorClusters;
      expect(clusters.filter((cluster) => clusterIds.includes(cluster.id)).map((cluster) => [id, cluster.currentSoftwareVersion])).toEqual(clusterIds.map(() => [id, CATALOG]));
    }

    // No prechecks, update or resume POST twice for one system, unless the journal shows the first refused (4xx).
    const journal = await journalOf(runId!);
    const refused = new Map<string, number>();
    const sent = new Map<string, { operationId: string; system: unknown }>();
    for (const { event } of journal) {
      if (event.type === 'request.sending') sent.set(`${event.path}#${event.attempt}`, { operationId: event.operationId, system: event.idempotency?.id });
      if (event.type === 'request.failed' && (event.error.httpStatus ?? 0) >= 400 && (event.error.httpStatus ?? 0) < 500) {
        const request = sent.get(`${event.path}#${event.attempt}`);
        if (request) refused.set(`${request.operationId} ${String(request.system)}`, (refused.get(`${request.operationId} ${String(request.system)}`) ?? 0) + 1);
      }
    }
    const writes = ['privateCloud.runSoftwarePrechecks', 'privateCloud.runSoftwareUpdate', 'privateCloud.resumeSoftwareUpdate'];
    const posts = (await requestLog()).filter((entry) => entry.method === 'POST' && writes.includes(entry.operationId));
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
    console.log(JSON.stringify({ crashTest: { durationMs, kills, killedAt, journalEntries: journal.length, resumes, posts: posts.length, perSystem: Object.fromEntries(perSystem), refused: Object.fromEntries(refused) } }));
  }, 180_000);
});
