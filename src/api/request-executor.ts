/**
 * The call path every request of the client takes: operation → address → rate limit →
 * auth → send → classify → retry (see ARCHITECTURE.md). Paging, async-operation waits and
 * downloads are built on `exchange`.
 */
import type { Dispatcher } from 'undici';
import type { OperationDescriptor } from '../openapi/index.js';
import type { Logger } from '../logging/index.js';
import { didYouMean } from '../errors/index.js';
import { buildRequest, type Addresses, type CallInput } from './build-request.js';
import type { TokenProvider } from './auth.js';
import {
  ApiError,
  createHttpError,
  InvalidResponseError,
  quotaRemaining,
  reportsQuotaSpent,
  retryAfterMsOf,
  serverLimitPerMinute,
  UnknownOperationError,
  type ResponseHeaders,
} from './errors.js';
import { burstOf, type RateLimiter, type SharedRateBudget } from './rate-limiter.js';
import { withRetry, type RetryPolicy } from './retry.js';
import { sleepOn, systemClock, type Clock } from '../timers/index.js';
import { readText, sendRequest, type IncomingResponse } from './transport.js';

export interface CallOptions {
  /** Region of a regional operation. @default the client's `region` */
  region?: string | undefined;
  signal?: AbortSignal | undefined;
  /**
   * Declares a write safe to repeat, so it is retried like a read (network errors, 408,
   * 5xx). @default false
   */
  idempotent?: boolean | undefined;
  /**
   * `false`: one attempt, no retry by the client. For callers that retry with a policy of
   * their own (a playbook step), so the two retry loops do not multiply. @default true
   */
  retries?: boolean | undefined;
}

export interface CallResult<B = unknown> {
  status: number;
  headers: ResponseHeaders;
  /** Parsed JSON, text for other content types, `undefined` when empty. */
  body: B;
  operation: OperationDescriptor;
  /** The region a regional call went to. */
  region?: string;
}

/** What `exchange` hands to its consumer along with a success response. */
export interface ExchangeContext {
  operation: OperationDescriptor;
  region: string | undefined;
  attempt: number;
  /** Whether the call counts as a write (decides whether a failure reading its body is retryable). */
  write: boolean;
}

/** The operations of the platform description the client works from. */
export interface OperationCatalogue {
  operations: readonly OperationDescriptor[];
  byId: ReadonlyMap<string, OperationDescriptor>;
}

export interface RequestExecutorOptions {
  catalogue: OperationCatalogue;
  addresses: Addresses;
  defaultRegion: string | undefined;
  tokens: TokenProvider;
  limiter: RateLimiter;
  /** The budget shared with other processes, on top of `limiter`'s own pacing. */
  sharedBudget?: SharedRateBudget | undefined;
  retry: RetryPolicy;
  requestTimeoutMs: number;
  dispatcher: Dispatcher | undefined;
  logger: Logger | undefined;
  /** Time of the calls: waits for the shared budget, durations, retry delays. @default systemClock */
  clock?: Clock | undefined;
}

export interface RequestExecutor {
  readonly catalogue: OperationCatalogue;
  /** The client's time: what paging and async-operation waits wait on too. */
  readonly clock: Clock;
  /** The operation by id; an unknown id is an error naming close matches. */
  operation(operationId: string): OperationDescriptor;
  /**
   * Sends the call with retries, and hands each success response to `consume`, whose
   * result is returned. `consume` may throw a retryable error to have the call repeated.
   */
  exchange<T>(
    operationId: string,
    input: CallInput,
    options: CallOptions,
    consume: (response: IncomingResponse, context: ExchangeContext) => Promise<T>,
    accept?: string,
  ): Promise<T>;
  /** One call, the body read as JSON or text. */
  call(operationId: string, input: CallInput, options: CallOptions): Promise<CallResult>;
}

/** Error bodies are read up to this size: enough for any platform error, bounded for HTML pages. */
const MAX_ERROR_BODY_CHARS = 16_384;

