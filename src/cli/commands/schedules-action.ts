/** What `fleetbook schedules` and `fleetbook schedules resume` do (see schedules.ts), imported when the command runs. */
import { didYouMean, ExitCode, UsageError } from '../../errors/index.js';
import {
  hasErrors,
  loadPlaybook,
  resolvePlaybookRef,
  timeRulesOf,
  type Playbook,
  type Problem,
} from '../../playbook/index.js';
import {
  createFireTimes,
  loadPlaybookFolder,
  offsetAt,
  readScheduleState,
  runnableFires,
  SchedulerError,
  wallTimeAt,
  writeScheduleState,
  type ScheduleState,
} from '../../scheduler/index.js';
import { hasLiveDriver, RunStatus, withRunStore, resolveFleetbookHome, type RunStore } from '../../store/index.js';
import type { CliIo } from '../io.js';
import { playbookLoadOptions } from '../playbook-load-options.js';
import { isMachineFormat, outputFormat, writeMachine, type OutputOptions } from '../output.js';
import { formatProblems, shownPath } from '../problems.js';

/** A fire time as `2025-03-30 06:00:00 +02:00`, the wall clock of `timezone`. */
function localTime(ms: number, timezone: string): string {
  const offsetMinutes = Math.round(offsetAt(ms, timezone) / 60_000);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const hours = String(Math.floor(Math.abs(offsetMinutes) / 60)).padStart(2, '0');
  const minutes = String(Math.abs(offsetMinutes) % 60).padStart(2, '0');
  return `${new Date(wallTimeAt(ms, timezone)).toISOString().slice(0, 19).replace('T', ' ')} ${sign}${hours}:${minutes}`;
}

const utcTime = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')}Z`;

interface ScheduleView {
  key: string;
  playbook: string;
  file: string;
  line: number;
  cron: string;
  timezone: string;
  enabled: boolean;
  overlap: string;
  catchUp: string;
  /** The next fires that will run: those outside a window or inside a freeze left out. */
  next: Array<{ local: string; utc: string }>;
  /** The windows and freezes that apply, in words (empty when none does). */
  limits: string[];
  state?: ScheduleState;
}

/** The playbook's and the schedule's windows and freezes, one line each. */
function limitsOf(playbook: Playbook, schedule: Playbook['schedules'][number]): string[] {
  const rules = timeRulesOf(playbook, schedule);
  return [
    ...rules.windows.map(
      (window) =>
        `window ${window.weekly.map((range) => `${range.days.join(',')} ${range.from}-${range.to}`).join('; ')} ${window.timezone} (onClose ${window.onClose})`,
    ),
    ...rules.freezes.map(
      (freeze) => `freeze ${freeze.from}..${freeze.to} ${freeze.timezone}${freeze.reason ? ` (${freeze.reason})` : ''}`,
    ),
  ];
}

/**
 * The state with the last run's result from its run record: the record is what a later
 * `fleetbook resume` (or a crash) changes, the schedule's state only what its daemon saw. A run
 * the store says is running, with no live process driving it, crashed: shown `interrupted`.
 */
async function withRunResult(store: RunStore, state: ScheduleState | undefined): Promise<ScheduleState | undefined> {
  if (state?.lastRunId === undefined) return state;
  const run = await store.getRun(state.lastRunId);
  // No record yet: the fire waits for the playbook lock, or its daemon stopped before the run began.
  if (!run) return state;
  const lastResult =
    run.status === RunStatus.running && !(await hasLiveDriver(store, run.id)) ? RunStatus.interrupted : run.status;
  return { ...state, lastResult };
}

async function viewsOf(
  playbooks: readonly Playbook[],
  store: RunStore,
  count: number,
  nowMs: number,
): Promise<ScheduleView[]> {
  const views: ScheduleView[] = [];
  for (const playbook of playbooks) {
    for (const schedule of playbook.schedules) {
      const fireTimes = createFireTimes(schedule.cron, schedule.timezone);
      const state = await withRunResult(store, await readScheduleState(store, schedule.key));
      views.push({
        key: schedule.key,
        playbook: playbook.name,
        file: shownPath(schedule.location.file),
        line: schedule.location.line,
        cron: schedule.cron,
        timezone: schedule.timezone,
        enabled: schedule.enabled,
        overlap: schedule.overlap,
        catchUp: schedule.catchUp,
        limits: limitsOf(playbook, schedule),
        next: schedule.enabled
          ? runnableFires(fireTimes, timeRulesOf(playbook, schedule), nowMs, count).map((at) => ({
              local: localTime(at, schedule.timezone),
              utc: new Date(at).toISOString(),
            }))
          : [],
        ...(state ? { state } : {}),
      });
    }
  }
  return views;
}

