import type jsonata from 'jsonata';
import { defineFunctions } from './allocation-limits.js';
import { parseDuration } from './duration.js';

/**
 * Functions Fleetbook adds to JSONata's library. None of them reaches the process, the file
 * system or the network: expressions stay pure functions of their context.
 */
export const extraFunctions = [
  {
    name: 'duration',
    signature: '<(sn):n>',
    description: "Milliseconds of a duration: `$duration('1h30m')` is 5400000.",
    implementation(value: unknown): number {
      // Not bounded by what a timer can wait: `$millis() - $duration('90d')` is date arithmetic.
      // A `sleep` of the result is still refused when it is too long.
      const ms = parseDuration(value, { maxMs: Number.MAX_SAFE_INTEGER });
      if (ms === undefined)
        throw new Error(`$duration: '${String(value)}' is not a duration such as 500ms, 30s, 5m, 2h or 1h30m`);
      return ms;
    },
  },
  {
    name: 'chunk',
    signature: '<an:a>',
    description: 'The array cut into arrays of at most `size` items: `$chunk([1,2,3,4,5], 2)` is `[[1,2],[3,4],[5]]`.',
    implementation(items: unknown[] | undefined, size: number): unknown[][] {
      if (!Number.isInteger(size) || size < 1)
        throw new Error(`$chunk: the size must be a whole number from 1, got ${String(size)}`);
      const list = items ?? [];
      const chunks: unknown[][] = [];
      for (let start = 0; start < list.length; start += size) chunks.push(list.slice(start, start + size));
      return chunks;
    },
  },
  {
    name: 'whereIn',
    signature: '<x(sa)x:a>',
    description:
      "The records whose `field` (or any of a list of fields) is one of `values`, in their order: `$whereIn(systems, ['id', 'name'], inputs.systemIds)`.",
    implementation(records: unknown, fields: string | string[], values: unknown): unknown[] {
      // A set lookup per record: 10,000 named systems among 60,000 take milliseconds, where a
      // filter with `in` compares every pair and JSONata's own lookups take seconds.
      const wanted = new Set(asList(values));
      const names = typeof fields === 'string' ? [fields] : fields;
      return asList(records).filter(
        (record) =>
          record !== null &&
          typeof record === 'object' &&
          names.some((name) => Object.hasOwn(record, name) && wanted.has((record as Record<string, unknown>)[name])),
      );
    },
  },
  {
    name: 'without',
    signature: '<xx:a>',
    description:
      'The values of the first list that the second does not hold, in their order: `$without(inputs.systemIds, steps.plan.outputs.systems.id)`.',
    implementation(values: unknown, excluded: unknown): unknown[] {
      const drop = new Set(asList(excluded));
      return asList(values).filter((value) => !drop.has(value));
    },
  },
  {
    name: 'table',
    signature: '<x?:o>',
    description:
      'A list of flat objects as a table (columns: the keys, in the order they first appear). Inside text it reads as aligned columns; in an `email` body it is an HTML table in the HTML part and aligned columns in the text part.',
    implementation(rows: unknown): TableValue {
      return tableOf(asList(rows));
    },
  },
] as const;

/** What `$table()` makes: the key marks it, so text and the `email` step can each render it their way. */
export interface TableValue {
  fleetbookTable: { columns: string[]; rows: string[][] };
}

export function isTableValue(value: unknown): value is TableValue {
  return typeof value === 'object' && value !== null && 'fleetbookTable' in value;
}

/** A cell as text: nothing is empty, objects are JSON. */
function cellText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** The table of a list of flat objects: what `$table()` shows and what a `file` step writes as CSV. */
export function tableOf(records: unknown[]): TableValue {
  const columns: string[] = [];
  const objects = records.map((record) => {
    if (record === null || typeof record !== 'object' || Array.isArray(record))
      throw new Error(`$table: each row must be an object, got ${JSON.stringify(record)}`);
    for (const key of Object.keys(record)) if (!columns.includes(key)) columns.push(key);
    return record as Record<string, unknown>;
  });
  return { fleetbookTable: { columns, rows: objects.map((row) => columns.map((column) => cellText(row[column]))) } };
}

/** A table as aligned text columns: a header, a rule of dashes, a line per row (code points counted). */
export function tableText(table: TableValue): string {
  const { columns, rows } = table.fleetbookTable;
  const lines = [columns, ...rows].map((cells) => cells.map((cell) => cell.replace(/\s+/g, ' ')));
  const widths = columns.map((_, index) => Math.max(...lines.map((cells) => [...(cells[index] ?? '')].length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, index) => cell + ' '.repeat((widths[index] ?? 0) - [...cell].length))
      .join('  ')
      .trimEnd();
  const [header = [], ...body] = lines;
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...body.map(line)].join('\n');
}

/** JSONata's values as a list: nothing is an empty one, a single value a list of one. */
function asList(value: unknown): unknown[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

const defined = await defineFunctions(extraFunctions as unknown as Parameters<typeof defineFunctions>[0]);

/** Registers `extraFunctions` on a compiled expression. */
export function registerExtraFunctions(expression: jsonata.Expression): void {
  for (const [name, fn] of defined) expression.assign(name, fn);
}
