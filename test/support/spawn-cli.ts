/**
 * The CLI in a process of its own (from the sources, through tsx), for what only a process
 * shows: signals and exit codes. Its standard output is kept; a test waits for a text to
 * appear in it, then signals the process and reads its exit code.
 */
import { spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { join } from 'node:path';

const RUN_CLI = join(import.meta.dirname, '..', 'cli', 'run-cli.ts');
/** Resolved here: run elsewhere (`cwd`), `--import tsx` would be looked for there. */
const TSX = import.meta.resolve('tsx');

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
  // No tsx cache: it would keep compiled sources (the simulator's client secrets among them) under TMPDIR, which the leak scan reads.
  const child = spawn(process.execPath, ['--import', TSX, RUN_CLI, ...args], {
    env: { ...process.env, ...env, TSX_DISABLE_CACHE: '1' },
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
  const child = spawn(process.execPath, ['--import', TSX, RUN_CLI, ...args, '--json'], {
    cwd,
    env: { ...process.env, ...env, TSX_DISABLE_CACHE: '1' },
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
