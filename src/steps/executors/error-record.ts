import { ApiError } from '../../api/index.js';
import { isFleetbookError } from '../../errors/index.js';
import type { ErrorRecord } from '../../store/index.js';
import { isStepError } from './step-error.js';

/** An error as the journal, step outputs and expressions (`steps.x.error`) see it: plain JSON. */
export function toErrorRecord(error: unknown): ErrorRecord {
  if (error instanceof ApiError) {
    return {
      message: error.message,
      code: error.code,
      operationId: error.operationId,
      ...(error.status === undefined ? {} : { httpStatus: error.status }),
      ...(error.body?.raw === undefined ? {} : { details: error.body.raw }),
    };
  }
  if (isStepError(error)) {
    return {
      message: error.message,
      code: error.code,
      ...(error.httpStatus === undefined ? {} : { httpStatus: error.httpStatus }),
      ...(error.operationId === undefined ? {} : { operationId: error.operationId }),
      ...(error.details === undefined ? {} : { details: error.details }),
    };
  }
  if (isFleetbookError(error))
    return { message: error.message, code: error.code, ...(error.details ? { details: error.details } : {}) };
  if (error instanceof Error) return { message: error.message, code: error.name === 'Error' ? 'ERROR' : error.name };
  return { message: String(error), code: 'ERROR' };
}
