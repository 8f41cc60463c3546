/**
 * The `sort` query parameter: comma-separated `<property> [asc|desc]` expressions, the
 * first one deciding first. Missing values sort last in either direction.
 */
import { createReader, type Comparable, type PropertySchema } from './property-schema.js';
import { describeToken, syntaxError, tokenize, type Token } from './tokenize.js';

export type SortComparator = (a: unknown, b: unknown) => number;

function compareValues(a: Comparable, b: Comparable): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}

/**
 * Compiles a sort expression into a comparator for `Array.prototype.sort` (stable, so equal
 * items keep the list's natural order). Throws a 400 for unknown properties, unknown
 * directions and malformed text.
 */
export function compileSort(text: string, schema: PropertySchema): SortComparator {
  const tokens = tokenize(text, 'sort');
  const keys: Array<{ read: (item: unknown) => Comparable; sign: number }> = [];
  let i = 0;
  const at = (index: number): Token => tokens[index] as Token;
  for (;;) {
    const prop = at(i);
    if (prop.kind !== 'word')
      throw syntaxError('sort', `expected a property name but found ${describeToken(prop)}`, prop.pos);
    const type = schema[prop.value];
    if (type === undefined) {
      throw syntaxError(
        'sort',
        `unknown property '${prop.value}' (sortable: ${Object.keys(schema).join(', ') || 'none'})`,
        prop.pos,
      );
    }
    i += 1;
    let sign = 1;
    const direction = at(i);
    if (direction.kind === 'word') {
      if (direction.value !== 'asc' && direction.value !== 'desc') {
        throw syntaxError('sort', `unknown direction '${direction.value}' (asc or desc)`, direction.pos);
      }
      sign = direction.value === 'desc' ? -1 : 1;
      i += 1;
    }
    keys.push({ read: createReader(prop.value, type), sign });
    const separator = at(i);
    if (separator.kind === 'end') break;
    if (separator.kind !== 'punct' || separator.value !== ',') {
      throw syntaxError('sort', `expected ',' or the end but found ${describeToken(separator)}`, separator.pos);
    }
    i += 1;
  }
  return (a, b) => {
    for (const key of keys) {
      const left = key.read(a);
      const right = key.read(b);
      // Missing values go last whatever the direction.
      if (left === null || right === null) {
        const order = compareValues(left, right);
        if (order !== 0) return order;
        continue;
      }
      const order = compareValues(left, right) * key.sign;
      if (order !== 0) return order;
    }
    return 0;
  };
}