/** JSON when declared (or undeclared and parseable), text otherwise, `undefined` when empty. */
function parseBody(operationId: string, status: number, contentType: string | undefined, text: string): unknown {
  if (text.length === 0) return undefined;
  const declaredJson = contentType !== undefined && /[/+]json\b/i.test(contentType);
  if (contentType !== undefined && !declaredJson) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    if (!declaredJson) return text;
    throw new InvalidResponseError(
      `${operationId} answered HTTP ${status} with a body that is not valid JSON.`,
      'INVALID_RESPONSE',
      {
        operationId,
        status,
        retryable: false,
        cause: error,
      },
    );
  }
}

/** One exchange's fixed parts: what every attempt of it sends and where it counts. */
interface Exchange {
  options: RequestExecutorOptions;
  clock: Clock;
  op: OperationDescriptor;
  operationId: string;
  built: ReturnType<typeof buildRequest>;
  write: boolean;
  /** The rate-limit group the call is paced in. */
  group: string;
  signal: AbortSignal | undefined;
}

export function createRequestExecutor(options: RequestExecutorOptions): RequestExecutor {
  const { catalogue, limiter, logger } = options;
  const clock = options.clock ?? systemClock;
  const operation = operationLookup(catalogue);

  // Async so that an unknown operation is a rejected promise, as every other failure is.
  async function exchange<T>(
    operationId: string,
    input: CallInput,
    callOptions: CallOptions,
    consume: (response: IncomingResponse, context: ExchangeContext) => Promise<T>,
    accept?: string,
  ): Promise<T> {
    const op = operation(operationId);
    const built = buildRequest(op, input, options.addresses, callOptions.region ?? options.defaultRegion);
    if (accept) built.headers.accept = accept;
    const write = op.isWrite && !callOptions.idempotent;
    const group = op.rateLimit?.group ?? op.area;
    const signal = callOptions.signal;
    const call: Exchange = { options, clock, op, operationId, built, write, group, signal };

    const attemptOnce = async (attempt: number): Promise<T> => {
      await takeSharedBudget(call);
      const startedAt = clock.now();
      const response = await sendAuthorised(call);
      logger?.debug(
        { operationId, attempt, httpStatus: response.status, durationMs: clock.now() - startedAt },
        'platform answered',
      );
      // The server's own statement of the group's limit is the pace to keep, whatever was published or configured.
      const stated = serverLimitPerMinute(response.headers);
      if (stated !== undefined) limiter.adoptServerLimit(group, stated, quotaRemaining(response.headers));
      if (response.status < 200 || response.status >= 300) throw await refusal(call, response, startedAt);
      // A success that spent the quota: every process holds off the group until the window resets.
      if (options.sharedBudget && reportsQuotaSpent(response.headers)) {
        const resetMs = retryAfterMsOf(undefined, response.headers, clock.now());
        if (resetMs !== undefined && resetMs > 0) pushShared(call, resetMs);
      }
      return consume(response, { operation: op, region: built.region, attempt, write });
    };

    return withRetry(
      (attempt) => limiter.schedule(group, op.rateLimit?.perMinute, () => attemptOnce(attempt), signal),
      {
        policy: callOptions.retries === false ? { ...options.retry, maxAttempts: 1 } : options.retry,
        signal,
        clock,
        onRetry: (error, attempt, delayMs) =>
          logger?.warn(
            {
              operationId,
              attempt,
              delayMs,
              httpStatus: error instanceof ApiError ? error.status : undefined,
              code: error instanceof ApiError ? error.code : undefined,
            },
            'platform call failed; retrying',
          ),
      },
    );
  }

  const call: RequestExecutor['call'] = (operationId, input, callOptions) =>
    exchange(operationId, input, callOptions, async (response, context) => ({
      status: response.status,
      headers: response.headers,
      body: parseBody(
        operationId,
        response.status,
        response.headers['content-type'],
        await readText(response.body, { operationId, write: context.write }),
      ),
      operation: context.operation,
      ...(context.region === undefined ? {} : { region: context.region }),
    }));

  return { catalogue, clock, operation, exchange, call };
}

