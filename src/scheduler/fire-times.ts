/**
 * When a schedule fires. cron-parser finds the wall-clock times a cron expression matches
 * (it walks the expression in UTC, so its fields read as the wall clock); `timers/zoned-time.ts`
 * turns each into an instant of the schedule's timezone with Fleetbook's DST policy:
 *
 * - a wall time inside a skipped hour (clocks go forward) fires once, at the next valid
 *   time: the instant the clocks jump (02:30 on a Berlin spring-forward day fires at 03:00);
 * - a wall time inside a repeated hour (clocks go back) fires once, at its first occurrence;
 * - two wall times that land on one instant (02:00 skipped and 03:00) fire once.
 */
import { CronExpressionParser } from 'cron-parser';
import { SchedulerError } from './scheduler-error.js';
import { earliestWallTimeAfter, instantOf, isValidTimezone, latestWallTimeUntil } from '../timers/index.js';
import { errorMessage } from '../errors/index.js';

export interface FireTimes {
  readonly cron: string;
  readonly timezone: string;
  /** The first fire strictly after `afterMs`; undefined when the expression never fires again. */
  next(afterMs: number): number | undefined;
  /** Fires after `afterMs` up to and including `untilMs`, oldest first, at most `limit` (the newest kept). */
  between(afterMs: number, untilMs: number, limit: number): number[];
  /** The next `count` fires after `afterMs`. */
  take(afterMs: number, count: number): number[];
}

/** Parses `cron` (5 fields, 6 with seconds first, or an alias like `@daily`) for `timezone`. */
export function createFireTimes(cron: string, timezone = 'UTC'): FireTimes {
  if (!isValidTimezone(timezone)) {
    throw new SchedulerError(
      `'${timezone}' is not an IANA timezone (for example Europe/Berlin or America/New_York).`,
      'INVALID_TIMEZONE',
    );
  }
  const parse = (wallMs: number) =>
    CronExpressionParser.parse(cron, { tz: 'UTC', currentDate: new Date(wallMs), strict: false });
  try {
    parse(0);
  } catch (error) {
    throw new SchedulerError(`'${cron}' is not a cron expression: ${errorMessage(error)}`, 'INVALID_CRON');
  }

  const next = (afterMs: number): number | undefined => {
    const walls = parse(earliestWallTimeAfter(afterMs, timezone));
    for (;;) {
      let wall: number;
      try {
        wall = walls.next().getTime();
      } catch {
        // cron-parser gives up on expressions that match no date (`0 0 30 2 *`).
        return undefined;
      }
      const instant = instantOf(wall, timezone);
      if (instant > afterMs) return instant;
    }
  };

  return {
    cron,
    timezone,
    next,
    between(afterMs, untilMs, limit) {
      // Walked backwards from `untilMs`, so three days of a per-second schedule cost `limit`
      // steps, not 259 200.
      const walls = parse(latestWallTimeUntil(untilMs, timezone) + 1);
      const fires: number[] = [];
      while (fires.length < limit) {
        let wall: number;
        try {
          wall = walls.prev().getTime();
        } catch {
          break;
        }
        const instant = instantOf(wall, timezone);
        if (instant > untilMs || instant === fires.at(-1)) continue;
        if (instant <= afterMs) break;
        fires.push(instant);
      }
      return fires.reverse();
    },
    take(afterMs, count) {
      const fires: number[] = [];
      for (let at = next(afterMs); at !== undefined && fires.length < count; at = next(at)) fires.push(at);
      return fires;
    },
  };
}
