/**
 * What `fleetbook run` does, imported when the command runs (see run.ts): loads and checks
 * the playbook (problems: exit 2, before any request), connects (embedded simulator or
 * FLEETBOOK_*), runs it, and ends with 0 (succeeded), 1 (failed) or 130 (interrupted).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { enqueuePlaybookRun, parseInputText, resolveInputs } from '../../engine/index.js';
import { runPlaybookWithLock, windowRefusal } from '../../scheduler/index.js';
import { ExitCode, UsageError } from '../../errors/index.js';
import { createSecretRegistry } from '../../logging/index.js';
import { hasErrors, loadPlaybook, resolvePlaybookRef, timeRulesOf, type Playbook } from '../../playbook/index.js';
import { isQueueStore, openRunStore, withRunStore } from '../../store/index.js';
import { checkNotifyRules, createNotifications, readNotificationConfig } from '../../notifications/index.js';
import { openConnection, profileStore } from '../connection.js';
import type { CliIo } from '../io.js';
import { playbookLoadOptions } from '../playbook-load-options.js';
import { formatProblems } from '../problems.js';
import { secretInputVariable } from './resume-action.js';
import { createLiveProgress, streamTo, wantsLiveProgress } from '../live-progress.js';
import { createCommandLogger, parseTimeScale, reportResult, runView, withInterruption } from '../run-session.js';
import { runSettingsOf } from '../run-settings.js';
import { keepWorld } from '../saved-world.js';

export interface RunCommandOptions {
  input: string[];
  inputs?: string;
  target?: string;
  profile?: string;
  timeScale?: string;
  world?: string;
  faults?: string;
  seed?: string;
  dryRun?: boolean;
  ignoreWindow?: boolean;
  queue?: boolean;
  json?: boolean;
  output?: string;
  logFile?: string;
  logLevel: string;
}

/** What `schedules trigger` adds to a run: the schedule's own inputs and the trigger recorded in the run. */
export interface ScheduledRun {
  inputs: Record<string, unknown>;
  trigger: { kind: 'trigger'; scheduleId: string; by: string };
}

/** The trigger a run started here records. */
type RunTrigger = { kind: 'manual' | 'trigger'; scheduleId?: string; by?: string; ignoredWindow?: string };

/** `-i name=value` pairs, read with the declared types; `--inputs` file values under them. */
function gatherInputs(playbook: Playbook, options: RunCommandOptions): Record<string, unknown> {
  // No prototype: `-i __proto__=...` or `-i toString=1` are names like any other, checked against the declared inputs.
  const given: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  if (options.inputs) {
    let document: unknown;
    try {
      document = parse(readFileSync(options.inputs, 'utf8'));
    } catch (error) {
      throw new UsageError(`--inputs ${options.inputs}: ${(error as Error).message}`, 'INVALID_INPUTS_FILE');
    }
    if (document === null || typeof document !== 'object' || Array.isArray(document)) {
      throw new UsageError(
        `--inputs ${options.inputs} must hold a mapping of input names to values.`,
        'INVALID_INPUTS_FILE',
      );
    }
    for (const [name, value] of Object.entries(document as Record<string, unknown>)) given[name] = value;
  }
  for (const pair of options.input) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`-i expects name=value, got '${pair}'.`, 'INVALID_OPTION');
    const name = pair.slice(0, at);
    given[name] = parseInputText(
      Object.hasOwn(playbook.inputs, name) ? playbook.inputs[name] : undefined,
      pair.slice(at + 1),
    );
  }
  return given;
}

/**
 * `--queue`: records the run `queued` in the shared store and exits 0; a worker runs it.
 * Secret inputs are never stored, so one given here is refused: the workers read it from
 * their own environment (FLEETBOOK_INPUT_<NAME>), as a resume does.
 */