/** The callable operation by id; an unknown id (or the token endpoint's) is an error naming close matches. */
function operationLookup(catalogue: OperationCatalogue): (operationId: string) => OperationDescriptor {
  const callable = catalogue.operations
    .filter((operation) => operation.base !== 'auth')
    .map((operation) => operation.id);
  return (operationId) => {
    const found = catalogue.byId.get(operationId);
    if (!found) {
      throw new UnknownOperationError(
        `Unknown operation '${operationId}'.${didYouMean(operationId, callable)} Run \`fleetbook actions\` for the list.`,
      );
    }
    if (found.base === 'auth') {
      throw new UnknownOperationError(
        `${operationId} is not callable: the client obtains and renews tokens itself, and a token must never become a step output.`,
      );
    }
    return found;
  };
}

/** The request sent with `token`. */
function send(call: Exchange, token: string): Promise<IncomingResponse> {
  const { options, built } = call;
  return sendRequest({
    operationId: call.operationId,
    write: call.write,
    url: built.url,
    method: call.op.method,
    headers: { ...built.headers, authorization: `Bearer ${token}` },
    ...(built.body === undefined ? {} : { body: built.body }),
    dispatcher: options.dispatcher,
    timeoutMs: options.requestTimeoutMs,
    signal: call.signal,
  });
}

/** Sends the request with the cached token, and once more with a new one after a 401. */
async function sendAuthorised(call: Exchange): Promise<IncomingResponse> {
  const { tokens } = call.options;
  const token = await tokens.getToken(call.signal);
  const response = await send(call, token);
  if (response.status !== 401) return response;
  // The token may have been revoked or expired early: renew it once and repeat.
  await response.body.dump();
  tokens.invalidate(token);
  return send(call, await tokens.getToken(call.signal));
}

/** The group's pace in force here (its cap, lowered by 429s), for the shared bucket. */
function pace(call: Exchange): { perMinute: number; burst: number } {
  const perMinute = call.options.limiter.currentCap(call.group) ?? call.op.rateLimit?.perMinute ?? 600;
  return { perMinute, burst: burstOf(perMinute) };
}

/** Waits for the budget shared with other processes, when there is one and the group is capped. */
async function takeSharedBudget(call: Exchange): Promise<void> {
  const shared = call.options.sharedBudget;
  if (!shared) return;
  const { perMinute, burst } = pace(call);
  if (!Number.isFinite(perMinute)) return;
  const waitMs = await shared.take(call.group, perMinute, burst);
  if (waitMs > 0) await sleepOn(call.clock, waitMs, call.signal);
}

/** Tells the other processes to hold off the group for `ms`. */
function pushShared(call: Exchange, ms: number): void {
  const shared = call.options.sharedBudget;
  if (!shared) return;
  const { perMinute, burst } = pace(call);
  // A failure to push is the other processes' loss of a hint, not this call's failure.
  shared
    .push(call.group, ms, perMinute, burst)
    .catch((error: unknown) =>
      call.options.logger?.warn({ operationId: call.operationId, err: error }, 'could not share a rate-limit pause'),
    );
}

/** The error a non-2xx answer makes; a 429 also pauses the group, here and in the other processes. */
async function refusal(call: Exchange, response: IncomingResponse, startedAt: number): Promise<ApiError> {
  const { options, operationId, write, op } = call;
  const error = createHttpError({
    operationId,
    status: response.status,
    bodyText: await readText(response.body, { operationId, write }, MAX_ERROR_BODY_CHARS),
    headers: response.headers,
    write,
    ...(op.permission ? { permission: op.permission } : {}),
  });
  if (response.status === 429) {
    // The pause honours the server's hint. The group slows down (its cap halved) only when
    // the answer reports the quota spent: a 429 without that (an overloaded front end, an
    // injected fault) says nothing about the pace, and halving on each of those would
    // sink the cap of a busy group however fast the platform recovers.
    options.limiter.pauseGroup(call.group, error.retryAfterMs ?? options.retry.initialDelayMs, {
      sentAt: startedAt,
      slowDown: reportsQuotaSpent(response.headers),
    });
    pushShared(call, error.retryAfterMs ?? options.retry.initialDelayMs);
  }
  return error;
}
