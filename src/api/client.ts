/**
 * `createPlatformClient`: one client for every area of the platform, built from the
 * platform description. See ARCHITECTURE.md for the call path.
 */
import type { Dispatcher } from 'undici';
import { loadPlatformDescription } from '../openapi/index.js';
import type { Logger } from '../logging/index.js';
import { waitForOperation, type AsyncOperationResult, type WaitOptions } from './async-operations.js';
import { createTokenProvider, type ClientCredentials } from './auth.js';
import { buildRequest, type CallInput } from './build-request.js';
import { download, type DownloadDestination, type DownloadResult } from './download.js';
import { InvalidClientOptionsError } from './errors.js';
import {
  createRequestExecutor,
  type CallOptions,
  type CallResult,
  type OperationCatalogue,
} from './request-executor.js';
import type {
  AreaMethodsOf,
  InputArgs,
  ListItemOf,
  OperationId,
  OperationInput,
  OperationResponseBody,
} from './operation-types.js';
import type { operations } from './generated/platform.js';
import { paginate } from './paging.js';
import { createRateLimiter, type RateLimiterOptions, type SharedRateBudget } from './rate-limiter.js';
import { resolveRetryPolicy, type RetryPolicy } from './retry.js';
import type { Clock } from '../timers/index.js';

export interface PlatformClientOptions {
  credentials: ClientCredentials;
  /** `{auth_url}`: the token service. */
  authUrl: string;
  /** `{base_url}`: devices, subscriptions, workspaces, users, reporting. */
  baseUrl: string;
  /**
   * `{regional_url}`: private cloud, data services, consumption analytics. A template with
   * `{region}`, or one URL for every region (the region then travels in `x-fleetbook-region`).
   */
  regionalUrl: string;
  /** Region of regional calls that name none. */
  region?: string;
  /** Per-minute caps by rate-limit group, and the cap of groups without a published limit. */
  rateLimits?: Pick<RateLimiterOptions, 'perMinute' | 'defaultPerMinute'>;
  /** Requests in flight at once across all groups. @default 16 */
  maxConcurrency?: number;
  /** A rate budget shared with other processes (the run store's buckets), on top of this client's own pacing. */
  sharedRateBudget?: SharedRateBudget;
  /** @default {@link defaultRetryPolicy} */
  retry?: Partial<RetryPolicy>;
  /** Time allowed for the response head of one attempt, then between two pieces of its body, in ms. @default 60_000 */
  requestTimeoutMs?: number;
  /** undici dispatcher (a `MockAgent` in tests). @default undici's global dispatcher */
  dispatcher?: Dispatcher;
  /** Logger; the client logs through children carrying `operationId`, `attempt`, `httpStatus`, `durationMs`. */
  logger?: Logger;
  /** The operations to serve. @default the platform description */
  catalogue?: OperationCatalogue;
  /** Time of the rate limiter and the call executor (pacing, retry delays, durations). @default systemClock */
  clock?: Clock;
}

/** A call's result, its body typed by the operation. */
export type TypedCallResult<K extends OperationId> = CallResult<OperationResponseBody<K>>;

export interface PlatformClient extends AreaMethodsOf<operations, CallOptions, Omit<CallResult, 'body'>> {
  /** Calls one operation by id, typed from the description. */
  call<K extends OperationId>(
    operationId: K,
    ...args: InputArgs<OperationInput<K>, CallOptions>
  ): Promise<TypedCallResult<K>>;
  /** `call` for ids known only at run time (playbook steps); the input is checked against the description. */
  invoke(operationId: string, input?: CallInput, options?: CallOptions): Promise<CallResult>;
  /** Every item of a list operation, a page at a time. */
  paginate<K extends OperationId>(
    operationId: K,
    input?: Partial<OperationInput<K>>,
    options?: CallOptions,
  ): AsyncGenerator<ListItemOf<K>, void, undefined>;
  /** Follows an async operation (a Location path or a 202 result) to its end. */
  waitForOperation(source: string | CallResult, options?: WaitOptions): Promise<AsyncOperationResult>;
  /** Streams an operation's answer (a CSV) to a file path (optionally summing CSV columns) or a writable stream. */
  download<K extends OperationId>(
    operationId: K,
    input: OperationInput<K>,
    destination: DownloadDestination,
    options?: CallOptions,
  ): Promise<DownloadResult>;
  /**
   * The request a call would send (method, URL, headers without credentials, body), checked
   * like a real call but not sent: what a dry run prints for a write.
   */
  describeRequest(operationId: string, input?: CallInput, options?: Pick<CallOptions, 'region'>): DescribedRequest;
  /** The operations this client serves. */
  readonly catalogue: OperationCatalogue;
}

