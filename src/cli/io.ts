import { createRequire } from 'node:module';

/** The streams and facts a command writes to; tests pass their own. */
export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  version: string;
  /** Set by a command whose outcome is not success (a failed run: 1). */
  exitCode?: number;
}

export function packageVersion(): string {
  const require = createRequire(import.meta.url);
  return (require('../../package.json') as { version: string }).version;
}

export function processIo(): CliIo {
  // A reader that stops early (`fleetbook actions | head`) is not an error of ours.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, version: packageVersion() };
}
