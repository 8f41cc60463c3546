/**
 * Consumption analytics (regional): report summaries, definitions, and contents as CSV
 * generated row by row from the seed and streamed, so a report of hundreds of megabytes
 * never exists in memory. A request without a region (`region === ''`) sees every region.
 */
import { Readable } from 'node:stream';
import type { AreaModule, Rng, SimContext, SimRequest, SimResponse } from '../../context.js';
import { notFound } from '../../errors.js';
import { pastTimestamp, WORLD_EPOCH_MS } from '../workspaces/world-time.js';

/** Regions of this area (the description's `x-fleetbook-regions`). */
const REGIONS = ['us-west', 'ap-northeast', 'eu-central'] as const;
const PRODUCTS = ['Compute', 'Block Storage', 'Object Storage', 'Networking', 'Backup and Recovery', 'Private Cloud, managed'];
const REPORT_NAMES = ['Monthly cost by product', 'Storage spend trend', 'Cost by cost center', 'Networking usage', 'Quarterly summary'];
const COLUMNS = ['sys_Product_s', 'sys_Cost_f', 'sys_AccountingDate_d', 'ext_CostCenter_s'];
const DAY_MS = 86_400_000;
/** Rows per generated chunk: about 40 KB of text, a good unit for the socket. */
const ROWS_PER_CHUNK = 1000;

interface Actor {
  id: string;
  name: string;
  time: string;
  email?: string;
}

export interface ConsumptionReport {
  id: string;
  name: string;
  created: Actor;
  lastUpdated: Actor;
  shared: boolean;
  owner: boolean;
  /** Not shown by the platform: which regional address serves the report. */
  region: string;
  /** Not shown: rows its contents have. */
  rows: number;
}

export interface ConsumptionAnalyticsState {
  reports: ConsumptionReport[];
}

/** World-file settings of the consumption analytics area. */
export interface ConsumptionAnalyticsConfig {
  /** @default 5 */
  reports?: number;
  /** Data rows of every report's CSV (about 45 bytes each). @default 2000 */
  rowsPerReport?: number;
  /** Data rows per report by position in the list, overriding `rowsPerReport`. @default [] */
  reportRows?: number[];
}

const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    reports: { type: 'integer', minimum: 0, maximum: 1000 },
    rowsPerReport: { type: 'integer', minimum: 0 },
    reportRows: { type: 'array', items: { type: 'integer', minimum: 0 } },
  },
};

/** Zoneless timestamp with microseconds, as the platform shows report times. */
function actorTime(rng: Rng, maxDaysAgo: number): string {
  return `${pastTimestamp(rng, maxDaysAgo).slice(0, 19)}.${String(rng.int(0, 999_999)).padStart(6, '0')}`;
}

function createState(ctx: SimContext): ConsumptionAnalyticsState {
  const config = ctx.config as ConsumptionAnalyticsConfig;
  const rng = ctx.rng.fork('consumption-reports');
  const people = [
    { id: 'u-100', name: 'Dana Weber', email: 'dana.weber@example.com' },
    { id: 'u-204', name: 'Jonas Berg', email: 'jonas.berg@example.com' },
  ];
  const reports = Array.from({ length: config.reports ?? 5 }, (_, i): ConsumptionReport => {
    const userCreated = rng.next() < 0.6;
    const author = userCreated ? rng.pick(people) : { id: 'system', name: 'System' };
    return {
      id: rng.uuid(),
      name: REPORT_NAMES[i % REPORT_NAMES.length] + (i >= REPORT_NAMES.length ? ` ${i + 1}` : ''),
      created: { id: author.id, name: author.name, time: actorTime(rng, 400), ...('email' in author ? { email: author.email } : {}) },
      lastUpdated: { id: author.id, name: author.name, time: actorTime(rng, 30) },
      shared: rng.next() < 0.4,
      owner: userCreated && author.id === 'u-100',
      region: REGIONS[i % REGIONS.length] as string,
      rows: config.reportRows?.[i] ?? config.rowsPerReport ?? 2000,
    };
  });
  return { reports };
}

function summaryOf(report: ConsumptionReport): Omit<ConsumptionReport, 'region' | 'rows'> {
  const { region: _region, rows: _rows, ...summary } = report;
  return summary;
}

