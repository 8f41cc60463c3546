/**
 * `filter`, `sort`, `offset` and `limit` of a list operation, applied in that order. One
 * query object per list caches its compiled filters and sorts by text, so a client paging
 * through a list with the same filter compiles it once.
 */
import type { SimRequest } from '../context.js';
import { badRequest } from '../errors.js';
import { listPage, type ListEnvelope } from '../paging.js';
import { compileFilter, type CompileFilterOptions, type FilterPredicate } from './compile-filter.js';
import { compileSort, type SortComparator } from './compile-sort.js';
import type { PropertySchema } from './property-schema.js';

export interface ListQueryOptions {
  /** Properties `filter` may name; without it the list takes no `filter`. */
  filter?: PropertySchema;
  /** Operators and functions the filter accepts. @default all operators, no functions */
  filterOptions?: CompileFilterOptions;
  /** Properties `sort` may name; without it the list takes no `sort`. */
  sort?: PropertySchema;
}

export interface ListQuery {
  /** The items `filter` and `sort` of `req` select, in order (no paging). */
  select<T>(items: readonly T[], req: SimRequest): readonly T[];
  /** `select`, then one page in the list envelope. */
  page<T>(items: readonly T[], req: SimRequest): ListEnvelope<T>;
}

/** Compiled expressions kept per list; enough for every client's recurring queries. */
const CACHE_SIZE = 64;

function firstOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function cached<V>(compile: (text: string) => V): (text: string) => V {
  const cache = new Map<string, V>();
  return (text) => {
    let value = cache.get(text);
    if (value === undefined) {
      value = compile(text);
      if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
      cache.set(text, value);
    }
    return value;
  };
}

function unsupported(parameter: string): Error {
  return badRequest(`This list does not support ${parameter}`, [
    { source: 'query.parameter', subject: parameter, description: `${parameter} is not supported on this list` },
  ]);
}

export function createListQuery(options: ListQueryOptions): ListQuery {
  const { filter: filterSchema, sort: sortSchema } = options;
  const predicateOf = filterSchema
    ? cached<FilterPredicate>((text) => compileFilter(text, filterSchema, options.filterOptions))
    : undefined;
  const comparatorOf = sortSchema ? cached<SortComparator>((text) => compileSort(text, sortSchema)) : undefined;
  const select = <T>(items: readonly T[], req: SimRequest): readonly T[] => {
    const filterText = firstOf(req.query.filter);
    const sortText = firstOf(req.query.sort);
    if (filterText !== undefined && !predicateOf) throw unsupported('filter');
    if (sortText !== undefined && !comparatorOf) throw unsupported('sort');
    const selected = filterText !== undefined && predicateOf ? items.filter(predicateOf(filterText)) : items;
    if (sortText === undefined || !comparatorOf) return selected;
    // Sorting must not reorder the world's own array.
    return (selected === items ? [...items] : (selected as T[])).sort(comparatorOf(sortText));
  };
  return { select, page: (items, req) => listPage(select(items, req), req) };
}
