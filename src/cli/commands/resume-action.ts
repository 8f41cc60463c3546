/** What `fleetbook resume` does (see resume.ts), imported when the command runs. */
import { createInterface } from 'node:readline/promises';
import { Writable } from 'node:stream';
import { platformStateInFlight } from '../../engine/index.js';
import { ExitCode, UsageError } from '../../errors/index.js';
import { createSecretRegistry } from '../../logging/index.js';
import { hasErrors, loadPlaybook } from '../../playbook/index.js';
import { resumeRunWithLock, startGateOfRun } from '../../scheduler/index.js';
import { openRunStore, RunStatus, type JournalEntry, type RunRecord } from '../../store/index.js';
import { checkNotifyRules, createNotifications, readNotificationConfig } from '../../notifications/index.js';
import { openConnection, profileStore } from '../connection.js';
import type { CliIo } from '../io.js';
import { playbookLoadOptions } from '../playbook-load-options.js';
import { findRun } from '../find-run.js';
import { formatProblems } from '../problems.js';
import { createCommandLogger, parseTimeScale, reportResult, runView, withInterruption } from '../run-session.js';
import { runSettingsOf } from '../run-settings.js';
import { connectionForResume, keepWorld, takeSavedWorld } from '../saved-world.js';

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

/** `FLEETBOOK_INPUT_<NAME>`: the input's name upper-cased, other characters as `_`. */
export function secretInputVariable(name: string): string {
  return `FLEETBOOK_INPUT_${name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]/g, '_')
    .toUpperCase()}`;
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

  const store = await openRunStore({ env: io.env, store: profileStore(options.profile) });
  try {
    const run = await findRun(store, named, io.env);
    const runId = run.id;
    const secrets = createSecretRegistry();
    const logger = createCommandLogger(io, options, secrets);
    const notifications = createNotifications(readNotificationConfig({ cwd: process.cwd(), env: io.env, secrets }), {
      store,
      logger: logger.child({ runId }),
    });
    // What the process that ended the run recorded and could not send (it was killed mid-send): sent first, once.
    await notifications.deliver({ runId, untilSettled: true });
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

    for (const warning of checkNotifyRules(playbook, notifications.config))
      logger.warn({ event: 'notification.noChannels', playbook: playbook.name }, warning);
    const view = runView(io, options);
    const connection = await openConnection({
      store,
      target: target.target,
      profile: options.profile,
      timeScale,
      simulator: { restore: target.restore },
      env: io.env,
      logger: logger.child({ runId, playbook: playbook.name }),
      secrets,
    });
    if (target.restore) takeSavedWorld(io.env, runId);
    try {
      if (view === 'text')
        io.stdout.write(`Resuming ${playbook.name} (run ${runId}) against ${connection.description}\n`);
      const result = await withInterruption(logger, (signal) =>
        // The playbook's `lock`, as `fleetbook run` takes it: a resume must not drive systems another run holds.
        resumeRunWithLock(playbook, {
          runId,
          secretInputs,
          force: options.force === true,
          confirmUnknown: options.confirmUnknown === true,
          client: connection.client,
          store,
          logger,
          secrets,
          signal,
          ...runSettingsOf(io.env),
          startGate: startGateOfRun(playbook, run),
          notify: notifications.hookFor(playbook.notify),
        }),
      );
      reportResult(io, view, secrets, result);
      await notifications.deliver({ runId, untilSettled: true });
    } finally {
      keepWorld(io.env, runId, connection, secrets, logger);
      await connection.close();
    }
  } finally {
    await store.close();
  }
}
