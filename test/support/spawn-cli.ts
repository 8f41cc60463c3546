/**
 * The CLI in a process of its own (the built command: `npm test` builds dist/ first, and a
 * child starts in a fraction of the time tsx takes to compile the sources), for what only a
 * process shows: signals and exit codes. The tests that use it belong to the `built` project
 * (vitest.config.ts). Its standard output is kept; a test waits for a text to
 * appear in it, then signals the process and reads its exit code.
 */
import { spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { join } from 'node:path';

const BUILT_CLI = join(import.meta.dirname, '..', '..', 'bin', 'fleetbook.js');

export interface SpawnedCli {
  child: ChildProcess;
  /** Standard output so far. */
  stdout(): string;
  /** Resolves once standard output holds `text`; rejects if the process exits first. */
  waitFor(text: string): Promise<void>;
  /** Sends `signal` and resolves to the exit code. */
  signal(signal: NodeJS.Signals): Promise<number | null>;
  /** Resolves to the exit code once the process has exited and all its output has been read. */
  exited: Promise<number | null>;
}

/** `env`: added to the process's environment; `cwd`: where it runs (its fleetbook.yaml). */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string): SpawnedCli {
  const child = spawn(process.execPath, [BUILT_CLI, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(cwd === undefined ? {} : { cwd }),
  });
  let stdout = '';
  const watchers = new Set<() => void>();
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const watch of watchers) watch();
  });
  // 'close', not 'exit': 'exit' can come while the last of the output is still in the pipe.
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const waitFor = (text: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const watch = (): void => {
        if (!stdout.includes(text)) return;
        watchers.delete(watch);
        resolve();
      };
      watchers.add(watch);
      watch();
      void exited.then((code) => {
        if (watchers.delete(watch))
          reject(new Error(`the CLI exited (${code}) before printing '${text}'; it printed:\n${stdout}`));
      });
    });
  return {
    child,
    stdout: () => stdout,
    waitFor,
    signal: (signal) => {
      child.kill(signal);
      return exited;
    },
    exited,
  };
}

/** How a `--json` command ended: its exit code, its outputs, and its standard output's JSON lines parsed. */
export interface JsonOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
  lines: Array<Record<string, unknown>>;
}

/**
 * `fleetbook <args> --json` in a process of its own, in `cwd` (its fleetbook.yaml): the child
 * (to signal it) and its outcome once it has exited.
 */
export function spawnCliJson(
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): { child: ChildProcessByStdio<null, Readable, Readable>; done: Promise<JsonOutcome> } {
  const child = spawn(process.execPath, [BUILT_CLI, ...args, '--json'], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<JsonOutcome>((resolve) =>
    child.on('close', (code) => {
      const lines = stdout.split('\n').filter((line) => line.startsWith('{'));
      resolve({ code, stdout, stderr, lines: lines.map((line) => JSON.parse(line) as Record<string, unknown>) });
    }),
  );
  return { child, done };
}
