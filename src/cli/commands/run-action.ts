/**
 * What `fleetbook run` does, imported when the command runs (see run.ts): loads and checks
 * the playbook (problems: exit 2, before any request), connects (embedded simulator or
 * FLEETBOOK_*), runs it, and ends with 0 (succeeded), 1 (failed) or 130 (interrupted).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import {
  admit,
  deliverNotifications,
  Door,
  driveAdmitted,
  queueAdmitted,
  type Admission,
  type RunRequest,
} from '../../admission/index.js';
import { parseInputText } from '../../engine/index.js';
import { ExitCode, UsageError } from '../../errors/index.js';
import type { Logger } from '../../logging/index.js';
import type { RunStore } from '../../store/index.js';
import { hasErrors, loadPlaybook, resolvePlaybookRef, type Playbook, type ScheduleSpec } from '../../playbook/index.js';
import type { CliIo } from '../io.js';
import { playbookLoadOptions } from '../playbook-load-options.js';
import { formatProblems } from '../problems.js';
import { localCaller, withProcessHost, type ProcessHost } from '../process-host.js';
import { createLiveProgress, streamTo, wantsLiveProgress } from '../live-progress.js';
import { parseTimeScale, reportResult, runOutputMode, withInterruption } from '../run-session.js';
import { planGuardFor, reportPlan } from './plan-action.js';
import type { PlanDocument } from './plan-view.js';
import type { PlanGuard } from '../../steps/index.js';

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
  /** `fleetbook plan`: a dry run whose writes are planned, reported as a plan (and written to `out`). */
  plan?: { out?: string };
  /** `fleetbook apply`: the plan whose inputs the run takes and whose writes guard the run's. */
  apply?: PlanDocument;
  /** `--ignore-window [reason]`: true without a reason. */
  ignoreWindow?: boolean | string;
  queue?: boolean;
  json?: boolean;
  output?: string;
  logFile?: string;
  logLevel: string;
  /** A store opened already (`fleetbook rerun` read the run from it): the run's host uses and closes it. */
  store?: RunStore;
}

/** What `schedules trigger` adds to a run: the schedule run now by hand (its inputs under the `-i` ones). */
export interface ScheduledRun {
  schedule: ScheduleSpec;
}

