/**
 * Large values (a `paginate: all` over thousands of records as a step's outputs, a `set` step's
 * rendered input, a run's inputs read from a file, a fleet table as a run's outputs) live in
 * files under `FLEETBOOK_HOME/outputs/<runId>/`, the store keeping a reference, so no run fails
 * on the store's payload limit (256 KiB per value) and the journal stays small. Resume and
 * replays read them back.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JournalEvent } from '../store/index.js';

/** What the store keeps in place of a value written to a file. */
export interface OutputsFileReference {
  $outputsFile: string;
  bytes: number;
}

/** Values whose JSON is larger than this go to a file: 64 KiB, well under the store's 256 KiB per value. */
export const defaultMaxInlineOutputBytes = 64 * 1024;

export interface SpillOptions {
  /** The outputs folder: files go to `<dir>/<runId>/`. */
  dir: string;
  runId: string;
  maxInlineBytes: number;
}

export function isOutputsFileReference(value: unknown): value is OutputsFileReference {
  return (
    value !== null && typeof value === 'object' && typeof (value as Record<string, unknown>).$outputsFile === 'string'
  );
}

/** A file name for a step path (`systems[3].update` → `systems_3_.update`). */
const fileNameOf = (name: string): string => name.replace(/[^A-Za-z0-9_.-]/g, '_');

/**
 * `value`, or when its JSON is larger than `maxInlineBytes`, a reference to the file
 * `<dir>/<runId>/<name>.json` it was written to.
 */
export async function spillLargeValue(value: unknown, name: string, options: SpillOptions): Promise<unknown> {
  if (value === undefined) return value;
  const text = JSON.stringify(value);
  // A UTF-16 code unit is at most 3 bytes of UTF-8: most values need no count.
  if (text.length * 3 <= options.maxInlineBytes) return value;
  const bytes = Buffer.byteLength(text);
  if (bytes <= options.maxInlineBytes) return value;
  const folder = join(options.dir, options.runId);
  await mkdir(folder, { recursive: true });
  const file = join(folder, `${fileNameOf(name)}.json`);
  await writeFile(file, text);
  const reference: OutputsFileReference = { $outputsFile: file, bytes };
  return reference;
}

/** Whether `event` carries a value that may be large: a step's rendered input or its outputs. */
export function carriesLargeValue(event: JournalEvent): boolean {
  return (
    (event.type === 'step.finished' && (event.outputs !== undefined || event.input !== undefined)) ||
    (event.type === 'step.started' && event.input !== undefined)
  );
}

/**
 * Whether `event` carries a value that may need a file: one of `carriesLargeValue`'s whose whole
 * JSON is over `maxInlineBytes` (no value is larger than the event holding it, so a small event
 * needs no look at each value).
 */
export function mayCarryLargeValue(event: JournalEvent, maxInlineBytes: number): boolean {
  return carriesLargeValue(event) && !fitsInJsonBytes(event, maxInlineBytes);
}

/**
 * Whether `value`'s JSON is certainly no more than `budget` bytes, told by a walk that makes no
 * text (the store encodes the event once, after): a string of n UTF-16 units is at most 6n + 2
 * bytes (a `\u00XX` escape per unit at worst; a unit is at most 3 bytes of UTF-8), a number at
 * most 24. False when it may be more, or for a value with its own `toJSON` (other than a Date).
 */
function fitsInJsonBytes(value: unknown, budget: number): boolean {
  return jsonBytesLeft(value, budget) >= 0;
}

/**
 * `budget` less the most bytes `item`'s JSON may take, or -1 once it may be more (a recursion of
 * its own, not a closure made per event).
 */
function jsonBytesLeft(item: unknown, budget: number): number {
  let left = budget;
  if (typeof item === 'string') left -= 6 * item.length + 3;
  else if (item === null || typeof item !== 'object') left -= 25;
  else if (item instanceof Date) left -= 30;
  else if (typeof (item as { toJSON?: unknown }).toJSON === 'function') return -1;
  else if (Array.isArray(item)) {
    left -= 2;
    for (const element of item) if ((left = jsonBytesLeft(element, left)) < 0) return -1;
  } else {
    left -= 2;
    for (const key in item) {
      if (!Object.prototype.hasOwnProperty.call(item, key)) continue;
      left -= 6 * key.length + 4;
      if ((left = jsonBytesLeft((item as Record<string, unknown>)[key], left)) < 0) return -1;
    }
  }
  return left < 0 ? -1 : left;
}

/**
 * The event to journal: a `step.finished` whose outputs (or a `step.started`'s or quiet `step.finished`'s input) are
 * larger than `maxInlineBytes` has them written to `<path>.json` (`<path>.input.json`) and
 * carries a reference instead.
 */
export async function spillLargeEventValues(event: JournalEvent, options: SpillOptions): Promise<JournalEvent> {
  if (event.type === 'step.finished') {
    const outputs = await spillLargeValue(event.outputs, event.path, options);
    // A quiet step's one entry may carry its input too.
    const input = await spillLargeValue(event.input, `${event.path}.input`, options);
    if (outputs === event.outputs && input === event.input) return event;
    return { ...event, ...(outputs === undefined ? {} : { outputs }), ...(input === undefined ? {} : { input }) };
  }
  if (event.type === 'step.started' && event.input !== undefined) {
    const input = await spillLargeValue(event.input, `${event.path}.input`, options);
    return input === event.input ? event : { ...event, input };
  }
  return event;
}

/** A value as it was before `spillLargeValue`: a file reference read back, anything else as is. */
export async function readSpilledValue(value: unknown): Promise<unknown> {
  return isOutputsFileReference(value) ? (JSON.parse(await readFile(value.$outputsFile, 'utf8')) as unknown) : value;
}

/** A run's inputs as the store keeps them: each large value in a file (`run.inputs.<name>.json`). */
export async function spillLargeInputs(
  inputs: Record<string, unknown>,
  options: SpillOptions,
): Promise<Record<string, unknown>> {
  const kept = await Promise.all(
    Object.entries(inputs).map(
      async ([name, value]) => [name, await spillLargeValue(value, `run.inputs.${name}`, options)] as const,
    ),
  );
  return Object.fromEntries(kept);
}

/** A run's stored inputs with the values kept in files read back: the inputs the run was given. */
export async function readSpilledInputs(inputs: Record<string, unknown>): Promise<Record<string, unknown>> {
  const read = await Promise.all(
    Object.entries(inputs).map(async ([name, value]) => [name, await readSpilledValue(value)] as const),
  );
  return Object.fromEntries(read);
}
