/**
 * The CLI run in the test's own process, its output captured as a user would read it: the
 * exit code `main` resolves to, and standard output and error as text.
 */
import { Writable } from 'node:stream';
import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';
import { registerCapture } from './leak-scan.js';

export interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** A writable stream that keeps what is written to it, as text; scanned for secrets when the test file ends. */
export function captureStream(label = 'captured output'): Writable & { text(): string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  }) as Writable & { text(): string };
  stream.text = () => chunks.join('');
  registerCapture(label, stream.text);
  return stream;
}

/** `env`: the CLI's whole environment (the process's is not passed). `tty`: standard output says it is a terminal. */
export async function runCli(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; tty?: boolean } = {},
): Promise<CliOutcome> {
  const stdout = captureStream(`fleetbook ${args[0] ?? ''} (stdout)`);
  if (options.tty) Object.assign(stdout, { isTTY: true });
  const stderr = captureStream(`fleetbook ${args[0] ?? ''} (stderr)`);
  const io: CliIo = { stdout, stderr, env: options.env ?? {}, version: '0.0.0-test' };
  const code = await main(args, io);
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** The JSON lines of a CLI's output, parsed. */
export function jsonLines(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
