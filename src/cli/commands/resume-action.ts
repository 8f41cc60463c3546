/** What `fleetbook resume` does (see resume.ts), imported when the command runs. */
import { createInterface } from 'node:readline/promises';
import { Writable } from 'node:stream';
import { deliverNotifications, resumeStored, secretInputVariable } from '../../admission/index.js';
import { platformStateInFlight } from '../../engine/index.js';
import { ExitCode, UsageError } from '../../errors/index.js';
import { hasErrors, loadPlaybook } from '../../playbook/index.js';
import { RunStatus, type JournalEntry, type RunRecord } from '../../store/index.js';
import type { CliIo } from '../io.js';
import { playbookLoadOptions } from '../playbook-load-options.js';
import { findRun } from '../find-run.js';
import { formatProblems } from '../problems.js';
import { withProcessHost } from '../process-host.js';
import { connectionForResume, takeSavedWorld } from '../saved-world.js';
import { parseTimeScale, reportResult, runOutputMode, withInterruption } from '../run-session.js';

export interface ResumeCommandOptions {
  force?: boolean;
  confirmUnknown?: boolean;
  target?: string;
  profile?: string;
  timeScale?: string;
  json?: boolean;
  output?: string;
  logFile?: string;
  logLevel: string;
}

/** Asks for a secret on the terminal without echoing what is typed to `output`. */
export async function askHidden(
  question: string,
  output: Pick<NodeJS.WritableStream, 'write'>,
  input: NodeJS.ReadableStream = process.stdin,
): Promise<string> {
  output.write(question);
  // readline echoes each key to its output: this one swallows the echo.
  const silent = new Writable({ write: (_chunk, _encoding, done) => done() });
  const prompt = createInterface({ input, output: silent, terminal: true });
  try {
    return await prompt.question('');
  } finally {
    prompt.close();
    output.write('\n');
  }
}

/**
 * Secret inputs are never stored: each is read from the environment, else asked for on a
 * terminal. Only one that took its default when the run started may take it again.
 */
async function gatherSecretInputs(run: RunRecord, io: CliIo): Promise<Record<string, unknown>> {
  const values: Record<string, unknown> = {};
  for (const name of run.secretInputNames) {
    const variable = secretInputVariable(name);
    const fromEnv = io.env[variable];
    if (fromEnv !== undefined) {
      values[name] = fromEnv;
    } else if (run.defaultedSecretInputs.includes(name)) {
      continue;
    } else if (process.stdin.isTTY && io.stdout.isTTY) {
      values[name] = await askHidden(`secret input '${name}' (not stored, not shown): `, io.stdout);
    } else {
      throw new UsageError(
        `run ${run.id} was started with the secret input '${name}' given, and secrets are never stored: set ${variable} to resume (or resume on a terminal to be asked).`,
        'SECRET_INPUT_MISSING',
      );
    }
  }
  return values;
}

/**
 * An embedded simulator lives as long as the process that started it: a run it served that had
 * an async operation in flight (or a write of unknown outcome) cannot be continued against a
 * new one, which knows nothing of it. Refused before anything is sent, so the run's failure
 * handling (a rescue, a webhook) is not set off by a platform that simply forgot.
 */
export function refuseLostSimulatorState(runId: string, journal: readonly JournalEntry[]): void {
  const inFlight = platformStateInFlight(journal);
  if (inFlight.length === 0) return;
  const named = inFlight
    .map((entry) => `${entry.path} (${entry.operationId}${entry.location === undefined ? '' : `, ${entry.location}`})`)
    .join('; ');
  throw new UsageError(
    `run ${runId} cannot be resumed against a new embedded simulator: it had platform work in flight (${named}) on the simulator that ran it, which ended with its process. ` +
      "Nothing was sent. Start it again with 'fleetbook run', or rehearse crash and resume against 'fleetbook simulate' (a simulator whose state outlives the run, reached through the FLEETBOOK_* variables).",
    'SIMULATOR_STATE_LOST',
    { inFlight },
  );
}

/** Resumes the run `named` (its id or a prefix naming one run) with the options of `fleetbook resume`. */
export async function resumeAction(io: CliIo, named: string, options: ResumeCommandOptions): Promise<void> {
  const timeScale = parseTimeScale(options.timeScale);
  await withProcessHost(io, options, async (host) => {
    const { store, logger, secrets } = host.parts;
    const run = await findRun(store, named, io.env);
    const runId = run.id;
    // What the process that ended the run recorded and could not send (it was killed mid-send): sent first, once.
    await deliverNotifications(host.parts, runId, true);
    if (run.status === RunStatus.succeeded) {
      // Killed between the run's end and its exit: the resume an operator (or a script) tries is not an error.
      io.stderr.write(`fleetbook: run ${runId} already succeeded; there is nothing to resume\n`);
      return;
    }
    const loaded = loadPlaybook(run.playbookSource, playbookLoadOptions(io.env));
    if (!loaded.playbook || hasErrors(loaded.problems)) {
      io.stderr.write(`${formatProblems(loaded.problems)}\n`);
      io.exitCode = ExitCode.usage;
      return;
    }
    const playbook = loaded.playbook;
    // A run rehearsed on the embedded simulator continues on its saved world, which knows what is in flight.
    const target = connectionForResume(io.env, runId, options.target);
    if (target.target === 'simulator' && !target.restore) refuseLostSimulatorState(runId, await store.journal(runId));
    const secretInputs = await gatherSecretInputs(run, io);
    host.warnNotifyRules(playbook);
    const view = runOutputMode(io, options);
    const connection = await host.connect({
      target: target.target,
      timeScale,
      simulator: { restore: target.restore },
      logger: logger.child({ runId, playbook: playbook.name }),
      keepWorldOf: runId,
    });
    if (target.restore) takeSavedWorld(io.env, runId);
    if (view === 'text')
      io.stdout.write(`Resuming ${playbook.name} (run ${runId}) against ${connection.description}\n`);
    const result = await withInterruption(logger, (signal) =>
      // The playbook's `lock`, as `fleetbook run` takes it: a resume must not drive systems another run holds.
      resumeStored(playbook, run, host.runParts(connection), {
        runId,
        secretInputs,
        signal,
        force: options.force === true,
        confirmUnknown: options.confirmUnknown === true,
      }),
    );
    reportResult(io, view, secrets, result);
    await deliverNotifications(host.parts, runId, true);
  });
}
