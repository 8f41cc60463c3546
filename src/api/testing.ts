/**
 * Test support for the client's unit tests: a `MockAgent` with the network disabled, a
 * token endpoint that counts its requests and hands out numbered tokens, and a client
 * wired to both with millisecond retry delays.
 */
import { Writable } from 'node:stream';
import { MockAgent, type MockPool } from 'undici';
import { createLogger, type Logger } from '../logging/index.js';
import { loadPlatformDescription } from '../openapi/index.js';
import { createPlatformClient, type PlatformClient, type PlatformClientOptions } from './client.js';

export const testUrls = {
  authUrl: 'https://auth.test',
  baseUrl: 'https://api.test',
  regionalUrl: 'https://{region}.api.test',
} as const;

export const testCredentials = { clientId: 'client-1234', clientSecret: 'very secret/value+0001@"x"' } as const;

export interface MockPlatform {
  agent: MockAgent;
  /** The pool of `{base_url}`. */
  global: MockPool;
  /** The pool of `{regional_url}` for a region. */
  regional(region: string): MockPool;
  /** Token requests answered so far. */
  tokenRequests(): number;
  /** Tokens issued so far, in order (`token-1`, `token-2`...). */
  issuedTokens(): string[];
  /** Answers the next token requests with `status` instead of a token, with a retry-info detail when given. */
  failTokenRequests(status: number, times: number, retryAfterSeconds?: number): void;
  client(overrides?: Partial<PlatformClientOptions>): PlatformClient;
}

function unlimitedGroups(): Record<string, number> {
  const groups = loadPlatformDescription().operations.flatMap((operation) =>
    operation.rateLimit ? [operation.rateLimit.group] : [],
  );
  return Object.fromEntries(groups.map((group) => [group, 60_000]));
}

export interface MockPlatformOptions {
  /** Time the token endpoint takes to answer, in ms (on fake timers in tests that set one). @default 0 */
  tokenDelayMs?: number;
}

export function createMockPlatform(tokenLifetimeSeconds = 7199, options: MockPlatformOptions = {}): MockPlatform {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const auth = agent.get(testUrls.authUrl);
  const issued: string[] = [];
  let requests = 0;
  let failures: { status: number; remaining: number; retryAfterSeconds: number | undefined } | undefined;
  const tokenInterceptor = auth
    .intercept({ path: '/as/token.oauth2', method: 'POST' })
    .reply<Record<string, unknown>>(() => {
      requests += 1;
      if (failures && failures.remaining > 0) {
        failures.remaining -= 1;
        const details =
          failures.retryAfterSeconds === undefined
            ? {}
            : { errorDetails: [{ type: 'retry info', retryAfterSeconds: failures.retryAfterSeconds }] };
        return {
          statusCode: failures.status,
          data: {
            httpStatusCode: failures.status,
            errorCode: 'TOKEN_FAILURE',
            message: 'token service trouble',
            ...details,
          },
        };
      }
      const token = `token-${issued.length + 1}`;
      issued.push(token);
      return { statusCode: 200, data: { access_token: token, token_type: 'Bearer', expires_in: tokenLifetimeSeconds } };
    });
  if (options.tokenDelayMs) tokenInterceptor.delay(options.tokenDelayMs);
  tokenInterceptor.persist();
  return {
    agent,
    global: agent.get(testUrls.baseUrl),
    regional: (region) => agent.get(testUrls.regionalUrl.replace('{region}', region)),
    tokenRequests: () => requests,
    issuedTokens: () => [...issued],
    failTokenRequests(status, times, retryAfterSeconds) {
      failures = { status, remaining: times, retryAfterSeconds };
    },
    client: (overrides = {}) =>
      createPlatformClient({
        ...testUrls,
        credentials: testCredentials,
        region: 'eu-central',
        dispatcher: agent,
        retry: { initialDelayMs: 1, maxDelayMs: 5 },
        // Published limits spread a minute over slices of seconds; tests about something
        // else must not wait for them. Rate-limit tests pass their own `rateLimits`.
        rateLimits: { perMinute: unlimitedGroups() },
        ...overrides,
      }),
  };
}

/**
 * A logger writing parsed JSON lines into memory, at every level. `onLine` sees each line as it
 * is logged (synchronously): a test can act at the moment something happened, in virtual time too.
 */
export function captureLogs(onLine?: (line: Record<string, unknown>) => void): {
  logger: Logger;
  lines: () => Array<Record<string, unknown>>;
  text: () => string;
} {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      if (onLine)
        for (const line of String(chunk).split('\n').filter(Boolean))
          onLine(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const text = (): string => chunks.join('');
  return {
    logger: createLogger({ destination, level: 'trace' }),
    text,
    lines: () =>
      text()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/** JSON of an error with everything a log or a report could show of it: message, stack, fields, causes. */
export function serialiseError(error: unknown): string {
  const seen = new Set<unknown>();
  const walk = (value: unknown): unknown => {
    if (value instanceof Error) {
      if (seen.has(value)) return '[seen]';
      seen.add(value);
      return {
        ...Object.fromEntries(Object.entries(value)),
        name: value.name,
        message: value.message,
        stack: value.stack,
        cause: walk(value.cause),
      };
    }
    return value;
  };
  return JSON.stringify(walk(error));
}