async function queueRun(
  io: CliIo,
  playbook: Playbook,
  inputs: Record<string, unknown>,
  options: RunCommandOptions,
  json: boolean,
  trigger?: RunTrigger,
): Promise<void> {
  const givenSecrets = Object.entries(playbook.inputs)
    .filter(([name, declared]) => declared.secret && inputs[name] !== undefined)
    .map(([name]) => name);
  if (givenSecrets.length > 0) {
    throw new UsageError(
      `--queue: the secret input${givenSecrets.length === 1 ? '' : 's'} ${givenSecrets.map((name) => `'${name}'`).join(', ')} would have to be stored; give ${givenSecrets.length === 1 ? 'it' : 'them'} to the workers instead (${givenSecrets.map(secretInputVariable).join(', ')}).`,
      'SECRET_INPUT_QUEUED',
    );
  }
  if (options.target)
    throw new UsageError('--queue: a worker chooses the target; leave out --target.', 'INVALID_OPTION');
  await withRunStore({ env: io.env, store: profileStore(options.profile) }, async (store) => {
    if (!isQueueStore(store)) {
      throw new UsageError(
        "--queue needs a shared store: set FLEETBOOK_STORE=postgres://user:password@host:5432/database (or a profile's `store:`).",
        'NO_SHARED_STORE',
      );
    }
    const run = await enqueuePlaybookRun(playbook, {
      store,
      inputs,
      dryRun: options.dryRun === true,
      env: io.env,
      ...(trigger ? { trigger } : {}),
    });
    io.stdout.write(
      json
        ? `${JSON.stringify({ event: 'run.queued', runId: run.id, playbook: run.playbook, status: run.status })}\n`
        : `Queued ${playbook.name} (run ${run.id}); a fleetbook worker will run it\n`,
    );
  });
}

/**
 * Why the playbook may not start now (outside its window, inside a freeze), or undefined. A real
 * run is refused then (exit 2, saying when the window opens) unless `--ignore-window`; a dry run
 * is not refused (it says so).
 */
function windowCheck(playbook: Playbook, options: RunCommandOptions): string | undefined {
  const refusal = windowRefusal(timeRulesOf(playbook), Date.now());
  if (!refusal) return undefined;
  if (!options.ignoreWindow && !options.dryRun)
    throw new UsageError(
      `${playbook.name} may not start now: ${refusal.reason}. Run it then, or now with --ignore-window.`,
      'OUTSIDE_WINDOW',
    );
  return refusal.reason;
}

/**
 * What the run records as its trigger, when not a plain manual run: a schedule triggered by hand,
 * and a window `--ignore-window` overrode (a worker reads it: the run's loop items start whatever the time).
 */
function runTrigger(
  scheduled: ScheduledRun['trigger'] | undefined,
  options: RunCommandOptions,
  windowClosed: string | undefined,
): RunTrigger | undefined {
  const ignoredWindow = options.ignoreWindow && windowClosed && !options.dryRun ? windowClosed : undefined;
  if (!scheduled && !ignoredWindow) return undefined;
  return { ...(scheduled ?? { kind: 'manual' as const }), ...(ignoredWindow ? { ignoredWindow } : {}) };
}

/** `--seed`, an integer. */
function seedOf(options: RunCommandOptions): number | undefined {
  const seed = options.seed === undefined ? undefined : Number(options.seed);
  if (seed !== undefined && !Number.isInteger(seed))
    throw new UsageError(`--seed must be an integer, got '${options.seed}'.`, 'INVALID_OPTION');
  return seed;
}

/** Runs the playbook `reference` names with the options of `fleetbook run`. */
export async function runAction(io: CliIo, reference: string, options: RunCommandOptions): Promise<void> {
  // Bad options are refused before the playbook is read.
  parseTimeScale(options.timeScale);
  seedOf(options);

  const loaded = loadPlaybook(resolvePlaybookRef(reference, process.cwd()), playbookLoadOptions(io.env));
  if (!loaded.playbook || hasErrors(loaded.problems)) {
    io.stderr.write(`${formatProblems(loaded.problems)}\n`);
    io.exitCode = ExitCode.usage;
    return;
  }
  const playbook = loaded.playbook;
  await runLoaded(io, playbook, options);
}

