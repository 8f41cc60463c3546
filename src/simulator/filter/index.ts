/** The filter and sort languages of list operations. */
export { compileFilter, FILTER_OPERATORS, type CompileFilterOptions, type FilterPredicate } from './compile-filter.js';
export { compileSort, type SortComparator } from './compile-sort.js';
export { createListQuery, type ListQuery, type ListQueryOptions } from './create-list-query.js';
export type { PropertySchema, PropertyType } from './property-schema.js';
