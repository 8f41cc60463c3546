// The crash test: a rolling update across the simulated world, the simulator in a process of
// its own, Fleetbook killed with SIGKILL at 20 seeded points and resumed each time until done.
// Runs the built CLI (`bin/fleetbook.js`, `npm run build`), as `npm test` does.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlatformClient, type PlatformClient } from '../../src/api/index.js';
import type { RequestLogEntry } from '../../src/simulator/index.js';
import { openRunStore, type JournalEntry } from '../../src/store/index.js';
import { fixture } from './harness.js';

const root = join(import.meta.dirname, '..', '..');
const bin = join(root, 'bin', 'fleetbook.js');
const KILLS = 20;
/**
 * Simulated ms per real ms: the rolling update takes about 80 s of real time, long enough for
 * 20 kills (each costs a restart of about 3 s: loading the playbook, connecting) to land in it.
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

/**
 * Runs the CLI; with `killAfterMs`, SIGKILLs it that long after its first line naming the run
 * (the run is live then: loading the playbook and connecting take seconds, and a kill before
 * that point would test nothing).
 */
function fleetbook(args: string[], killAfterMs?: number): Promise<Attempt> {
  const child = spawn(process.execPath, [bin, ...args, '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let runId: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (runId !== undefined) return;
    runId = /"runId":"([0-9a-f-]+)"/.exec(stdout)?.[1];
    if (runId !== undefined && killAfterMs !== undefined) timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
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
    while (kills < KILLS) {
      const killAfterMs = Math.round(100 + random() * 800);
      const attempt = await fleetbook(runId === undefined ? ['run', fixture('rolling-update.yaml')] : ['resume', runId], killAfterMs);
      attempts.push(attempt);
      runId ??= attempt.runId;
      if (attempt.signal === 'SIGKILL') kills += 1;
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
    console.log(JSON.stringify({ crashTest: { durationMs, kills, resumes, posts: posts.length, perSystem: Object.fromEntries(perSystem), refused: Object.fromEntries(refused) } }));
  }, 180_000);
});
