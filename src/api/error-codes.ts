/** The codes of the API client's errors (`ApiError.code` and the usage errors of the client). docs/errors.md says what each means. */
export const ApiErrorCode = {
  badRequest: 'BAD_REQUEST',
  unauthorized: 'UNAUTHORIZED',
  forbidden: 'FORBIDDEN',
  notFound: 'NOT_FOUND',
  conflict: 'CONFLICT',
  preconditionFailed: 'PRECONDITION_FAILED',
  unprocessableEntity: 'UNPROCESSABLE_ENTITY',
  rateLimited: 'RATE_LIMITED',
  unavailableForLegalReasons: 'UNAVAILABLE_FOR_LEGAL_REASONS',
  serverError: 'SERVER_ERROR',
  connectionFailed: 'CONNECTION_FAILED',
  requestTimeout: 'REQUEST_TIMEOUT',
  invalidResponse: 'INVALID_RESPONSE',
  invalidTokenResponse: 'INVALID_TOKEN_RESPONSE',
  notAList: 'NOT_A_LIST',
  downloadInterrupted: 'DOWNLOAD_INTERRUPTED',
  csvColumnNotFound: 'CSV_COLUMN_NOT_FOUND',
  waitDeadlineExceeded: 'WAIT_DEADLINE_EXCEEDED',
  unknownOperation: 'UNKNOWN_OPERATION',
  unknownRegion: 'UNKNOWN_REGION',
  invalidInput: 'INVALID_INPUT',
  invalidClientOptions: 'INVALID_CLIENT_OPTIONS',
  unfollowableOperation: 'UNFOLLOWABLE_OPERATION',
  invalidFilter: 'INVALID_FILTER',
} as const;
/** A code of the table, or `HTTP_<status>` for a status it has no name for. */
export type ApiErrorCode = (typeof ApiErrorCode)[keyof typeof ApiErrorCode] | `HTTP_${number}`;
