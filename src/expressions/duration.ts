/**
 * The duration forms a playbook accepts, as a JSON Schema `pattern`: `1d2h30m10s500ms` (units in
 * this order, each at most once, at least one), or plain digits (milliseconds).
 */
export const DURATION_PATTERN_SOURCE = '^(?:\\d+|(?=\\d)(?:(\\d+)d)?(?:(\\d+)h)?(?:(\\d+)m(?!s))?(?:(\\d+)s)?(?:(\\d+)ms)?)$';

const DURATION_PATTERN = new RegExp(DURATION_PATTERN_SOURCE);
const UNIT_MS = [86_400_000, 3_600_000, 60_000, 1000, 1] as const;

/**
 * Milliseconds of a duration written as `500ms`, `30s`, `5m`, `2h`, `1h30m`, `1d`, or a
 * non-negative integer (already milliseconds). Undefined when it is none of those.
 */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = DURATION_PATTERN.exec(value.trim());
  if (match === null) return undefined;
  if (/^\d+$/.test(match[0])) return Number(match[0]);
  let totalMs = 0;
  UNIT_MS.forEach((unitMs, index) => {
    const amount = match[index + 1];
    if (amount !== undefined) totalMs += Number(amount) * unitMs;
  });
  return Number.isSafeInteger(totalMs) ? totalMs : undefined;
}

/** True for a value `parseDuration` accepts. */
export function isDuration(value: unknown): boolean {
  return parseDuration(value) !== undefined;
}