/** A request as it would be sent; never carries the bearer token. */
export interface DescribedRequest {
  operationId: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  /** The parsed body (not its serialisation), when the call has one. */
  body?: unknown;
  region?: string;
}

function checkUrl(name: string, value: string | undefined): string {
  const probe = value?.replaceAll('{region}', 'region');
  if (!probe || !URL.canParse(probe) || !/^https?:$/.test(new URL(probe).protocol)) {
    throw new InvalidClientOptionsError(
      `Expected \`${name}\` to be an http(s) URL, got ${value === undefined ? 'nothing' : `'${value}'`}.`,
    );
  }
  return value as string;
}

type AreaMethod = (input?: CallInput, callOptions?: CallOptions) => Promise<CallResult>;

/** `client.<area>.<verbNoun>` for every callable operation of the catalogue. */
function areaMethods(
  catalogue: OperationCatalogue,
  invoke: (operationId: string, input?: CallInput, callOptions?: CallOptions) => Promise<CallResult>,
): Record<string, Record<string, AreaMethod>> {
  const areas: Record<string, Record<string, AreaMethod>> = {};
  for (const operation of catalogue.operations) {
    if (operation.base === 'auth') continue;
    const method = operation.id.slice(operation.area.length + 1);
    (areas[operation.area] ??= {})[method] = (input, callOptions) => invoke(operation.id, input, callOptions);
  }
  return areas;
}

export function createPlatformClient(options: PlatformClientOptions): PlatformClient {
  const { credentials } = options;
  if (!credentials?.clientId || !credentials.clientSecret) {
    throw new InvalidClientOptionsError(
      'Expected `credentials` with a clientId and a clientSecret (FLEETBOOK_CLIENT_ID, FLEETBOOK_CLIENT_SECRET).',
    );
  }
  const requestTimeoutMs = options.requestTimeoutMs ?? 60_000;
  if (!(requestTimeoutMs > 0))
    throw new InvalidClientOptionsError(
      `Expected \`requestTimeoutMs\` to be a number of ms above 0, got ${requestTimeoutMs}.`,
    );
  const retry = resolveRetryPolicy(options.retry);
  const catalogue = options.catalogue ?? loadPlatformDescription();
  const executor = createRequestExecutor({
    catalogue,
    addresses: {
      baseUrl: checkUrl('baseUrl', options.baseUrl),
      regionalUrl: checkUrl('regionalUrl', options.regionalUrl),
    },
    defaultRegion: options.region,
    tokens: createTokenProvider({
      credentials,
      authUrl: checkUrl('authUrl', options.authUrl),
      dispatcher: options.dispatcher,
      retry,
      requestTimeoutMs,
      logger: options.logger,
    }),
    limiter: createRateLimiter({
      ...options.rateLimits,
      ...(options.maxConcurrency === undefined ? {} : { maxConcurrency: options.maxConcurrency }),
      clock: options.clock,
    }),
    sharedBudget: options.sharedRateBudget,
    retry,
    requestTimeoutMs,
    dispatcher: options.dispatcher,
    logger: options.logger,
    clock: options.clock,
  });

  const invoke = (operationId: string, input: CallInput = {}, callOptions: CallOptions = {}): Promise<CallResult> =>
    executor.call(operationId, input, callOptions);

  const areas = areaMethods(catalogue, invoke);

  const addresses = { baseUrl: options.baseUrl, regionalUrl: options.regionalUrl };
  const describeRequest = (
    operationId: string,
    input: CallInput = {},
    callOptions: Pick<CallOptions, 'region'> = {},
  ): DescribedRequest => {
    const operation = executor.operation(operationId);
    const built = buildRequest(operation, input, addresses, callOptions.region ?? options.region);
    return {
      operationId,
      method: operation.method,
      url: built.url,
      headers: built.headers,
      ...(input.body === undefined ? {} : { body: input.body }),
      ...(built.region === undefined ? {} : { region: built.region }),
    };
  };

  const client = {
    ...areas,
    describeRequest,
    catalogue,
    invoke,
    call: (operationId: string, input?: CallInput, callOptions?: CallOptions) =>
      invoke(operationId, input, callOptions),
    paginate: (operationId: string, input?: CallInput, callOptions?: CallOptions) =>
      paginate(executor, operationId, input, callOptions),
    waitForOperation: (source: string | CallResult, waitOptions?: WaitOptions) =>
      waitForOperation(executor, source, waitOptions),
    download: (operationId: string, input: CallInput, destination: DownloadDestination, callOptions?: CallOptions) =>
      download(executor, operationId, input, destination, callOptions),
  };
  // The runtime table is built from the same description the types are generated from; the
  // catalogue test checks that every typed operation is present.
  return client as unknown as PlatformClient;
}
