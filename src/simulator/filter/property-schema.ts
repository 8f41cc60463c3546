/**
 * What a list says about its filterable and sortable properties, and how values are read
 * from an item and put in a comparable form.
 */

/** The type of each property a list filters or sorts on, by `/`-separated path. */
export type PropertyType = 'string' | 'integer' | 'decimal' | 'timestamp' | 'boolean';
export type PropertySchema = Readonly<Record<string, PropertyType>>;

/** A value normalised for comparison: timestamps become epoch milliseconds; missing is `null`. */
export type Comparable = string | number | boolean | null;

/** Reads the property at `path` (`a/b/c`) of an item and normalises it for `type`. */
export function createReader(path: string, type: PropertyType): (item: unknown) => Comparable {
  const segments = path.split('/');
  const read = (item: unknown): unknown => {
    let value = item;
    for (const segment of segments) {
      if (value === null || typeof value !== 'object') return undefined;
      value = (value as Record<string, unknown>)[segment];
    }
    return value;
  };
  switch (type) {
    case 'string':
      return (item) => {
        const value = read(item);
        return typeof value === 'string' ? value : null;
      };
    case 'integer':
    case 'decimal':
      return (item) => {
        const value = read(item);
        return typeof value === 'number' ? value : null;
      };
    case 'boolean':
      return (item) => {
        const value = read(item);
        return typeof value === 'boolean' ? value : null;
      };
    case 'timestamp':
      return (item) => {
        const value = read(item);
        if (typeof value !== 'string') return null;
        const ms = Date.parse(value);
        return Number.isNaN(ms) ? null : ms;
      };
  }
}
