/**
 * Windows and freezes as the scheduler applies them: a fire whose time, or whose start, falls
 * outside its playbook's and schedule's windows or inside a freeze is skipped, never started;
 * `fleetbook schedules` shows the fires that will run.
 */
import { hasTimeRules, timeRulesOf, type Playbook, type ScheduleSpec } from '../playbook/index.js';
import type { RunRecord } from '../store/index.js';
import {
  closedBecause,
  formatWallTime,
  nextOpen,
  startGateOf,
  type StartGate,
  type TimeRules,
} from '../windows/index.js';
import type { FireTimes } from './fire-times.js';

/** Why a fire may not start at `atMs`: `window` or `freeze`, and the words for a log and `fleetbook schedules`. */
export interface WindowRefusal {
  code: 'window' | 'freeze';
  reason: string;
}

/** Why nothing of `rules` may start at `atMs`, or undefined when it may. */
export function windowRefusal(rules: TimeRules, atMs: number): WindowRefusal | undefined {
  const closed = closedBecause(rules, atMs);
  if (closed === undefined) return undefined;
  const opens = nextOpen(rules, atMs);
  const timezone = closed.reason === 'freeze' ? closed.freeze.timezone : closed.window.timezone;
  const until =
    opens === undefined
      ? 'it opens again within no year'
      : `it opens next at ${formatWallTime(opens, timezone)} (${new Date(opens).toISOString()})`;
  if (closed.reason === 'freeze') {
    const { from, to, reason } = closed.freeze;
    return { code: 'freeze', reason: `inside the freeze ${from}..${to}${reason ? ` (${reason})` : ''}; ${until}` };
  }
  return { code: 'window', reason: `outside the maintenance window; ${until}` };
}

/** Why a fire of `schedule` for `scheduledMs`, starting at `nowMs`, may not start. */
export function fireRefusal(
  playbook: Playbook,
  schedule: ScheduleSpec,
  scheduledMs: number,
  nowMs: number,
): WindowRefusal | undefined {
  const rules = timeRulesOf(playbook, schedule);
  const atFire = windowRefusal(rules, scheduledMs);
  if (atFire) return atFire;
  const atStart = windowRefusal(rules, nowMs);
  return (
    atStart && { code: atStart.code, reason: `starting late, at ${new Date(nowMs).toISOString()}: ${atStart.reason}` }
  );
}

/** How far ahead `runnableFires` looks: a cron whose fires never fall in the window would be walked for ever. */
const LOOK_AHEAD_MS = 400 * 86_400_000;

/** The next `count` fires after `afterMs` (within 400 days) that fall inside the windows and outside the freezes. */
export function runnableFires(fireTimes: FireTimes, rules: TimeRules, afterMs: number, count: number): number[] {
  const fires: number[] = [];
  let at = fireTimes.next(afterMs);
  while (at !== undefined && at <= afterMs + LOOK_AHEAD_MS && fires.length < count) {
    if (closedBecause(rules, at) === undefined) {
      fires.push(at);
      at = fireTimes.next(at);
      continue;
    }
    // Closed: the first fire at or after the next opening (fires in between would be skipped).
    const opens = nextOpen(rules, at);
    at = opens === undefined ? undefined : fireTimes.next(opens - 1);
  }
  return fires;
}

/**
 * The start gate a stored run goes on with (a worker's first drive, a resume): none for a dry
 * run or one started with `--ignore-window`; else its playbook's windows and, for a scheduled
 * run, its schedule's (a manual run knows no schedule).
 */
export function startGateOfRun(playbook: Playbook, run: Pick<RunRecord, 'trigger' | 'dryRun'>): StartGate | null {
  const { trigger } = run;
  if (run.dryRun || trigger.ignoredWindow !== undefined) return null;
  // A schedule's fire, or the schedule run now by hand: its windows too.
  const schedule =
    trigger.kind === 'schedule' || trigger.kind === 'trigger'
      ? playbook.schedules.find((candidate) => candidate.key === trigger.scheduleId)
      : undefined;
  const rules = timeRulesOf(playbook, schedule);
  return hasTimeRules(rules) ? startGateOf(rules) : null;
}
