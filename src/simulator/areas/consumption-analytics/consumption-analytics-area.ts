/**
 * Consumption analytics (regional): report summaries, definitions, and contents as CSV
 * generated row by row from the seed and streamed, so a report of hundreds of megabytes
 * never exists in memory. A request without a region (`region === ''`) sees every region.
 * v2 (published): a paged list, definitions with RFC 3339 times, the usage fields, and runs
 * of a saved report or an ad-hoc definition answering rows or CSV (`report-engine.ts`).
 */
import { Readable } from 'node:stream';
import type { AreaModule, Rng, SimContext, SimRequest, SimResponse } from '../../context.js';
import { notFound } from '../../errors.js';
import { listPage } from '../../paging.js';
import { pastTimestamp, WORLD_EPOCH_MS } from '../workspaces/world-time.js';
import { rowsToCsv, runReport, USAGE_FIELDS, type DateFilter, type ReportRun, type UsageRow } from './report-engine.js';

/** Regions of this area (the description's `x-fleetbook-regions`). */
const REGIONS = ['us-west', 'ap-northeast', 'eu-central'] as const;
const PRODUCTS = [
  'Compute',
  'Block Storage',
  'Object Storage',
  'Networking',
  'Backup and Recovery',
  'Private Cloud, managed',
];
const REPORT_NAMES = [
  'Monthly cost by product',
  'Storage spend trend',
  'Cost by cost center',
  'Networking usage',
  'Quarterly summary',
];
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
      created: {
        id: author.id,
        name: author.name,
        time: actorTime(rng, 400),
        ...('email' in author ? { email: author.email } : {}),
      },
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
        definition: {
          metric: 'sys_Cost_f',
          metricAggFunction: 'SUM',
          series: ['sys_Product_s'],
          excludeOther: false,
          maxGroups: 10,
          orientation: 'VERTICAL',
        },
      },
    ],
    sharing: { type: report.shared ? 'SHARED' : 'PRIVATE' },
    pivot: false,
  };
}

/** v2 shows times as RFC 3339 (v1's are zoneless with microseconds). */
const rfc3339 = (zoneless: string): string => `${zoneless.slice(0, 23)}Z`;

function identifierV2(report: ConsumptionReport): Record<string, unknown> {
  return {
    id: report.id,
    name: report.name,
    description: `${report.name}, last 90 days`,
    type: 'consumption-report',
    // A string in the published record.
    generation: '1',
    createdAt: rfc3339(report.created.time),
    updatedAt: rfc3339(report.lastUpdated.time),
    owner: report.owner,
    shared: report.shared,
  };
}

function definitionV2(report: ConsumptionReport): Record<string, unknown> {
  const v1 = definitionOf(report) as { charts: Array<{ definition: Record<string, unknown> }> };
  // v2 names one series field per chart.
  const charts = v1.charts.map((chart) => ({ ...chart, definition: { ...chart.definition, series: 'sys_Product_s' } }));
  return {
    ...v1,
    charts,
    created: { ...report.created, time: rfc3339(report.created.time) },
    lastUpdated: { ...report.lastUpdated, time: rfc3339(report.lastUpdated.time) },
  };
}

/** A saved report's run: its own columns and filter, the request's dates when it gives any. */
function savedRun(
  report: ConsumptionReport,
  dates: { relativeDate?: string; startDate?: string; endDate?: string } | undefined,
): ReportRun {
  const definition = definitionOf(report) as unknown as ReportRun;
  let dateFilter: DateFilter = definition.filter.dateFilter;
  if (dates?.relativeDate !== undefined) dateFilter = { type: 'RELATIVE', relativeRange: dates.relativeDate };
  else if (dates?.startDate !== undefined || dates?.endDate !== undefined)
    dateFilter = { type: 'ABSOLUTE', startDate: dates.startDate, endDate: dates.endDate };
  return { columns: definition.columns, filter: { ...definition.filter, dateFilter } };
}

