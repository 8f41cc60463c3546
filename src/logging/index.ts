/**
 * One pino logger passed down; children add `runId`, `stepId`, `attempt`. Secrets are
 * removed twice: by key (credentials and tokens wherever they sit in an object) and by
 * value (any registered secret string, e.g. a `secret: true` playbook input, wherever it
 * appears inside a logged string).
 */
import { pino, type Logger, type DestinationStream, type LevelWithSilent } from 'pino';

export type { Logger } from 'pino';

/** Object keys whose values are always secret, at any depth pino redaction reaches. */
const secretKeys = [
  'clientSecret',
  'client_secret',
  'access_token',
  'accessToken',
  'token',
  'password',
  'authorization',
  'Authorization',
];
const redactPaths = secretKeys.flatMap((key) => [key, `*.${key}`, `*.*.${key}`]);

export const REDACTED = '[REDACTED]';

/**
 * Deep copy of `value` with the value of every secret key (the keys the logger redacts) at
 * any depth replaced by `[REDACTED]`: for records kept outside a logger, such as the
 * simulator's request log of request bodies.
 */
export function withoutSecretKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item: unknown) => withoutSecretKeys(item)) as T;
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      secretKeys.includes(key) ? REDACTED : withoutSecretKeys(item as unknown),
    ]),
  ) as T;
}

/** The set of secret values a logger scrubs from every string it writes. */
export interface SecretRegistry {
  add(value: string | undefined): void;
  /** Replaces every registered secret inside `text`. */
  scrub(text: string): string;
  /** Deep copy of `value` with secrets scrubbed from every string. */
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
  const scrub = (text: string): string => {
    let out = text;
    for (const secret of ordered) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  };
  const scrubValue = <T>(value: T): T => {
    if (secrets.size === 0) return value;
    if (typeof value === 'string') return scrub(value) as T;
    if (Array.isArray(value)) return value.map((item: unknown) => scrubValue(item)) as T;
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) out[key] = scrubValue(item);
      return out as T;
    }
    return value;
  };
  return {
    // Very short values would scrub ordinary words; they are not worth hiding by value.
    add: (value) => {
      if (!value || value.length < 4) return;
      const before = secrets.size;
      for (const spelling of secretSpellings(value)) secrets.add(spelling);
      if (secrets.size !== before) ordered = [...secrets].sort((a, b) => b.length - a.length);
    },
    scrub,
    scrubValue,
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
      redact: { paths: redactPaths, censor: REDACTED },
      formatters: secrets ? { log: (object: Record<string, unknown>) => secrets.scrubValue(object) } : {},
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
