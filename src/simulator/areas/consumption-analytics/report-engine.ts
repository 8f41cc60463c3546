/**
 * Runs a consumption report definition (v2 `execute`) over a report's generated rows: the
 * date filter, the field filters, then one output row per group of the columns without an
 * aggregate function, the others aggregated. Rows are drawn as the CSV contents draw them,
 * so a saved report's v2 run and its v1 download agree.
 */
import type { Rng } from '../../context.js';
import { badRequest } from '../../errors.js';
import { WORLD_EPOCH_MS } from '../workspaces/world-time.js';

export type AggFunction = 'NONE' | 'SUM' | 'COUNT' | 'CARDINALITY' | 'MIN' | 'MAX' | 'AVG';
export interface ReportColumn {
  fieldName: string;
  aggFunction?: AggFunction;
}
export interface DateFilter {
  type?: 'ABSOLUTE' | 'RELATIVE';
  relativeRange?: string;
  startDate?: string;
  endDate?: string;
}
export interface FieldCriterion {
  name: string;
  operator: string;
  values: unknown[];
}
export interface ReportRun {
  columns: ReportColumn[];
  filter: { dateFilter: DateFilter; fieldFilters?: FieldCriterion[] };
}

type Value = string | number;
export type UsageRow = Record<string, Value>;

/** The usage fields a definition may use (v2 `usage-fields`). */
export const USAGE_FIELDS = [
  {
    fieldName: 'sys_Product_s',
    displayName: 'Product',
    valueType: 'STRING',
    defaultFunction: 'NONE',
    validFunctions: ['NONE', 'COUNT', 'CARDINALITY'],
  },
  {
    fieldName: 'sys_Cost_f',
    displayName: 'Cost',
    valueType: 'FLOAT',
    defaultFunction: 'SUM',
    validFunctions: ['SUM', 'MIN', 'MAX', 'AVG', 'COUNT'],
  },
  {
    fieldName: 'sys_AccountingDate_d',
    displayName: 'Accounting date',
    valueType: 'DATE',
    defaultFunction: 'NONE',
    validFunctions: ['NONE', 'MIN', 'MAX', 'COUNT'],
  },
  {
    fieldName: 'ext_CostCenter_s',
    displayName: 'Cost center',
    valueType: 'STRING',
    defaultFunction: 'NONE',
    validFunctions: ['NONE', 'COUNT', 'CARDINALITY'],
  },
] as const;

const DAY_MS = 86_400_000;
const RELATIVE_DAYS: Record<string, number> = {
  YESTERDAY: 1,
  LAST_7_DAYS: 7,
  LAST_14_DAYS: 14,
  LAST_30_DAYS: 30,
  LAST_60_DAYS: 60,
  LAST_90_DAYS: 90,
  LAST_120_DAYS: 120,
  LAST_QUARTER: 91,
  LAST_6_MONTHS: 182,
  LAST_YEAR: 365,
  LAST_13_MONTHS: 395,
};

const isoDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** The inclusive [start, end] days of a date filter; the world's data ends at its epoch. */
export function dateRangeOf(filter: DateFilter): [string, string] {
  if (filter.type === 'ABSOLUTE' || (filter.type === undefined && filter.startDate !== undefined)) {
    if (filter.startDate === undefined || filter.endDate === undefined) {
      throw badRequest('An absolute date filter needs startDate and endDate', [
        { source: 'field', subject: 'filter.dateFilter', description: 'startDate and endDate' },
      ]);
    }
    return [filter.startDate, filter.endDate];
  }
  const range = filter.relativeRange ?? 'LAST_30_DAYS';
  const days = RELATIVE_DAYS[range];
  if (days === undefined) {
    throw badRequest(`The simulator does not compute the relative range ${range}`, [
      {
        source: 'field',
        subject: 'filter.dateFilter.relativeRange',
        description: `one of ${Object.keys(RELATIVE_DAYS).join(', ')}`,
      },
    ]);
  }
  return [isoDay(WORLD_EPOCH_MS - (days - 1) * DAY_MS), isoDay(WORLD_EPOCH_MS)];
}

