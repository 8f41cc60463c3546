/**
 * The duration forms a playbook accepts, as a JSON Schema `pattern`: `1d2h30m10s500ms` (units in
 * this order, each at most once, at least one), or plain digits (milliseconds).
 */
export const DURATION_PATTERN_SOURCE =
  '^(?:\\d+|(?=\\d)(?:(\\d+)d)?(?:(\\d+)h)?(?:(\\d+)m(?!s))?(?:(\\d+)s)?(?:(\\d+)ms)?)$';

const DURATION_PATTERN = new RegExp(DURATION_PATTERN_SOURCE);
const UNIT_MS = [86_400_000, 3_600_000, 60_000, 1000, 1] as const;

/**
 * The longest duration a playbook may give: 2^31-1 ms, about 24.8 days. Node's timers fire at
 * once for any longer delay, so a `sleep: 30d` would end at once and a `timeout: 30d` fail its
 * step at once.
 */
export const MAX_DURATION_MS = 2 ** 31 - 1;

/** `MAX_DURATION_MS` as a duration is written. */
export const MAX_DURATION_TEXT = '24d20h31m23s647ms';

/** What a duration is, for messages. */
export const DURATION_FORMS = '500ms, 30s, 5m, 2h or 1h30m';

export interface ParseDurationOptions {
  /** Longer durations are refused. @default MAX_DURATION_MS */
  maxMs?: number;
}

/** Milliseconds of the value when it is written as a duration, however long; may exceed safe integers. */
function measure(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = DURATION_PATTERN.exec(value.trim());
  if (match === null) return undefined;
  if (/^\d+$/.test(match[0])) return Number(match[0]);
  let totalMs = 0;
  UNIT_MS.forEach((unitMs, index) => {
    const amount = match[index + 1];
    if (amount !== undefined) totalMs += Number(amount) * unitMs;
  });
  return totalMs;
}

/**
 * Milliseconds of a duration written as `500ms`, `30s`, `5m`, `2h`, `1h30m`, `1d`, or a
 * non-negative integer (already milliseconds). Undefined when it is none of those, or longer
 * than `maxMs` (`MAX_DURATION_MS` unless told: what a timer can wait).
 */
export function parseDuration(value: unknown, options: ParseDurationOptions = {}): number | undefined {
  const ms = measure(value);
  if (ms === undefined || !Number.isSafeInteger(ms)) return undefined;
  return ms <= (options.maxMs ?? MAX_DURATION_MS) ? ms : undefined;
}

/** True for a value `parseDuration` accepts. */
export function isDuration(value: unknown): boolean {
  return parseDuration(value) !== undefined;
}

/** True for a value written as a duration that is longer than `MAX_DURATION_MS`. */
export function isTooLongDuration(value: unknown): boolean {
  const ms = measure(value);
  return ms !== undefined && !(ms <= MAX_DURATION_MS);
}

/** Why `parseDuration` refuses the value, as a message; undefined when it accepts it. */
export function durationProblem(value: unknown): string | undefined {
  if (isDuration(value)) return undefined;
  const shown = typeof value === 'string' ? `'${value}'` : (JSON.stringify(value) ?? String(value));
  if (isTooLongDuration(value)) {
    return `${shown} is too long: a duration is at most ${MAX_DURATION_TEXT} (${MAX_DURATION_MS} ms, about 24.8 days), the longest a timer can wait`;
  }
  return `${shown} is not a duration such as ${DURATION_FORMS}`;
}
