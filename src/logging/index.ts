/**
 * One pino logger passed down; children add `runId`, `stepId`, `attempt`. Secrets are
 * removed twice: by key (credentials and tokens wherever they sit in an object) and by
 * value (any registered secret string, e.g. a `secret: true` playbook input, wherever it
 * appears inside a logged string).
 */
import { pino, type Logger, type DestinationStream, type LevelWithSilent } from 'pino';

export type { Logger } from 'pino';

/** Object keys whose values are always secret, wherever they sit in a logged or kept object. */
const secretKeys = new Set([
  'clientSecret',
  'client_secret',
  'access_token',
  'accessToken',
  'token',
  'password',
  'authorization',
  'Authorization',
]);

export const REDACTED = '[REDACTED]';

/**
 * `value` with the value of every secret key at any depth replaced by `[REDACTED]`, for log lines
 * and for records kept outside a logger (the simulator's request log of request bodies). Only the
 * objects on the way to a secret key are copied (an error keeps its prototype and its hidden
 * `message` and `stack`); a value without one is returned as it is. Done here rather than with
 * pino's `redact` paths: those parse every path for every line (about 50 µs a line, a tenth of the
 * engine's CPU in a 10,000-system run) and reach only the depths listed.
 */
export function withoutSecretKeys<T>(value: T): T {
  return redactKeys(value, new Set()) as T;
}

function redactKeys(value: unknown, seen: Set<object>): unknown {
  if (typeof value !== 'object' || value === null || seen.has(value)) return value;
  seen.add(value);
  let copy: Record<string, unknown> | unknown[] | undefined;
  if (Array.isArray(value)) {
    let items: unknown[] | undefined;
    for (let i = 0; i < value.length; i += 1) {
      const item: unknown = value[i];
      const redacted = redactKeys(item, seen);
      if (redacted !== item) (items ??= [...(value as unknown[])])[i] = redacted;
    }
    copy = items;
  } else {
    for (const key of Object.keys(value)) {
      const item = (value as Record<string, unknown>)[key];
      const redacted = secretKeys.has(key) ? REDACTED : redactKeys(item, seen);
      if (redacted !== item)
        Object.defineProperty((copy ??= copyOf(value)), key, {
          value: redacted,
          enumerable: true,
          writable: true,
          configurable: true,
        });
    }
  }
  seen.delete(value);
  return copy ?? value;
}

/**
 * A shallow copy with the same prototype and own properties, hidden ones included (an error's
 * `message`). An accessor is copied as its value: Node 22's error `stack` is an accessor that
 * reads the original error, and on a copy it would read nothing.
 */
function copyOf(value: object): Record<string, unknown> {
  const copy = Object.create(Object.getPrototypeOf(value) as object | null) as Record<string, unknown>;
  for (const key of Reflect.ownKeys(value)) {
    const descriptor = Object.getOwnPropertyDescriptor(value, key)!;
    Object.defineProperty(
      copy,
      key,
      descriptor.get || descriptor.set
        ? {
            value: (value as Record<string | symbol, unknown>)[key],
            enumerable: descriptor.enumerable ?? false,
            writable: true,
            configurable: true,
          }
        : descriptor,
    );
  }
  return copy;
}

/** The set of secret values a logger scrubs from every string it writes. */
export interface SecretRegistry {
  add(value: string | undefined): void;
  /** Replaces every registered secret inside `text`. */
  scrub(text: string): string;
  /**
   * `value` with secrets scrubbed from every string: the same value when it holds none, else a
   * copy of the arrays and objects that do (the others are shared with `value`).
   */
  scrubValue<T>(value: T): T;
}

/** Shortest encoded form worth scrubbing: shorter ones would match ordinary text. */
const MIN_SPELLING_LENGTH = 6;

/**
 * The base64 text of `value` wherever it sits in an encoded stream: at each of the three byte
 * alignments, the characters that depend on its bytes alone (a header such as
 * `Bearer <secret>` encoded whole holds the secret's bytes at some offset, not at a 3-byte
 * boundary).
 */
function base64Cores(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const cores: string[] = [];
  for (let offset = 0; offset < 3; offset += 1) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    // Groups of 3 bytes (4 characters) made only of the secret's bytes.
    const firstGroup = Math.ceil(offset / 3);
    const endGroup = Math.floor((offset + bytes.length) / 3);
    if (endGroup > firstGroup) cores.push(encoded.slice(firstGroup * 4, endGroup * 4));
  }
  return cores;
}

