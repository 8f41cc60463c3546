/**
 * The arithmetic of a `forEach`: rolling batch sizes and the failure tolerance, from counts
 * or percentages of the item count.
 */
import { StepError, StepFailureKind } from '../executors/step-error.js';

function invalid(message: string): StepError {
  return new StepError(message, { kind: StepFailureKind.invalidInput, code: 'INVALID_LOOP_OPTION' });
}

/** `"25%"` of `total`, rounded up (a batch) or down (a tolerance); a number as it is. */
function amountOf(value: unknown, total: number, round: (n: number) => number, what: string): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  const match = typeof value === 'string' ? /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(value) : null;
  if (match?.[1] !== undefined && Number(match[1]) <= 100) return round((Number(match[1]) / 100) * total);
  throw invalid(`${what} must be a whole number or a percentage like "25%", got ${JSON.stringify(value)}.`);
}

/**
 * Sizes of the rolling batches covering `total` items: each entry a count or a percentage
 * of all items (at least 1), the last one repeated until every item has a batch.
 * Without batches: one batch of everything.
 */
export function batchSizes(batches: ReadonlyArray<number | string> | undefined, total: number): number[] {
  if (total === 0) return [];
  if (!batches || batches.length === 0) return [total];
  const sizes: number[] = [];
  let covered = 0;
  for (let index = 0; covered < total; index += 1) {
    const entry = batches[Math.min(index, batches.length - 1)];
    const size = Math.min(total - covered, Math.max(1, amountOf(entry, total, Math.ceil, 'A batch size')));
    sizes.push(size);
    covered += size;
  }
  return sizes;
}

/**
 * Failures allowed among `total` items: a count, or a percentage rounded down. New items
 * stop starting once failures exceed it; failures equal to it (the tolerance reached)
 * still let the loop succeed. @default 0
 */
export function toleratedFailures(value: unknown, total: number): number {
  return value === undefined ? 0 : amountOf(value, total, Math.floor, '`tolerate.failures`');
}

/** A positive integer concurrency. */
export function concurrencyOf(value: unknown): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1) return value;
  throw invalid(`\`concurrency\` must be a whole number from 1, got ${JSON.stringify(value)}.`);
}
