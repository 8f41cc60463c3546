/**
 * Team mode as the tests (and benchmarks) run it: the simulator in a process of its own, a
 * database of the throwaway cluster, and `fleetbook` processes of the built CLI
 * (`bin/fleetbook.js`, `npm run build`) sharing both, as workers on several machines would.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { RequestLogEntry } from '../../src/simulator/index.js';
import { createPostgresRunStore } from '../../src/store/postgres/index.js';
import type { JournalEntry, RunRecord } from '../../src/store/types.js';
import { createTestDatabase } from '../support/postgres-cluster.js';

export const root = join(import.meta.dirname, '..', '..');
export const bin = join(root, 'bin', 'fleetbook.js');

export interface FleetbookProcess {
  child: ChildProcessByStdio<null, Readable, Readable>;
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface Team {
  url: string;
  simulatorUrl: string;
  env: NodeJS.ProcessEnv;
  fleetbook(args: string[], extraEnv?: NodeJS.ProcessEnv): FleetbookProcess;
  /** Runs a command to its end. */
  command(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
  run(runId: string): Promise<RunRecord | undefined>;
  journal(runId: string): Promise<JournalEntry[]>;
  requestLog(): Promise<RequestLogEntry[]>;
  close(): Promise<void>;
}

export async function startTeam(
  adminUrl: string,
  options: { timeScale?: number; simulatorArgs?: string[] } = {},
): Promise<Team> {
  if (!existsSync(join(root, 'dist', 'cli', 'main.js')))
    throw new Error('team-mode tests run the built CLI: run `npm run build` first');
  const url = await createTestDatabase(adminUrl, 'fleetbook_team');
  const simulator = spawn(
    process.execPath,
    [
      bin,
      'simulate',
      '--port',
      '0',
      '--json',
      '--time-scale',
      String(options.timeScale ?? 3000),
      ...(options.simulatorArgs ?? []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const connection = await new Promise<{ url: string; authUrl: string; baseUrl: string; regionalUrl: string }>(
    (resolve, reject) => {
      let text = '';
      simulator.stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes('\n'))
          resolve(
            JSON.parse(text.split('\n')[0] ?? '') as {
              url: string;
              authUrl: string;
              baseUrl: string;
              regionalUrl: string;
            },
          );
      });
      simulator.on('exit', (code) => reject(new Error(`the simulator exited with ${code}`)));
    },
  );
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    FLEETBOOK_STORE: url,
    FLEETBOOK_CLIENT_ID: 'sim-admin',
    FLEETBOOK_CLIENT_SECRET: 'sim-admin-secret',
    FLEETBOOK_AUTH_URL: connection.authUrl,
    FLEETBOOK_BASE_URL: connection.baseUrl,
    FLEETBOOK_REGIONAL_URL: connection.regionalUrl,
    FLEETBOOK_REGION: 'us-west',
    // Longer than the writes the tests hold (100 ms), far shorter than the default 5 s, which
    // are hours of simulated time here.
    FLEETBOOK_RECONCILE_SETTLE: '1s',
  };
  const store = await createPostgresRunStore({ url });
  const started: FleetbookProcess[] = [];
  const fleetbook = (args: string[], extraEnv: NodeJS.ProcessEnv = {}): FleetbookProcess => {
    const child = spawn(process.execPath, [bin, ...args], {
      env: { ...env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('close', (code, signal) => resolve({ code, signal })),
    );
    const process_: FleetbookProcess = { child, stdout: () => out, stderr: () => err, exited };
    started.push(process_);
    return process_;
  };
  return {
    url,
    simulatorUrl: connection.url,
    env,
    fleetbook,
    async command(args) {
      const done = fleetbook(args);
      const { code } = await done.exited;
      return { code, stdout: done.stdout(), stderr: done.stderr() };
    },
    run: (runId) => store.getRun(runId),
    journal: (runId) => store.journal(runId),
    async requestLog() {
      const answer = (await (await fetch(`${connection.url}/_sim/requests`)).json()) as
        { items: RequestLogEntry[] } | RequestLogEntry[];
      return Array.isArray(answer) ? answer : answer.items;
    },
    async close() {
      for (const { child, exited } of started) {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGKILL');
          await exited;
        }
      }
      await store.close();
      const exited = new Promise((resolve) => simulator.on('exit', resolve));
      simulator.kill('SIGTERM');
      await exited;
    },
  };
}

/** Resolves once `check` holds (polled every 20 ms), or rejects after `timeoutMs`. */
export async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Writes the simulator logged (POSTs), as `METHOD path` with how many times each was sent. */
export function repeatedWrites(
  log: readonly RequestLogEntry[],
  operationIds: readonly string[],
): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const entry of log) {
    if (entry.method !== 'POST' || !operationIds.includes(entry.operationId ?? '')) continue;
    const key = `POST ${entry.path}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].filter(([, count]) => count > 1);
}