function csvField(value: string): string {
  return /[",\n]/.test(value) || value === '' ? `"${value.replace(/"/g, '""')}"` : value;
}

/** Formatted CSV fields of the report rows: products, the 90 accounting dates (newest first), cost centers. */
const CSV_PRODUCTS = PRODUCTS.map(csvField);
const CSV_DATES = Array.from({ length: 90 }, (_, daysBack) =>
  new Date(WORLD_EPOCH_MS - daysBack * DAY_MS).toISOString().slice(0, 10),
);
const CSV_COST_CENTERS = Array.from({ length: 100 }, (_, i) => csvField(`CC-${1000 + i}`));
const CSV_EMPTY = csvField('');
const CSV_CENTS = Array.from({ length: 100 }, (_, cents) => String(cents).padStart(2, '0'));

/**
 * One row's draws, in the same order as ever (the rows of a seed never change): indexes into
 * the products, dates and cost centers (-1: none), and the cost in cents.
 */
function drawRow(rng: Rng): { product: number; cents: number; date: number; costCenter: number } {
  const product = rng.int(0, PRODUCTS.length - 1);
  const cents = rng.int(1, 500_000);
  const date = rng.int(0, CSV_DATES.length - 1);
  const costCenter = rng.next() < 0.2 ? -1 : rng.int(1000, 1099) - 1000;
  return { product, cents, date, costCenter };
}

/** The rows of a report as values (v2 runs), drawn exactly as its CSV contents are. */
export function* reportRows(rng: Rng, rows: number): Generator<UsageRow> {
  for (let row = 0; row < rows; row += 1) {
    const drawn = drawRow(rng);
    yield {
      sys_Product_s: PRODUCTS[drawn.product] as string,
      sys_Cost_f: drawn.cents / 100,
      sys_AccountingDate_d: CSV_DATES[drawn.date] as string,
      ext_CostCenter_s: drawn.costCenter < 0 ? '' : `CC-${1000 + drawn.costCenter}`,
    };
  }
}

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
      // The fields that come from small sets are formatted once, which triples the rows per second.
      const drawn = drawRow(rng);
      const cost = `${Math.floor(drawn.cents / 100)}.${CSV_CENTS[drawn.cents % 100]}`;
      const costCenter = drawn.costCenter < 0 ? CSV_EMPTY : CSV_COST_CENTERS[drawn.costCenter];
      chunk += `${CSV_PRODUCTS[drawn.product]},${cost},${CSV_DATES[drawn.date]},${costCenter}\n`;
    }
    yield chunk;
  }
}

function handlers(state: ConsumptionAnalyticsState, ctx: SimContext) {
  const visible = (req: SimRequest, report: ConsumptionReport): boolean =>
    req.region === '' || report.region === req.region;
  const find = (req: SimRequest): ConsumptionReport => {
    const id = req.params.id ?? '';
    const report = state.reports.find((r) => r.id === id);
    if (!report || !visible(req, report)) throw notFound('Report', id);
    return report;
  };

  const rowsOf = (report: ConsumptionReport): Iterable<UsageRow> =>
    reportRows(ctx.rng.fork(`report-contents:${report.id}`), report.rows);
  /** Ad-hoc definitions run over every visible report's rows. */
  const allRows = function* (req: SimRequest): Generator<UsageRow> {
    for (const report of state.reports) if (visible(req, report)) yield* rowsOf(report);
  };
  const csvAnswer = (name: string, csv: string): SimResponse => ({
    status: 200,
    headers: { 'content-type': 'text/csv; charset=utf-8', 'Content-Disposition': `attachment; filename="${name}.csv"` },
    stream: Readable.from([csv]),
  });
  const rowsAnswer = (items: UsageRow[]): SimResponse => ({ status: 200, body: { items, totalCount: items.length } });

  return {
    'consumptionAnalytics.listReportsV2': (req: SimRequest): SimResponse => ({
      status: 200,
      body: listPage(state.reports.filter((r) => visible(req, r)).map(identifierV2), req),
    }),

    'consumptionAnalytics.getReportV2': (req: SimRequest): SimResponse => ({
      status: 200,
      body: definitionV2(find(req)),
    }),

    'consumptionAnalytics.listUsageFieldsV2': (): SimResponse => ({ status: 200, body: USAGE_FIELDS }),

    'consumptionAnalytics.executeReportV2': (req: SimRequest): SimResponse => {
      const report = find(req);
      return rowsAnswer(runReport(rowsOf(report), savedRun(report, req.body as Parameters<typeof savedRun>[1])));
    },

    'consumptionAnalytics.executeReportCsvV2': (req: SimRequest): SimResponse => {
      const report = find(req);
      const run = savedRun(report, req.body as Parameters<typeof savedRun>[1]);
      return csvAnswer(
        report.name.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
        rowsToCsv(run.columns, runReport(rowsOf(report), run)),
      );
    },

    'consumptionAnalytics.executeReportDefinitionV2': (req: SimRequest): SimResponse =>
      rowsAnswer(runReport(allRows(req), req.body as ReportRun)),

    'consumptionAnalytics.executeReportDefinitionCsvV2': (req: SimRequest): SimResponse => {
      const run = req.body as ReportRun;
      return csvAnswer('report', rowsToCsv(run.columns, runReport(allRows(req), run)));
    },

    'consumptionAnalytics.listReports': (req: SimRequest): SimResponse => ({
      status: 200,
      body: state.reports.filter((r) => visible(req, r)).map(summaryOf),
    }),

    'consumptionAnalytics.getReport': (req: SimRequest): SimResponse => ({
      status: 200,
      body: definitionOf(find(req)),
    }),

    'consumptionAnalytics.downloadReportContents': (req: SimRequest): SimResponse => {
      const report = find(req);
      const filename = `${report.name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}.csv`;
      // Forked by report id: every download of a report has the same rows (and its v2 runs read them).
      const rows = reportCsvChunks(ctx.rng.fork(`report-contents:${report.id}`), report.rows);
      return {
        status: 200,
        headers: {
          'content-type': 'text/csv; charset=utf-8',
          'content-disposition': `attachment; filename="${filename}"`,
        },
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
