/** The public surface of the API client. */
export {
  createPlatformClient,
  type PlatformClient,
  type PlatformClientOptions,
  type TypedCallResult,
  type DescribedRequest,
} from './client.js';
export type { CallOptions, CallResult, OperationCatalogue } from './request-executor.js';
export type { CallInput } from './build-request.js';
export type { ClientCredentials } from './auth.js';
export { defaultRetryPolicy, type RetryPolicy } from './retry.js';
export type { RateLimiterOptions, SharedRateBudget } from './rate-limiter.js';
export {
  AsyncOutcome,
  terminalOutcome,
  type AsyncFlavour,
  type AsyncOperationFailure,
  type AsyncOperationRecord,
  type AsyncOperationResult,
  type WaitOptions,
} from './async-operations.js';
export type { DownloadDestination, DownloadResult, DownloadTarget } from './download.js';
export { f, type FilterLiteral, type FilterProperty, type OrderedLiteral } from './odata.js';
export type {
  ListItemOf,
  OperationId,
  OperationInput,
  OperationResponseBody,
  PlatformArea,
} from './operation-types.js';
export * from './errors.js';
export { ApiErrorCode } from './error-codes.js';