/** What `fleetbook rerun` asks instead of the options' request: made once the store is open. */
export interface RerunOfRun {
  request(host: ProcessHost): Promise<Omit<RunRequest, 'target'>>;
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

/** The request `fleetbook run` (or `schedules trigger`) makes of its options. */
function runRequestOf(playbook: Playbook, options: RunCommandOptions, scheduled?: ScheduledRun): RunRequest {
  if (options.queue && options.target)
    throw new UsageError('--queue: a worker chooses the target; leave out --target.', 'INVALID_OPTION');
  const ignoreWindow = options.ignoreWindow;
  return {
    playbook,
    inputs: { ...scheduled?.schedule.inputs, ...options.apply?.inputs, ...gatherInputs(playbook, options) },
    trigger: scheduled ? { kind: 'trigger', schedule: scheduled.schedule } : { kind: 'manual' },
    target: options.queue ? 'queue' : 'here',
    dryRun: options.dryRun === true,
    ...(options.plan ? { planWrites: true } : {}),
    ...(ignoreWindow === undefined || ignoreWindow === false
      ? {}
      : { ignoreWindow: { reason: ignoreWindow === true ? 'given --ignore-window' : ignoreWindow } }),
  };
}

/** The lines that say an admitted run starts though its window is closed (a dry run, an ignored window). */
function warnWindowClosed(logger: Logger, admission: Admission): void {
  const closed = admission.windowClosed;
  if (!closed) return;
  const { playbook, dryRun } = admission.request;
  logger.warn(
    { event: 'run.outsideWindow', reason: closed.reason, ...(dryRun ? { dryRun: true } : { ignoreWindow: true }) },
    dryRun
      ? `dry run of ${playbook.name} outside its maintenance window (${closed.reason}); a real run would be refused now`
      : `${playbook.name} starts outside its maintenance window (${closed.reason}): --ignore-window`,
  );
}

/** What admission said of a schedule's previous run (`schedules trigger`); true when no run starts now. */
function reportOverlap(io: CliIo, admission: Admission): boolean {
  const overlap = admission.overlap;
  const key = admission.trigger.scheduleId;
  if (overlap && 'queuedBehind' in overlap) {
    io.stdout.write(
      `schedule ${key}: run ${overlap.queuedBehind} still runs and its overlap policy is queue; the fire is queued behind it for the daemon\n`,
    );
    return true;
  }
  if (overlap)
    io.stderr.write(
      `fleetbook: schedule ${key}: its previous run ${overlap.cancelled} was cancelled (overlap: cancel-running)\n`,
    );
  return false;
}

/** `--queue`: the admitted run recorded `queued` in the shared store; a worker runs it. */
async function queueRun(io: CliIo, admission: Admission, host: ProcessHost, json: boolean): Promise<void> {
  const run = await queueAdmitted(admission, host.parts);
  const { playbook } = admission.request;
  io.stdout.write(
    json
      ? `${JSON.stringify({ event: 'run.queued', runId: run.id, playbook: run.playbook, status: run.status })}\n`
      : `Queued ${playbook.name} (run ${run.id}); a fleetbook worker will run it\n`,
  );
}

/**
 * Runs a loaded playbook with the options of `fleetbook run`; `scheduled`: a schedule triggered
 * by hand (`schedules trigger`). The request is admitted (`admit`: windows and freezes, inputs,
 * secret inputs, the schedule's overlap) before anything is sent.
 */
export async function runLoaded(
  io: CliIo,
  playbook: Playbook,
  options: RunCommandOptions,
  scheduled?: ScheduledRun,
  rerun?: RerunOfRun,
): Promise<void> {
  const timeScale = parseTimeScale(options.timeScale);
  const seed = seedOf(options);
  // Made first in every case: bad options are refused before the store is opened.
  const asked = runRequestOf(playbook, options, scheduled);
  const { target } = asked;
  // `fleetbook apply`: the guard is made once connected (it reads through the connection's client).
  let applyGuard: PlanGuard | undefined;
  const guarded = options.apply ? { planGuard: (write: Parameters<PlanGuard>[0]) => applyGuard!(write) } : {};
  const view = runOutputMode(io, options);
  const door = rerun ? Door.cliRerun : scheduled ? Door.cliTrigger : options.queue ? Door.cliQueue : Door.cliRun;
  // On a terminal, loops and operations in progress stay in view under the scrolling log lines.
  const live = target === 'here' && wantsLiveProgress(io, view === 'text') ? createLiveProgress(io.stdout) : undefined;
  const runId = randomUUID();
  await withProcessHost(
    io,
    {
      ...options,
      ...(live
        ? { screen: streamTo((text) => live.write(text)), instrument: (opened) => ({ store: live.observe(opened) }) }
        : {}),
      runId,
    },
    async (host) => {
      const request: RunRequest = rerun ? { ...(await rerun.request(host)), target } : { ...asked, ...guarded };
      const admission = await admit(request, localCaller(door), { store: host.parts.store, now: Date.now });
      warnWindowClosed(host.parts.logger, admission);
      if (reportOverlap(io, admission)) return;
      if (request.target === 'queue') return queueRun(io, admission, host, view === 'json');
      host.warnNotifyRules(playbook);
      // The client's own lines (retries, rate limits) carry the run too.
      const connection = await host.connect({
        timeScale,
        simulator: { world: options.world, faults: options.faults, seed },
        logger: host.parts.logger.child({ runId, playbook: playbook.name }),
        keepWorldOf: runId,
      });
      const applied = options.apply;
      if (applied) applyGuard = planGuardFor(applied, connection);
      if (view === 'text' && !options.plan)
        io.stdout.write(
          `Running ${playbook.name} (run ${runId}) against ${connection.description}${request.dryRun ? ', dry run' : ''}\n`,
        );
      const result = await withInterruption(host.parts.logger, (signal) =>
        driveAdmitted(admission, host.runParts(connection), { runId, signal }),
      );
      live?.close();
      if (options.plan) return reportPlan(io, { host, admission, result, target: connection.description }, options);
      reportResult(io, view, host.parts.secrets, result, { simulatedSteps: result.simulatedSteps });
      // After the result is out: a channel that is slow or down delays the exit, never changes it.
      await deliverNotifications(host.parts, runId, true);
    },
  ).finally(() => live?.close());
}