function describeState(state: ScheduleState | undefined): string[] {
  if (!state) return ['  last   never fired (no daemon has run it with this store)'];
  const lines: string[] = [];
  if (state.lastRunId) {
    lines.push(
      `  last   run ${state.lastRunId} started ${state.lastRunStartedAt ? utcTime(Date.parse(state.lastRunStartedAt)) : '?'}: ${state.lastResult ?? 'unknown'}`,
    );
  } else {
    lines.push('  last   no run yet');
  }
  if (state.lastSkip)
    lines.push(`  skip   fire of ${utcTime(Date.parse(state.lastSkip.scheduledAt))}: ${state.lastSkip.reason}`);
  if (state.queued.length > 0) lines.push(`  queue  ${state.queued.length} fire(s) waiting`);
  if (state.paused)
    lines.push(
      `  PAUSED after ${state.consecutiveFailures} failed runs in a row; fleetbook schedules resume <key>, or change the playbook`,
    );
  else if (state.consecutiveFailures > 0) lines.push(`  fails  ${state.consecutiveFailures} failed run(s) in a row`);
  return lines;
}

function printViews(io: CliIo, views: readonly ScheduleView[]): void {
  if (views.length === 0) {
    io.stdout.write('No schedules.\n');
    return;
  }
  const blocks = views.map((view) => {
    const head = `${view.key}  ${view.cron}  ${view.timezone}  (${view.playbook}, ${view.file}:${view.line})${view.enabled ? '' : '  DISABLED'}`;
    const next = view.next.map(
      (fire, index) =>
        `  ${index === 0 ? 'next' : '    '}   ${fire.local} ${view.timezone}  =  ${utcTime(Date.parse(fire.utc))}`,
    );
    const policy = `  policy overlap ${view.overlap}, catchUp ${view.catchUp}`;
    const limits = view.limits.map((limit) => `  ${limit}`);
    return [
      head,
      ...(next.length === 0 && view.enabled && view.limits.length > 0
        ? ['  next   none within 400 days falls inside its window and outside its freezes']
        : next),
      policy,
      ...limits,
      ...describeState(view.state).map((line) =>
        view.state?.paused && line.startsWith('  PAUSED') ? line.replace('<key>', view.key) : line,
      ),
    ].join('\n');
  });
  io.stdout.write(`${blocks.join('\n\n')}\n`);
}

/** The playbooks named, or those of the folder; problems printed and exit 2 when any has an error. */
function loadAll(io: CliIo, files: string[], folder: string): { playbooks: Playbook[]; problems: Problem[] } {
  const loadOptions = playbookLoadOptions(io.env);
  if (files.length === 0) return loadPlaybookFolder(folder, loadOptions);
  const loaded = files.map((file) => loadPlaybook(resolvePlaybookRef(file, process.cwd()), loadOptions));
  return {
    playbooks: loaded.flatMap((result) => (result.playbook ? [result.playbook] : [])),
    problems: loaded.flatMap((result) => result.problems),
  };
}

/** Each schedule of `files` (or of the folder): next fire times, last run and result. */
export async function listSchedulesAction(
  io: CliIo,
  files: string[],
  options: { playbooks: string; count: string } & OutputOptions,
): Promise<void> {
  const format = outputFormat(options);
  const count = Number(options.count);
  if (!Number.isInteger(count) || count <= 0)
    throw new UsageError(`--count must be a positive integer, got '${options.count}'.`, 'INVALID_OPTION');
  const { playbooks, problems } = loadAll(io, files, options.playbooks);
  if (hasErrors(problems)) {
    io.stderr.write(`${formatProblems(problems)}\n`);
    io.exitCode = ExitCode.usage;
    return;
  }
  const views = await withRunStore({ env: io.env }, (store) => viewsOf(playbooks, store, count, Date.now()));
  if (isMachineFormat(format)) {
    for (const view of views) writeMachine(io, format, view);
    return;
  }
  printViews(io, views);
}

/** Resumes the schedule `key` paused after failed runs. */
export async function resumeScheduleAction(
  io: CliIo,
  key: string,
  options: { playbooks: string } & OutputOptions,
): Promise<void> {
  const format = outputFormat(options);
  const message = await withRunStore({ env: io.env }, async (store) => {
    const state = await readScheduleState(store, key);
    if (!state) {
      const known = loadPlaybookFolder(options.playbooks, playbookLoadOptions(io.env)).playbooks.flatMap((playbook) =>
        playbook.schedules.map((schedule) => schedule.key),
      );
      throw new SchedulerError(
        `No schedule '${key}' has fired with the store in ${resolveFleetbookHome({ env: io.env })}.${didYouMean(key, known)}`,
        'UNKNOWN_SCHEDULE',
      );
    }
    if (!state.paused) return { key, resumed: false, message: `Schedule ${key} is not paused.` };
    // Only these fields are written: a daemon writing the schedule's other fields meanwhile keeps its writes.
    Object.assign(state, { paused: false, consecutiveFailures: 0 });
    delete state.pausedAt;
    delete state.pausedPlaybookHash;
    await writeScheduleState(store, key, state);
    return { key, resumed: true, message: `Schedule ${key} resumed; it fires again at its next fire time.` };
  });
  if (isMachineFormat(format)) writeMachine(io, format, message);
  else io.stdout.write(`${message.message}\n`);
}
