/**
 * Wall-clock times of an IANA timezone and the instants they name, with Fleetbook's DST
 * policy: a wall time that happens twice (clocks go back) is its first occurrence; a wall
 * time that never happens (clocks go forward) is the instant the clocks jump, the next
 * valid time. Built on `Intl`, which carries the timezone database of Node.
 */

/** A wall-clock time: fields as a clock on the wall shows them, written as UTC milliseconds. */
export type WallTimeMs = number;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timezone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timezone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timezone, formatter);
  }
  return formatter;
}

/** True when `timezone` is an IANA name (or `UTC`) this Node knows. */
export function isValidTimezone(timezone: string): boolean {
  try {
    formatterFor(timezone);
    return true;
  } catch {
    return false;
  }
}

/** What the wall clock of `timezone` shows at `instantMs` (milliseconds kept). */
export function wallTimeAt(instantMs: number, timezone: string): WallTimeMs {
  const parts: Record<string, number> = {};
  for (const part of formatterFor(timezone).formatToParts(new Date(instantMs))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  const wholeSeconds = Date.UTC(
    parts.year ?? 1970,
    (parts.month ?? 1) - 1,
    parts.day ?? 1,
    parts.hour ?? 0,
    parts.minute ?? 0,
    parts.second ?? 0,
  );
  return wholeSeconds + (((instantMs % 1000) + 1000) % 1000);
}

/** The zone's offset from UTC at `instantMs`, in milliseconds (Berlin in summer: 7 200 000). */
export function offsetAt(instantMs: number, timezone: string): number {
  return wallTimeAt(instantMs, timezone) - instantMs;
}

// Offsets change by at most a few hours, so the two offsets a wall time can have are the
// ones half a day either side of it.
const AROUND_MS = 12 * 3600_000;

/** The instant `wall` names in `timezone`, by the DST policy above. */
export function instantOf(wall: WallTimeMs, timezone: string): number {
  const before = offsetAt(wall - AROUND_MS, timezone);
  const after = offsetAt(wall + AROUND_MS, timezone);
  const candidates = [wall - before, wall - after].filter((instant) => wallTimeAt(instant, timezone) === wall);
  if (candidates.length > 0) return Math.min(...candidates);
  // In a gap: the clocks jump from `before` to `after` somewhere between these two instants;
  // the first instant with the new offset is the next valid time.
  let low = wall - after;
  let high = wall - before;
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (offsetAt(middle, timezone) === after) high = middle;
    else low = middle;
  }
  return high;
}

/**
 * The earliest wall time whose instant may come after `instantMs`: the wall time of the
 * instant, moved back by the hour(s) the clocks went back just before it, so fires of a
 * repeated hour already passed are looked at (and found to be in the past).
 */
export function earliestWallTimeAfter(instantMs: number, timezone: string): WallTimeMs {
  return wallTimeAt(instantMs, timezone) - wentBackBefore(instantMs, timezone);
}

/**
 * The latest wall time whose instant may be at or before `instantMs`: its wall time, moved
 * forward by the hour(s) the clocks went back just before it (the first occurrence of those
 * wall times has passed).
 */
export function latestWallTimeUntil(instantMs: number, timezone: string): WallTimeMs {
  return wallTimeAt(instantMs, timezone) + wentBackBefore(instantMs, timezone);
}

/** How far the clocks went back in the half day before `instantMs` (0 when they did not). */
function wentBackBefore(instantMs: number, timezone: string): number {
  return Math.max(0, offsetAt(instantMs - AROUND_MS, timezone) - offsetAt(instantMs, timezone));
}
