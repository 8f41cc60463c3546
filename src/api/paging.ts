/**
 * Paging over `offset` / `limit` as an async iterator of items. One page is held at a time;
 * the next is fetched only when the consumer has taken every item of the current one.
 */
import type { CallInput } from './build-request.js';
import { InvalidResponseError } from './errors.js';
import type { CallOptions, RequestExecutor } from './request-executor.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Yields every item of a list operation, page by page. The page size is the input's
 * `limit`, else the operation's paging maximum; a given `offset` is where it starts. Stops
 * at `total`, at an empty page, or (without `total`) at a short page. A list answering a
 * bare array, or an operation without `offset`, is one request.
 */
export async function* paginate(
  executor: RequestExecutor,
  operationId: string,
  input: CallInput = {},
  options: CallOptions = {},
): AsyncGenerator<unknown, void, undefined> {
  const operation = executor.operation(operationId);
  const takes = (name: string): boolean => operation.queryParams.some((param) => param.name === name);
  const pageable = takes('offset');
  const limit = typeof input.limit === 'number' ? input.limit : takes('limit') ? operation.paging?.max : undefined;
  let offset = typeof input.offset === 'number' ? input.offset : 0;
  for (;;) {
    const pageInput: CallInput = {
      ...input,
      ...(pageable ? { offset } : {}),
      ...(limit === undefined ? {} : { limit }),
    };
    const { body } = await executor.call(operationId, pageInput, options);
    if (Array.isArray(body)) {
      yield* body as unknown[];
      return;
    }
    if (!isRecord(body) || !Array.isArray(body.items)) {
      throw new InvalidResponseError(
        `${operationId} did not answer a list (no \`items\` array); it cannot be paged.`,
        'NOT_A_LIST',
        {
          operationId,
          retryable: false,
        },
      );
    }
    const items = body.items as unknown[];
    const total = typeof body.total === 'number' ? body.total : undefined;
    yield* items;
    if (!pageable || items.length === 0) return;
    offset += items.length;
    if (total !== undefined ? offset >= total : limit === undefined || items.length < limit) return;
  }
}
