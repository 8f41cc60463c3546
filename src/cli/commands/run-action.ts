/**
 * What `fleetbook run` does, imported when the command runs (see run.ts): loads and checks
 * the playbook (problems: exit 2, before any request), connects (embedded simulator or
 * FLEETBOOK_*), runs it, and ends with 0 (succeeded), 1 (failed) or 130 (interrupted).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { enqueuePlaybookRun, parseInputText, resolveInputs } from '../../engine/index.js';
import { runPlaybookWithLock } from '../../scheduler/index.js';
import { ExitCode, UsageError } from '../../errors/index.js';
import { createSecretRegistry } from '../../logging/index.js';
import { hasErrors, loadPlaybook, resolvePlaybookRef, type Playbook } from '../../playbook/index.js';
import { isQueueStore, openRunStore, withRunStore } from '../../store/index.js';
import { openConnection, profileStore } from '../connection.js';
import type { CliIo } from '../io.js';
import { playbookLoadOptions } from '../playbook-load-options.js';
import { formatProblems } from '../problems.js';
import { secretInputVariable } from './resume-action.js';
import { createLiveProgress, streamTo, wantsLiveProgress } from '../live-progress.js';
import { createCommandLogger, parseTimeScale, reportResult, runView, withInterruption } from '../run-session.js';
import { runSettingsOf } from '../run-settings.js';

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
  queue?: boolean;
  json?: boolean;
  output?: string;
  logFile?: string;
  logLevel: string;
}

/** What `schedules trigger` adds to a run: the schedule's own inputs and the trigger recorded in the run. */
export interface ScheduledRun {
  inputs: Record<string, unknown>;
  trigger: { kind: 'trigger'; scheduleId: string };
}

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
  trigger?: ScheduledRun['trigger'],
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
  const trigger = scheduled?.trigger;
  // Checked here too so a missing input costs no simulator start or connection.
  resolveInputs(playbook.inputs, inputs, playbook.name);

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

  // Resolved before anything is stored: a bad FLEETBOOK_RETENTION is refused before the run.
  const settings = runSettingsOf(io.env);
  const opened = await openRunStore({ env: io.env, store: profileStore(options.profile) });
  const store = live ? live.observe(opened) : opened;
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
        }),
      );
      live?.close();
      reportResult(io, view, secrets, result, { simulatedSteps: result.simulatedSteps });
    } finally {
      live?.close();
      await connection.close();
    }
  } finally {
    await store.close();
  }
}
