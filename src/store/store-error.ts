import { ExitCode, FleetbookError } from '../errors/index.js';

/** Why a store call was refused. Stable identifiers for scripts and tests. */
export const StoreErrorCode = {
  runNotFound: 'RUN_NOT_FOUND',
  runExists: 'RUN_EXISTS',
  payloadTooLarge: 'PAYLOAD_TOO_LARGE',
  invalidArgument: 'STORE_INVALID_ARGUMENT',
  /** The store file was written by a newer Fleetbook: refusing beats corrupting it. */
  storeTooNew: 'STORE_TOO_NEW',
  /** The file is not a store Fleetbook can open (not SQLite, no permission). */
  storeUnreadable: 'STORE_UNREADABLE',
  storeClosed: 'STORE_CLOSED',
  /** A write carrying the fencing token of a claim another worker has since taken over. */
  staleFence: 'STALE_FENCE',
  /** The store's server cannot be used at all (wrong URL, refused password, unreachable): nothing started. */
  storeUnreachable: 'STORE_UNREACHABLE',
  /** The store's server failed once in use (gone, restarted): the run stops where its journal is. */
  storeUnavailable: 'STORE_UNAVAILABLE',
  /** An API token with that name (or id) exists already. */
  tokenExists: 'TOKEN_EXISTS',
} as const;
export type StoreErrorCode = (typeof StoreErrorCode)[keyof typeof StoreErrorCode];

/** Exit 2 for what the operator must fix (a newer store, a bad argument); 1 otherwise. */
const usageCodes: ReadonlySet<StoreErrorCode> = new Set([
  StoreErrorCode.storeTooNew,
  StoreErrorCode.storeUnreadable,
  StoreErrorCode.storeUnreachable,
  StoreErrorCode.invalidArgument,
  StoreErrorCode.tokenExists,
]);

/** A store call that cannot be honoured; the message says what to do about it. */
export class StoreError extends FleetbookError {
  declare readonly code: StoreErrorCode;

  constructor(message: string, code: StoreErrorCode, details?: Record<string, unknown>) {
    super(message, { code, exitCode: usageCodes.has(code) ? ExitCode.usage : ExitCode.runFailed, details });
    this.name = 'StoreError';
  }
}

export function isStoreError(error: unknown): error is StoreError {
  return error instanceof StoreError;
}