/**
 * The ways a secret can be spelled in text we did not write: as given, percent-encoded
 * (a URL, or a form echoed back by a server, where a space may also be `+`), escaped inside a
 * JSON string, in upper and lower case, in hex (either case), and in base64 and base64url at
 * any alignment (a server echoing an `Authorization` header encoded).
 */
export function secretSpellings(value: string): string[] {
  const hex = Buffer.from(value, 'utf8').toString('hex');
  const cores = base64Cores(value);
  const spellings = new Set([
    value,
    encodeURIComponent(value),
    new URLSearchParams({ s: value }).toString().slice(2),
    JSON.stringify(value).slice(1, -1),
    value.toUpperCase(),
    value.toLowerCase(),
    hex,
    hex.toUpperCase(),
    ...cores,
    ...cores.map((core) => core.replaceAll('+', '-').replaceAll('/', '_')),
  ]);
  return [...spellings].filter((spelling) => spelling === value || spelling.length >= MIN_SPELLING_LENGTH);
}

export function createSecretRegistry(): SecretRegistry {
  const secrets = new Set<string>();
  // Longest first: a spelling inside a longer one (a base64 core inside the padded text) must not cut it first.
  let ordered: string[] = [];
  // A text shorter than every spelling holds none: most texts of an event (a type, a path, a status) are.
  let shortest = Infinity;
  const scrub = (text: string): string => {
    if (text.length < shortest) return text;
    let out = text;
    for (const secret of ordered) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  };
  /**
   * `value` itself when no string in it holds a secret; otherwise a copy of each array and object
   * on the way to a string that does. Every journal append, step result and log line passes
   * here: a deep copy of each (as this was) was a fifth of a quick step's CPU time in a run with a
   * client secret registered, which every run against the platform has.
   */
  const scrubbed = (value: unknown): unknown => {
    if (typeof value === 'string') return scrub(value);
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      for (let index = 0; index < value.length; index += 1) {
        const item: unknown = value[index];
        const clean = scrubbed(item);
        if (clean !== item) (copy ??= [...value])[index] = clean;
      }
      return copy ?? value;
    }
    let copy: Record<string, unknown> | undefined;
    // `for in` walks the keys without making an array of them (own ones only, as Object.keys).
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      const item = (value as Record<string, unknown>)[key];
      const clean = scrubbed(item);
      if (clean !== item) (copy ??= { ...value })[key] = clean;
    }
    return copy ?? value;
  };
  return {
    // Very short values would scrub ordinary words; they are not worth hiding by value.
    add: (value) => {
      if (!value || value.length < 4) return;
      const before = secrets.size;
      for (const spelling of secretSpellings(value)) secrets.add(spelling);
      if (secrets.size === before) return;
      ordered = [...secrets].sort((a, b) => b.length - a.length);
      shortest = ordered.at(-1)?.length ?? Infinity;
    },
    scrub,
    scrubValue: <T>(value: T): T => (secrets.size === 0 ? value : (scrubbed(value) as T)),
  };
}

export interface LoggerOptions {
  /** @default 'info' */
  level?: LevelWithSilent;
  /** Where JSON lines go. @default standard error */
  destination?: DestinationStream;
  secrets?: SecretRegistry;
  /** Fields on every line, e.g. `{ runId }`. */
  base?: Record<string, unknown>;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const secrets = options.secrets;
  return pino(
    {
      level: options.level ?? 'info',
      base: options.base ?? {},
      // The root's fields and every line's object; a child's bindings are the engine's own ids.
      formatters: {
        bindings: (bindings) => withoutSecretKeys(bindings),
        log: secrets
          ? (object: Record<string, unknown>) => secrets.scrubValue(withoutSecretKeys(object))
          : (object: Record<string, unknown>) => withoutSecretKeys(object),
      },
      hooks: secrets
        ? {
            logMethod(args, method) {
              method.apply(
                this,
                args.map((arg: unknown) => (typeof arg === 'string' ? secrets.scrub(arg) : arg)) as Parameters<
                  typeof method
                >,
              );
            },
          }
        : {},
    },
    options.destination ?? pino.destination(2),
  );
}
