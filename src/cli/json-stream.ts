/**
 * JSON written as it is produced instead of one `JSON.stringify` of everything: `fleetbook runs
 * show -o json` of a 10,000-system run is hundreds of megabytes of JSON, which as one string
 * would double the process's memory (or pass V8's largest string). The text is the one
 * `JSON.stringify(value)` gives, for plain data (what the store parsed from JSON and the
 * objects built from it: no `toJSON`, no cycles).
 */
import { once } from 'node:events';

/** Text is handed to the stream in pieces of about this size. */
const CHUNK_CHARACTERS = 64 * 1024;

/** Whether `value` is worth walking rather than stringifying whole: an array, or an object holding one. */
function holdsArray(value: object): boolean {
  if (Array.isArray(value)) return true;
  for (const key in value) if (Array.isArray((value as Record<string, unknown>)[key])) return true;
  return false;
}

/**
 * Objects the text shows as `read` gives them, read a batch at a time while the text is written
 * (a fleet's steps without their values, read back from the journal by seq): only a batch of the
 * values they stand for is held at once.
 */
export interface StreamedReads<T extends object> {
  /**
   * The objects to read, in the order the text meets them. Each must be met where the writer
   * walks: an element of an array, or a member of an object that holds an array.
   */
  objects: readonly T[];
  /** What to write for each of `batch`, in its order (one read of a store). */
  read(batch: readonly T[]): Promise<unknown[]>;
  /** Objects per `read`. */
  batchSize: number;
}

/** Yielded by `pieces` at an object of `StreamedReads` whose value is not read yet. */
const UNREAD = Symbol('unread');

/** The objects of a `StreamedReads` not written yet, and the values read for them. */
interface Reads {
  wanted: Set<object>;
  read: Map<object, unknown>;
}

/**
 * The pieces of `JSON.stringify(value)`, in order: arrays element by element and objects that
 * hold arrays member by member; anything else (leaves, objects of scalars) stringified whole.
 * `inArray`: `undefined` and functions become `null` there, as JSON.stringify does. An object of
 * `reads` is written as the value read for it, `UNREAD` yielded until that value is there.
 */
function* pieces(given: unknown, inArray: boolean, reads?: Reads): Generator<string | typeof UNREAD> {
  let value = given;
  if (reads !== undefined && typeof value === 'object' && value !== null && reads.wanted.has(value)) {
    while (!reads.read.has(value)) yield UNREAD;
    const shown = reads.read.get(value);
    reads.read.delete(value);
    reads.wanted.delete(value);
    // Written here, not by one more generator: every piece passes through each level of `yield*`.
    value = shown;
  }
  if (value === null || typeof value !== 'object' || !holdsArray(value)) {
    const text = JSON.stringify(value);
    yield text === undefined ? (inArray ? 'null' : '') : text;
    return;
  }
  if (Array.isArray(value)) {
    yield '[';
    for (let index = 0; index < value.length; index += 1) {
      if (index > 0) yield ',';
      yield* pieces(value[index], true, reads);
    }
    yield ']';
    return;
  }
  yield '{';
  let first = true;
  for (const [key, member] of Object.entries(value)) {
    // JSON.stringify leaves out members it cannot write.
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    yield `${first ? '' : ','}${JSON.stringify(key)}:`;
    first = false;
    yield* pieces(member, false, reads);
  }
  yield '}';
}

/**
 * The batches of `reads` read in order, the next one asked for as one is handed over (so a
 * database server makes it while the text of this one is written), as `journalPages` does.
 */
function batchReader<T extends object>(reads: StreamedReads<T>, into: Reads): () => Promise<void> {
  let start = 0;
  const ask = (): Promise<[readonly T[], unknown[]]> | undefined => {
    if (start >= reads.objects.length) return undefined;
    const batch = reads.objects.slice(start, (start += reads.batchSize));
    const asked = reads.read(batch).then((values) => [batch, values] as [readonly T[], unknown[]]);
    // Handled here so a failure while the batch before is written is not an unhandled rejection.
    asked.catch(() => undefined);
    return asked;
  };
  let next = ask();
  return async () => {
    if (next === undefined) throw new Error('an object to read was met after every batch was read');
    const [batch, values] = await next;
    next = ask();
    batch.forEach((object, index) => into.read.set(object, values[index]));
  };
}

/**
 * Writes `JSON.stringify(value)` and `suffix` to `out` a piece at a time, waiting for the stream
 * to drain when it asks to (a slow reader such as a pipe to `jq` or `less`). With `reads`, the
 * objects it names are written as read, a batch at a time.
 */
export async function writeJsonStreamed<T extends object>(
  out: NodeJS.WritableStream,
  value: unknown,
  suffix = '\n',
  reads?: StreamedReads<T>,
): Promise<void> {
  let pending = '';
  const flush = async (): Promise<void> => {
    const text = pending;
    pending = '';
    if (!out.write(text)) await once(out, 'drain');
  };
  const state: Reads | undefined = reads && { wanted: new Set(reads.objects), read: new Map() };
  const readBatch = reads && state && batchReader(reads, state);
  for (const piece of pieces(value, false, state)) {
    if (piece === UNREAD) {
      await readBatch?.();
      continue;
    }
    pending += piece;
    if (pending.length >= CHUNK_CHARACTERS) await flush();
  }
  // An object the walk never met would have been written without its values.
  if (state !== undefined && state.wanted.size > 0)
    throw new Error(`${state.wanted.size} objects to read were not where the writer walks`);
  pending += suffix;
  await flush();
}
