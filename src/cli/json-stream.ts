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
 * The pieces of `JSON.stringify(value)`, in order: arrays element by element and objects that
 * hold arrays member by member; anything else (leaves, objects of scalars) stringified whole.
 * `inArray`: `undefined` and functions become `null` there, as JSON.stringify does.
 */
function* pieces(value: unknown, inArray: boolean): Generator<string> {
  if (value === null || typeof value !== 'object' || !holdsArray(value)) {
    const text = JSON.stringify(value);
    yield text === undefined ? (inArray ? 'null' : '') : text;
    return;
  }
  if (Array.isArray(value)) {
    yield '[';
    for (let index = 0; index < value.length; index += 1) {
      if (index > 0) yield ',';
      yield* pieces(value[index], true);
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
    yield* pieces(member, false);
  }
  yield '}';
}

/**
 * Writes `JSON.stringify(value)` and `suffix` to `out` a piece at a time, waiting for the stream
 * to drain when it asks to (a slow reader such as a pipe to `jq` or `less`).
 */
export async function writeJsonStreamed(out: NodeJS.WritableStream, value: unknown, suffix = '\n'): Promise<void> {
  let pending = '';
  const flush = async (): Promise<void> => {
    const text = pending;
    pending = '';
    if (!out.write(text)) await once(out, 'drain');
  };
  for (const piece of pieces(value, false)) {
    pending += piece;
    if (pending.length >= CHUNK_CHARACTERS) await flush();
  }
  pending += suffix;
  await flush();
}