function definitionOf(report: ConsumptionReport): Record<string, unknown> {
  return {
    ...summaryOf(report),
    description: `${report.name}, last 90 days`,
    filter: {
      dateFilter: { type: 'RELATIVE', relativeRange: 'LAST_90_DAYS' },
      fieldFilters: [{ name: 'sys_Product_s', operator: 'NOT_EMPTY', values: [] }],
    },
    columns: [
      { fieldName: 'sys_Product_s', aggFunction: 'NONE', group: true, formatting: {} },
      { fieldName: 'sys_Cost_f', aggFunction: 'SUM', group: false, formatting: { placesAfterDecimal: 2 } },
      { fieldName: 'sys_AccountingDate_d', aggFunction: 'NONE', group: true, formatting: {} },
      { fieldName: 'ext_CostCenter_s', aggFunction: 'NONE', group: true, formatting: {} },
    ],
    charts: [
      {
        id: `${report.id.slice(0, 8)}-chart`,
        type: 'BAR',
        title: 'Cost by product',
        definition: { metric: 'sys_Cost_f', metricAggFunction: 'SUM', series: ['sys_Product_s'], excludeOther: false, maxGroups: 10, orientation: 'VERTICAL' },
      },
    ],
    sharing: { type: report.shared ? 'SHARED' : 'PRIVATE' },
    pivot: false,
  };
}

function csvField(value: string): string {
  return /[",\n]/.test(value) || value === '' ? `"${value.replace(/"/g, '""')}"` : value;
}

/** Formatted CSV fields of the report rows: products, the 90 accounting dates (newest first), cost centers. */
const CSV_PRODUCTS = PRODUCTS.map(csvField);
const CSV_DATES = Array.from({ length: 90 }, (_, daysBack) => new Date(WORLD_EPOCH_MS - daysBack * DAY_MS).toISOString().slice(0, 10));
const CSV_COST_CENTERS = Array.from({ length: 100 }, (_, i) => csvField(`CC-${1000 + i}`));
const CSV_EMPTY = csvField('');
const CSV_CENTS = Array.from({ length: 100 }, (_, cents) => String(cents).padStart(2, '0'));

/**
 * The CSV text of a report, chunk by chunk: the header row, then `rows` data rows drawn
 * from `rng`. A generator, so `Readable.from` pulls the next chunk only when the consumer
 * (the socket) asks for it: backpressure without buffering.
 */
export function* reportCsvChunks(rng: Rng, rows: number): Generator<string> {
  yield `${COLUMNS.join(',')}\n`;
  for (let start = 0; start < rows; start += ROWS_PER_CHUNK) {
    let chunk = '';
    for (let row = start; row < Math.min(rows, start + ROWS_PER_CHUNK); row += 1) {
      // The same draws in the same order as ever (the rows of a seed never change); the fields
      // that come from small sets are formatted once, which triples the rows per second.
      const product = CSV_PRODUCTS[rng.int(0, PRODUCTS.length - 1)] as string;
      const cents = rng.int(1, 500_000);
      const cost = `${Math.floor(cents / 100)}.${CSV_CENTS[cents % 100]}`;
      const date = CSV_DATES[rng.int(0, CSV_DATES.length - 1)] as string;
      const costCenter = rng.next() < 0.2 ? CSV_EMPTY : CSV_COST_CENTERS[rng.int(1000, 1099) - 1000];
      chunk += `${product},${cost},${date},${costCenter}\n`;
    }
    yield chunk;
  }
}

function handlers(state: ConsumptionAnalyticsState, ctx: SimContext) {
  const visible = (req: SimRequest, report: ConsumptionReport): boolean => req.region === '' || report.region === req.region;
  const find = (req: SimRequest): ConsumptionReport => {
    const id = req.params.id ?? '';
    const report = state.reports.find((r) => r.id === id);
    if (!report || !visible(req, report)) throw notFound('Report', id);
    return report;
  };

  return {
    'consumptionAnalytics.listReports': (req: SimRequest): SimResponse => ({
      status: 200,
      body: state.reports.filter((r) => visible(req, r)).map(summaryOf),
    }),

    'consumptionAnalytics.getReport': (req: SimRequest): SimResponse => ({ status: 200, body: definitionOf(find(req)) }),

    'consumptionAnalytics.downloadReportContents': (req: SimRequest): SimResponse => {
      const report = find(req);
      const filename = `${report.name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}.csv`;
      // Forked by report id: every download of a report has the same rows.
      const rows = reportCsvChunks(ctx.rng.fork(`report-contents:${report.id}`), report.rows);
      return {
        status: 200,
        headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="${filename}"` },
        stream: Readable.from(rows, { objectMode: false }),
      };
    },
  };
}

export const consumptionAnalyticsArea: AreaModule<ConsumptionAnalyticsState> = {
  key: 'consumptionAnalytics',
  configSchema,
  createState,
  handlers,
  summary: (state) => ({ reports: state.reports.length }),
};
