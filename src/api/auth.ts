/**
 * OAuth2 client credentials: one cached token per client, renewed ahead of its
 * `expires_in`, fetched by one request however many calls wait for it. The secret and the
 * token never enter a log line or an error message.
 */
import type { Dispatcher } from 'undici';
import { createSecretRegistry, type Logger, type SecretRegistry } from '../logging/index.js';
import { untilAborted } from '../timers/index.js';
import { ApiError, asFinal, createHttpError, InvalidResponseError } from './errors.js';
import { withRetry, type RetryPolicy } from './retry.js';
import { readText, sendRequest } from './transport.js';

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

/** Path of the token endpoint under `authUrl`. */
export const TOKEN_PATH = '/as/token.oauth2';
const TOKEN_OPERATION = 'auth.createToken';
/** Renew this long before expiry, or a third of the lifetime for short tokens. */
const REFRESH_MARGIN_MS = 5 * 60_000;

export interface TokenProviderOptions {
  credentials: ClientCredentials;
  authUrl: string;
  dispatcher?: Dispatcher | undefined;
  retry: RetryPolicy;
  /** Time allowed for the token endpoint to answer, in ms. */
  requestTimeoutMs: number;
  logger?: Logger | undefined;
}

export interface TokenProvider {
  /** A bearer token valid for a while yet, fetched if none is cached or it is due for renewal. */
  getToken(signal?: AbortSignal): Promise<string>;
  /** Forgets `token` if it is still the cached one (a 401 said it is no longer good). */
  invalidate(token: string): void;
}

interface CachedToken {
  value: string;
  /** When to fetch a new one; `Infinity` when the endpoint gave no lifetime (renewed on a 401 only). */
  renewAt: number;
}

/** When a token obtained at `now` with `expiresInSeconds` should be renewed. */
export function renewalTime(now: number, expiresInSeconds: number | undefined): number {
  if (expiresInSeconds === undefined) return Infinity;
  const lifetimeMs = expiresInSeconds * 1000;
  return now + lifetimeMs - Math.min(REFRESH_MARGIN_MS, lifetimeMs / 3);
}

/** The shared fetch goes on for the other callers; only this caller stops waiting. */
function waitFor<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  return signal ? untilAborted(promise, signal) : promise;
}

/** One request to the token endpoint; its answer as a cached token, or the error it makes. */
async function requestToken(
  options: TokenProviderOptions,
  url: string,
  secretScrubber: SecretRegistry,
): Promise<CachedToken> {
  const { credentials, logger } = options;
  const form = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: credentials.clientId,
    client_secret: credentials.clientSecret,
  }).toString();
  const startedAt = Date.now();
  const response = await sendRequest({
    operationId: TOKEN_OPERATION,
    // Asking for a token twice is harmless: its failures are retried like a read's.
    write: false,
    url,
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: form,
    dispatcher: options.dispatcher,
    timeoutMs: options.requestTimeoutMs,
  });
  const text = await readText(
    response.body,
    { operationId: TOKEN_OPERATION, write: false },
    response.status >= 400 ? 16_384 : Infinity,
  );
  logger?.debug(
    { operationId: TOKEN_OPERATION, httpStatus: response.status, durationMs: Date.now() - startedAt },
    'token request answered',
  );
  if (response.status >= 400) {
    const refused = response.status === 400 || response.status === 401;
    throw createHttpError({
      operationId: TOKEN_OPERATION,
      status: response.status,
      // An endpoint echoing the form back must not carry the secret into the error.
      bodyText: secretScrubber.scrub(text),
      headers: response.headers,
      write: false,
      ...(refused
        ? {
            advice: `The token endpoint refused the credentials of API client '${credentials.clientId}': check the client id and secret (FLEETBOOK_CLIENT_ID, FLEETBOOK_CLIENT_SECRET) and that the client is not revoked.`,
          }
        : {}),
    });
  }
  return tokenFromAnswer(response.status, text);
}

/** The token and its renewal time from a successful answer's body. */
function tokenFromAnswer(status: number, text: string): CachedToken {
  let parsed: { access_token?: unknown; expires_in?: unknown };
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    parsed = {};
  }
  // Never quote the body here: it holds the token.
  if (typeof parsed.access_token !== 'string' || parsed.access_token.length === 0) {
    throw new InvalidResponseError(
      `The token endpoint answered HTTP ${status} without an access_token; check FLEETBOOK_AUTH_URL.`,
      'INVALID_TOKEN_RESPONSE',
      {
        operationId: TOKEN_OPERATION,
        status,
        retryable: false,
      },
    );
  }
  const expiresIn = typeof parsed.expires_in === 'number' ? parsed.expires_in : Number(parsed.expires_in);
  return {
    value: parsed.access_token,
    renewAt: renewalTime(Date.now(), Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : undefined),
  };
}

export function createTokenProvider(options: TokenProviderOptions): TokenProvider {
  const { credentials, logger } = options;
  const url = new URL(
    TOKEN_PATH.slice(1),
    options.authUrl.endsWith('/') ? options.authUrl : `${options.authUrl}/`,
  ).toString();
  const secretScrubber = createSecretRegistry();
  secretScrubber.add(credentials.clientSecret);
  let cached: CachedToken | undefined;
  let inflight: Promise<CachedToken> | undefined;

  const requestOnce = (): Promise<CachedToken> => requestToken(options, url, secretScrubber);

  const fetchToken = (): Promise<CachedToken> =>
    withRetry(() => requestOnce(), {
      policy: options.retry,
      onRetry: (error, attempt, delayMs) =>
        logger?.warn(
          {
            operationId: TOKEN_OPERATION,
            attempt,
            delayMs,
            httpStatus: error instanceof ApiError ? error.status : undefined,
            code: error instanceof ApiError ? error.code : undefined,
          },
          'token request failed; retrying',
        ),
    }).catch((error: unknown) => {
      // The token endpoint had its retries; the waiting call must not multiply them.
      throw error instanceof ApiError ? asFinal(error) : error;
    });

  return {
    getToken(signal) {
      if (cached && Date.now() < cached.renewAt) return Promise.resolve(cached.value);
      if (!inflight) {
        inflight = fetchToken()
          .then((token) => {
            cached = token;
            return token;
          })
          .finally(() => {
            inflight = undefined;
          });
      }
      return waitFor(
        inflight.then((token) => token.value),
        signal,
      );
    },
    invalidate(token) {
      if (cached?.value === token) cached = undefined;
    },
  };
}