function matches(row: UsageRow, criterion: FieldCriterion): boolean {
  const value = row[criterion.name];
  const text = value === undefined ? '' : String(value);
  const [first] = criterion.values;
  const firstText = String(first ?? '');
  switch (criterion.operator) {
    case 'EQ':
      return text === firstText;
    case 'NOT_EQ':
      return text !== firstText;
    case 'IN':
      return criterion.values.map(String).includes(text);
    case 'NOT_IN':
      return !criterion.values.map(String).includes(text);
    case 'CONTAINS':
      return text.includes(firstText);
    case 'DOES_NOT_CONTAIN':
      return !text.includes(firstText);
    case 'STARTS_WITH':
      return text.startsWith(firstText);
    case 'DOES_NOT_START_WITH':
      return !text.startsWith(firstText);
    case 'EMPTY':
    case 'IS_EMPTY':
      return text === '';
    case 'NOT_EMPTY':
      return text !== '';
    case 'GT':
      return Number(value) > Number(first);
    case 'GTE':
      return Number(value) >= Number(first);
    case 'LT':
      return Number(value) < Number(first);
    case 'LTE':
      return Number(value) <= Number(first);
    case 'BETWEEN':
      return Number(value) >= Number(criterion.values[0]) && Number(value) <= Number(criterion.values[1]);
    case 'NOT_BETWEEN':
      return !(Number(value) >= Number(criterion.values[0]) && Number(value) <= Number(criterion.values[1]));
    default:
      throw badRequest(`The simulator does not compute the operator ${criterion.operator}`, [
        {
          source: 'field',
          subject: 'filter.fieldFilters',
          description: 'a comparison, IN, text or emptiness operator',
        },
      ]);
  }
}

function aggregate(values: Value[], fn: AggFunction): Value {
  const numbers = values.map(Number);
  switch (fn) {
    case 'SUM':
      return Math.round(numbers.reduce((a, b) => a + b, 0) * 100) / 100;
    case 'COUNT':
      return values.length;
    case 'CARDINALITY':
      return new Set(values.map(String)).size;
    case 'MIN':
      return values.reduce((a, b) => (b < a ? b : a));
    case 'MAX':
      return values.reduce((a, b) => (b > a ? b : a));
    case 'AVG':
      return Math.round((numbers.reduce((a, b) => a + b, 0) / values.length) * 100) / 100;
    case 'NONE':
      return values[0] ?? '';
  }
}

/** The output rows of `run` over `rows`, grouped, aggregated and ordered by their group values. */
export function runReport(rows: Iterable<UsageRow>, run: ReportRun): UsageRow[] {
  const known = new Set<string>(USAGE_FIELDS.map((f) => f.fieldName));
  run.columns.forEach((column, index) => {
    if (!known.has(column.fieldName)) {
      throw badRequest(`Unknown usage field '${column.fieldName}'`, [
        { source: 'field', subject: `columns[${index}].fieldName`, description: `one of ${[...known].join(', ')}` },
      ]);
    }
  });
  const [start, end] = dateRangeOf(run.filter.dateFilter);
  const keys = run.columns.filter((c) => (c.aggFunction ?? 'NONE') === 'NONE').map((c) => c.fieldName);
  const groups = new Map<string, UsageRow[]>();
  for (const row of rows) {
    const day = String(row.sys_AccountingDate_d);
    if (day < start || day > end) continue;
    if (!(run.filter.fieldFilters ?? []).every((criterion) => matches(row, criterion))) continue;
    const key = JSON.stringify(keys.map((k) => row[k] ?? ''));
    const group = groups.get(key);
    if (group) group.push(row);
    else groups.set(key, [row]);
  }
  return [...groups.keys()].sort().map((key) => {
    const members = groups.get(key)!;
    return Object.fromEntries(
      run.columns.map((c) => [
        c.fieldName,
        aggregate(
          members.map((m) => m[c.fieldName] ?? ''),
          c.aggFunction ?? 'NONE',
        ),
      ]),
    );
  });
}

/** CSV text of output rows, the columns' field names as the header. */
export function rowsToCsv(columns: readonly ReportColumn[], rows: readonly UsageRow[]): string {
  const field = (value: Value): string => {
    const text = String(value);
    return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  return (
    [
      columns.map((c) => c.fieldName).join(','),
      ...rows.map((row) => columns.map((c) => field(row[c.fieldName] ?? '')).join(',')),
    ].join('\n') + '\n'
  );
}

export type RowSource = (rng: Rng, count: number) => Iterable<UsageRow>;
