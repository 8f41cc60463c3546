/** Maintenance windows and freezes as a loaded playbook holds them (see docs/windows.md). */

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
/** A day of the week, as `Date#getUTCDay` numbers it (sun = 0). */
export type Weekday = (typeof WEEKDAYS)[number];

/** Day names a playbook may write: the short ones and the full ones (`saturday` is `sat`). */
export const DAY_NAMES: Readonly<Record<string, Weekday>> = Object.fromEntries(
  WEEKDAYS.flatMap((day, index) => [
    [day, day],
    [['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'][index] ?? day, day],
  ]),
);

/** What a run does when its window closes while items of a loop remain. */
export const OnWindowClose = { wait: 'wait', fail: 'fail' } as const;
export type OnWindowClose = (typeof OnWindowClose)[keyof typeof OnWindowClose];

/**
 * A weekly time range: it opens on each of `days` at `from` (wall time) and closes at `to`, on
 * the same day, or on the next one when `to` is not after `from` (a range across midnight).
 */
export interface WeeklyRange {
  days: Weekday[];
  /** `HH:MM`, 00:00 to 23:59. */
  from: string;
  /** `HH:MM`, 00:00 to 24:00 (the end of the day). */
  to: string;
}

export interface WindowSpec {
  /** IANA name the ranges are read in. */
  timezone: string;
  weekly: WeeklyRange[];
  /** @default 'wait' */
  onClose: OnWindowClose;
}

/** Dates on which nothing starts, `from` to `to` inclusive, in `timezone`. */
export interface FreezeSpec {
  /** `YYYY-MM-DD`. */
  from: string;
  /** `YYYY-MM-DD`, not before `from`. */
  to: string;
  reason?: string;
  /** The window's timezone at the same level, else the schedule's, else UTC (set by the loader). */
  timezone: string;
}

/** Every window that must be open (all of them) and every freeze that must not hold (any). */
export interface TimeRules {
  windows: WindowSpec[];
  freezes: FreezeSpec[];
}
