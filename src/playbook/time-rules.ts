import type { TimeRules } from '../windows/index.js';
import type { Playbook, ScheduleSpec } from '../model/index.js';

/**
 * The windows and freezes a run of `playbook` (fired by `schedule`) starts under: the
 * playbook's window and the schedule's, both of which must be open (a schedule narrows its
 * playbook's window, never widens it), and the freezes of both.
 */
export function timeRulesOf(
  playbook: Pick<Playbook, 'window' | 'freeze'>,
  schedule?: Pick<ScheduleSpec, 'window' | 'freeze'>,
): TimeRules {
  return {
    windows: [playbook.window, schedule?.window].filter((window) => window !== undefined),
    freezes: [...(playbook.freeze ?? []), ...(schedule?.freeze ?? [])],
  };
}

/** Whether anything limits when runs of `playbook` start. */
export function hasTimeRules(rules: TimeRules): boolean {
  return rules.windows.length > 0 || rules.freezes.length > 0;
}
