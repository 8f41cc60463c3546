/**
 * What `run`, `resume` and `daemon` share: their logging options, the time scale of the
 * embedded simulator, the interruption by SIGINT/SIGTERM, and how a run's result is shown
 * and turned into an exit code.
 */
import { openSync } from 'node:fs';
import { pino, type DestinationStream, type LevelWithSilent } from 'pino';
import { approvalProgress, describeWait, type RunResult } from '../engine/index.js';
import { ExitCode, UsageError } from '../errors/index.js';
import { createLogger, type Logger, type SecretRegistry } from '../logging/index.js';
import { RunStatus, type WaitRecord } from '../store/index.js';
import type { CliIo } from './io.js';
import { LOG_LEVELS } from './log-levels.js';
import { outputFormat, writeMachine, type OutputOptions } from './output.js';
import { createReadableLogStream, formatSummary } from './commands/run-view.js';

export interface LoggingOptions extends OutputOptions {
  logFile?: string;
  logLevel: string;
}

/** `--time-scale` of the embedded simulator; undefined when not given (the simulator's default applies). */
export function parseTimeScale(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const timeScale = Number(text);
  if (!(timeScale > 0))
    throw new UsageError(`--time-scale must be a positive number, got '${text}'.`, 'INVALID_OPTION');
  return timeScale;
}

/**
 * How a run is shown: `text` (and `wide`): readable log lines and a summary; `json`: JSON log
 * lines and the result as one; `yaml`: the result as a YAML document, the log lines readable
 * on standard error. Unasked, JSON lines when standard output is not a terminal (a log
 * collector reads them), the readable view on one; `-o text` gives it anywhere.
 */
export type RunOutputMode = 'text' | 'json' | 'yaml';

export function runOutputMode(io: CliIo, options: LoggingOptions): RunOutputMode {
  const format = outputFormat(options, io.stdout.isTTY === true ? 'text' : 'json');
  return format === 'wide' ? 'text' : format;
}

/** JSON lines on standard output: asked, or the default off a terminal. */
export function wantsJson(io: CliIo, options: LoggingOptions): boolean {
  return runOutputMode(io, options) === 'json';
}

/**
 * The command's logger: JSON lines (or the readable view) on stdout, and with `--log-file`
 * JSON lines appended to that file too; secrets scrubbed from both.
 */
export function createCommandLogger(
  io: CliIo,
  options: LoggingOptions,
  secrets: SecretRegistry,
  readable = !wantsJson(io, options),
  screen?: NodeJS.WritableStream,
  /** Another destination of the JSON lines, at its own level (the server's metrics read the lines of the scheduler and the client). */
  tee?: { stream: NodeJS.WritableStream; level: pino.Level },
): Logger {
  if (!(LOG_LEVELS as readonly string[]).includes(options.logLevel)) {
    throw new UsageError(
      `--log-level must be one of ${LOG_LEVELS.join(', ')}, got '${options.logLevel}'.`,
      'INVALID_OPTION',
    );
  }
  const level = options.logLevel as pino.Level;
  // With `-o yaml` standard output carries the result alone; the log goes to standard error.
  const out = screen ?? (runOutputMode(io, options) === 'yaml' ? io.stderr : io.stdout);
  const streams: pino.StreamEntry[] = [
    { stream: (readable ? createReadableLogStream(out) : out) as DestinationStream, level },
  ];
  if (options.logFile) streams.push({ stream: openLogFile(options.logFile), level });
  let baseLevel = options.logLevel as LevelWithSilent;
  if (tee) {
    streams.push({ stream: tee.stream as DestinationStream, level: tee.level });
    // Lines the tee wants below the command's level are made, and each stream keeps to its own level.
    if (pino.levels.values[tee.level]! < pino.levels.values[level]!) baseLevel = tee.level;
  }
  return createLogger({ level: baseLevel, secrets, destination: pino.multistream(streams) });
}

type LogFile = ReturnType<typeof pino.destination>;

/** `--log-file`s open in this process, written out synchronously when it exits. */
const openLogFiles = new Set<LogFile>();
let flushOnExit = false;

