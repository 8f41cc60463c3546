/** What `fleetbook schedules` and `fleetbook schedules resume` do (see schedules.ts), imported when the command runs. */
import { didYouMean, ExitCode, UsageError } from '../../errors/index.js';
import { hasErrors, loadPlaybook, resolvePlaybookRef, type Playbook, type Problem } from '../../playbook/index.js';
import {
  loadPlaybookFolder,
  readScheduleState,
  scheduleOverview,
  SchedulerError,
  writeScheduleState,
  type ScheduleOverview,
  type ScheduleState,
} from '../../scheduler/index.js';
import { withRunStore, resolveFleetbookHome, type RunStore } from '../../store/index.js';
import type { CliIo } from '../io.js';
import { playbookLoadOptions } from '../playbook-load-options.js';
import { isMachineFormat, outputFormat, writeMachine, type OutputOptions } from '../output.js';
import { formatProblems, shownPath } from '../problems.js';

const utcTime = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')}Z`;

/** The scheduler's overview of each schedule, its file shown as the CLI shows paths. */
async function viewsOf(
  playbooks: readonly Playbook[],
  store: RunStore,
  count: number,
  nowMs: number,
): Promise<ScheduleOverview[]> {
  return (await scheduleOverview(playbooks, store, count, nowMs)).map((view) => ({
    ...view,
    file: shownPath(view.file),
  }));
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

function printViews(io: CliIo, views: readonly ScheduleOverview[]): void {
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