/**
 * Runs a loaded playbook with the options of `fleetbook run`; `scheduled`: a schedule triggered
 * by hand (`schedules trigger`), its inputs under the `-i` ones.
 */
export async function runLoaded(
  io: CliIo,
  playbook: Playbook,
  options: RunCommandOptions,
  scheduled?: ScheduledRun,
): Promise<void> {
  const timeScale = parseTimeScale(options.timeScale);
  const seed = seedOf(options);
  const inputs = { ...scheduled?.inputs, ...gatherInputs(playbook, options) };
  // Checked here too so a missing input costs no simulator start or connection.
  resolveInputs(playbook.inputs, inputs, playbook.name);

  const windowClosed = windowCheck(playbook, options);
  const trigger = runTrigger(scheduled?.trigger, options, windowClosed);
  const view = runView(io, options);
  if (options.queue) return queueRun(io, playbook, inputs, options, view === 'json', trigger);
  const secrets = createSecretRegistry();
  // On a terminal, loops and operations in progress stay in view under the scrolling log lines.
  const live = wantsLiveProgress(io, view === 'text') ? createLiveProgress(io.stdout) : undefined;
  const logger = createCommandLogger(
    io,
    options,
    secrets,
    undefined,
    live ? streamTo((text) => live.write(text)) : undefined,
  );
  const runId = randomUUID();
  if (windowClosed)
    logger.warn(
      {
        event: 'run.outsideWindow',
        reason: windowClosed,
        ...(options.dryRun ? { dryRun: true } : { ignoreWindow: true }),
      },
      options.dryRun
        ? `dry run of ${playbook.name} outside its maintenance window (${windowClosed}); a real run would be refused now`
        : `${playbook.name} starts outside its maintenance window (${windowClosed}): --ignore-window`,
    );

  // Resolved before anything is stored: a bad FLEETBOOK_RETENTION or notification channel is refused before the run.
  const settings = runSettingsOf(io.env);
  const notificationConfig = readNotificationConfig({ cwd: process.cwd(), env: io.env, secrets });
  for (const warning of checkNotifyRules(playbook, notificationConfig))
    logger.warn({ event: 'notification.noChannels', playbook: playbook.name }, warning);
  const opened = await openRunStore({ env: io.env, store: profileStore(options.profile) });
  const store = live ? live.observe(opened) : opened;
  const notifications = createNotifications(notificationConfig, { store, logger: logger.child({ runId }) });
  try {
    // The client's own lines (retries, rate limits) carry the run too.
    const clientLogger = logger.child({ runId, playbook: playbook.name });
    const connection = await openConnection({
      store,
      target: options.target,
      profile: options.profile,
      timeScale,
      simulator: { world: options.world, faults: options.faults, seed },
      env: io.env,
      logger: clientLogger,
      secrets,
    });
    try {
      if (view === 'text')
        io.stdout.write(
          `Running ${playbook.name} (run ${runId}) against ${connection.description}${options.dryRun ? ', dry run' : ''}\n`,
        );
      const result = await withInterruption(logger, (signal) =>
        // A playbook's `lock` keeps a manual run and a scheduled one off the same systems.
        runPlaybookWithLock(playbook, {
          inputs,
          client: connection.client,
          store,
          logger,
          secrets,
          signal,
          dryRun: options.dryRun === true,
          runId,
          ...(trigger ? { trigger } : {}),
          ...settings,
          // A dry run reads what the whole run would do; --ignore-window lets every item start.
          ...(options.ignoreWindow || options.dryRun ? { startGate: null } : {}),
          notify: notifications.hookFor(playbook.notify),
        }),
      );
      live?.close();
      reportResult(io, view, secrets, result, { simulatedSteps: result.simulatedSteps });
      // After the result is out: a channel that is slow or down delays the exit, never changes it.
      await notifications.deliver({ runId, untilSettled: true });
    } finally {
      live?.close();
      // A rehearsal's world outlives its process: approve, deny and resume of the run continue on it.
      keepWorld(io.env, runId, connection, secrets, logger);
      await connection.close();
    }
  } finally {
    await store.close();
  }
}