/**
 * A `--log-file`: buffered writes (a hot run logs a lot), flushed synchronously when the process
 * exits, however it exits (`process.exit` on a fatal path, an uncaught exception), so the last
 * lines, the ones saying why, are not lost with the buffer.
 */
function openLogFile(file: string): LogFile {
  if (!flushOnExit) {
    flushOnExit = true;
    process.on('exit', () => {
      for (const destination of openLogFiles) {
        try {
          destination.flushSync();
        } catch {
          // A file that cannot be written now (disk full, not yet open) cannot be helped while exiting.
        }
      }
    });
  }
  // Opened here, synchronously: a destination still opening its file cannot be flushed.
  let fd: number;
  try {
    fd = openSync(file, 'a');
  } catch (error) {
    throw new UsageError(
      `--log-file ${file}: cannot be opened (${(error as NodeJS.ErrnoException).code ?? String(error)}).`,
      'INVALID_OPTION',
    );
  }
  const destination = pino.destination({ dest: fd, sync: false });
  openLogFiles.add(destination);
  destination.on('close', () => openLogFiles.delete(destination));
  return destination;
}

/**
 * Runs `work` with a signal that SIGINT/SIGTERM abort: no new step starts and waits are
 * abandoned, so the run ends interrupted and resumable.
 */
export async function withInterruption<T>(logger: Logger, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const stop = (signal: NodeJS.Signals): void => {
    logger.warn({ signal }, `${signal}: no new step starts; waits are abandoned (the run stays resumable)`);
    controller.abort(new Error(`interrupted by ${signal}`));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  try {
    return await work(controller.signal);
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

/** Prints the result (one JSON line, or the summary) and sets the exit code: 0, 1 or 130. */
/** The lines a waiting run's process ends with: what it waits for, and the commands that end the wait. */
export function howToEndWait(runId: string, wait: WaitRecord, requester?: string): string {
  const lines = [
    `fleetbook: run ${runId} is waiting for ${describeWait(wait)}; this process exits, nothing is kept running.`,
  ];
  if (wait.reason === 'approval') {
    if (wait.approvers) lines.push(`  approvers: ${wait.approvers.join(', ')}`);
    lines.push(`  approvals: ${approvalProgress(wait, requester)}`);
    if (wait.timeoutAt) lines.push(`  times out at ${wait.timeoutAt} (then: ${wait.onTimeout ?? 'fail'})`);
    const form = Object.keys(wait.inputs ?? {});
    const inputs = form.map((name) => ` -i ${name}=<value>`).join('');
    lines.push(`  approve: fleetbook approve ${runId}${inputs} --comment "<why>"`);
    lines.push(`  deny:    fleetbook deny ${runId} --comment "<why>"`);
  } else if (wait.until) {
    lines.push(`  it continues at ${wait.until}`);
    lines.push(`  resume:  fleetbook resume ${runId} (from ${wait.until})`);
  }
  lines.push(`  cancel:  fleetbook runs cancel ${runId}`);
  return `${lines.join('\n')}\n`;
}

export function reportResult(
  io: CliIo,
  view: RunOutputMode,
  secrets: SecretRegistry,
  result: RunResult,
  extra: Record<string, unknown> = {},
): void {
  if (view !== 'text') {
    const { runId, status, outputs, error, steps, wait } = result;
    writeMachine(io, view, secrets.scrubValue({ result: { runId, status, outputs, error, wait, ...extra, steps } }));
  } else {
    io.stdout.write(secrets.scrub(formatSummary(result)));
  }
  // What to do next, for a person, on stderr whatever the view: stdout stays the result.
  if (result.status === RunStatus.waiting && result.wait)
    io.stderr.write(secrets.scrub(howToEndWait(result.runId, result.wait)));
  io.exitCode =
    result.status === RunStatus.succeeded
      ? ExitCode.success
      : result.status === RunStatus.interrupted
        ? ExitCode.interrupted
        : result.status === RunStatus.waiting
          ? ExitCode.waiting
          : ExitCode.runFailed;
}
