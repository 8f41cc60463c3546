import type { SimRequest } from './context.js';

export interface ListEnvelope<T> {
  items: T[];
  count: number;
  offset: number;
  total: number;
}

function firstOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * One page of `items` in the platform's list envelope, from the request's `offset` and
 * `limit` (the range was already checked against the description; here only the default
 * applies). `limit=0` answers just the total, as the platform does.
 */
export function listPage<T>(items: readonly T[], req: SimRequest): ListEnvelope<T> {
  const offset = Number(firstOf(req.query.offset) ?? 0);
  const limitText = firstOf(req.query.limit);
  const limit = limitText === undefined ? (req.paging?.default ?? items.length) : Number(limitText);
  const page = items.slice(offset, offset + limit);
  return { items: page, count: page.length, offset, total: items.length };
}
