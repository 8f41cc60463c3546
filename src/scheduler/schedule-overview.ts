/**
 * What `fleetbook schedules` and the server's schedules page show of each schedule, computed
 * once here: its timing and policies, the windows and freezes that apply, the next fires that
 * will run, the fires before them that its windows or freezes will skip (and why), each time in
 * the schedule's timezone with UTC beside, and its state (the last run, with the result its run
 * record has now, and the last skip).
 */
import { timeRulesOf, type Playbook, type ScheduleSpec } from '../playbook/index.js';
import { hasLiveDriver, RunStatus, type RunStore } from '../store/index.js';
import { offsetAt, wallTimeAt } from '../timers/index.js';
import { createFireTimes } from './fire-times.js';
import { readScheduleState, type ScheduleState } from './schedule-state.js';
import { runnableFires, windowRefusal } from './window-check.js';

/** A fire time: the schedule's wall clock (`2025-03-30 06:00:00 +02:00`) and the instant (ISO UTC). */
export interface FireTime {
  local: string;
  utc: string;
}

export interface ScheduleOverview {
  key: string;
  playbook: string;
  /** Where the schedule is written (the playbook's file as loaded, its line). */
  file: string;
  line: number;
  cron: string;
  timezone: string;
  enabled: boolean;
  overlap: string;
  catchUp: string;
  /** The next fires that will run: those outside a window or inside a freeze left out. */
  next: FireTime[];
  /** The cron's fires before the last of `next` that will be skipped, with why. */
  skipped: Array<FireTime & { reason: string }>;
  /** The windows and freezes that apply, in words (empty when none does). */
  limits: string[];
  state?: ScheduleState;
}

/** `at` as `2025-03-30 06:00:00 +02:00`, the wall clock of `timezone`. */
export function localTime(ms: number, timezone: string): string {
  const offsetMinutes = Math.round(offsetAt(ms, timezone) / 60_000);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const hours = String(Math.floor(Math.abs(offsetMinutes) / 60)).padStart(2, '0');
  const minutes = String(Math.abs(offsetMinutes) % 60).padStart(2, '0');
  return `${new Date(wallTimeAt(ms, timezone)).toISOString().slice(0, 19).replace('T', ' ')} ${sign}${hours}:${minutes}`;
}

const fireTime = (ms: number, timezone: string): FireTime => ({
  local: localTime(ms, timezone),
  utc: new Date(ms).toISOString(),
});

/** The playbook's and the schedule's windows and freezes, one line each. */
function limitsOf(playbook: Playbook, schedule: ScheduleSpec): string[] {
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

/** Skipped fires shown at most (a window of one hour a week skips most of an hourly cron). */
const SKIPPED_SHOWN = 10;

/** The next runnable fires and, before the last of them, the cron's fires that will be skipped. */
function firesOf(playbook: Playbook, schedule: ScheduleSpec, nowMs: number, count: number) {
  if (!schedule.enabled) return { next: [], skipped: [] };
  const rules = timeRulesOf(playbook, schedule);
  const fireTimes = createFireTimes(schedule.cron, schedule.timezone);
  const runnable = runnableFires(fireTimes, rules, nowMs, count);
  const skipped: ScheduleOverview['skipped'] = [];
  const until = runnable.at(-1);
  for (let at = fireTimes.next(nowMs); at !== undefined && until !== undefined && at < until; at = fireTimes.next(at)) {
    const refused = windowRefusal(rules, at);
    if (refused) skipped.push({ ...fireTime(at, schedule.timezone), reason: refused.reason });
    if (skipped.length >= SKIPPED_SHOWN) break;
  }
  return { next: runnable.map((at) => fireTime(at, schedule.timezone)), skipped };
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

/** Each schedule of `playbooks`, with its `count` next fires that will run, as of `nowMs`. */
export async function scheduleOverview(
  playbooks: readonly Playbook[],
  store: RunStore,
  count: number,
  nowMs: number,
): Promise<ScheduleOverview[]> {
  const views: ScheduleOverview[] = [];
  for (const playbook of playbooks) {
    for (const schedule of playbook.schedules) {
      const state = await withRunResult(store, await readScheduleState(store, schedule.key));
      views.push({
        key: schedule.key,
        playbook: playbook.name,
        file: schedule.location.file,
        line: schedule.location.line,
        cron: schedule.cron,
        timezone: schedule.timezone,
        enabled: schedule.enabled,
        overlap: schedule.overlap,
        catchUp: schedule.catchUp,
        limits: limitsOf(playbook, schedule),
        ...firesOf(playbook, schedule, nowMs, count),
        ...(state ? { state } : {}),
      });
    }
  }
  return views;
}
