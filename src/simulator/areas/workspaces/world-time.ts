/**
 * The workspace is the root of the world: everything in it was created after it. World
 * generation may not read the clock (the same seed gives the same world), so generated
 * timestamps count back from a fixed instant; records created by requests use the clock.
 */
import type { Rng } from '../../context.js';

/** The instant generated worlds are "as of". */
export const WORLD_EPOCH_MS = Date.UTC(2025, 5, 1);
const DAY_MS = 86_400_000;

/** An ISO timestamp a random number of days (up to `maxDaysAgo`) before the world epoch. */
export function pastTimestamp(rng: Rng, maxDaysAgo: number, minDaysAgo = 0): string {
  const ms = WORLD_EPOCH_MS - rng.int(minDaysAgo * DAY_MS, maxDaysAgo * DAY_MS);
  return new Date(ms).toISOString();
}

/** The fields every record carries (reference: common record fields). */
export interface RecordFields {
  id: string;
  type: string;
  generation: number;
  createdAt: string;
  updatedAt: string;
}

/** Common fields of a generated record: created up to `maxDaysAgo` days ago, updated since. */
export function generatedRecord(rng: Rng, type: string, maxDaysAgo = 700): RecordFields {
  const createdAt = pastTimestamp(rng, maxDaysAgo, 1);
  const createdDaysAgo = Math.floor((WORLD_EPOCH_MS - Date.parse(createdAt)) / DAY_MS);
  return { id: rng.uuid(), type, generation: rng.int(1, 5), createdAt, updatedAt: pastTimestamp(rng, createdDaysAgo) };
}

/** Marks a record changed now: a new generation and `updatedAt`. */
export function touch(record: RecordFields, nowIso: string): void {
  record.generation += 1;
  record.updatedAt = nowIso;
}
