/**
 * Reporting (`v1`, and the deprecated `v1alpha1` with the same handlers plus
 * `Deprecation`, `Sunset` and `Link` headers). An export moves through stages with
 * simulated time: `report submission` (status SUBMITTED), `in queue` (IN_QUEUE),
 * `generating` (GENERATING), then `completed` (COMPLETED) or `failed` (FAILED). When it
 * completes, its rows are taken from the world, recipients get an e-mail with the download
 * URL, and the async operation's `results[].resourceUri` and the status's
 * `reportDownloadUrl` point at `/_sim/downloads/<id>?signature=...`, served by this area.
 * After `exportExpiryMinutes` the status shows `isExpired: "true"` (a string, as published) and an empty URL, and the
 * download answers 410.
 */
import { Readable } from 'node:stream';
import type { AreaModule, AsyncOutcome, ExtraRoute, SimContext, SimRequest, SimResponse } from '../../context.js';
import { badRequest, notFound, SimHttpError } from '../../errors.js';
import { createListQuery } from '../../filter/index.js';
import { REPORT_TYPES, type ReportType } from './report-metadata.js';
import { renderReport, type RenderedReport, type ReportFormat } from './report-formats.js';

/** World-file settings of the reporting area. */
export interface ReportingConfig {
  /** Simulated minutes a finished export stays downloadable. @default 1440 */
  exportExpiryMinutes?: number;
  /** Simulated seconds an export takes from submission to completion. @default 180 */
  exportDurationSeconds?: number;
  /** Report names whose export fails (the stage then shows `failed`). @default [] */
  failReportNames?: string[];
}

const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    exportExpiryMinutes: { type: 'number', exclusiveMinimum: 0 },
    exportDurationSeconds: { type: 'number', minimum: 0 },
    failReportNames: { type: 'array', items: { type: 'string' } },
  },
};

export interface ReportExport {
  id: string;
  name: string;
  description?: string;
  /** The API client that asked for it (the status's `userName`). */
  userName: string;
  reportType: ReportType;
  format: ReportFormat;
  recipients: string[];
  subject: string;
  startedAt: number;
  endsAt: number;
  /** The `?signature=` of the download URL. */
  signature: string;
  /** Absolute download URL (origin of the creating request). */
  downloadUrl: string;
  result?: { ok: true; endedAt: number; report: RenderedReport } | { ok: false; endedAt: number; message: string };
}

export interface ReportingState {
  exports: ReportExport[];
  expiryMs: number;
  durationMs: number;
  failReportNames: ReadonlySet<string>;
}

/** Simulated minutes after which an export ends TIMEDOUT (not published). */
const EXPORT_TIMEOUT_MINUTES = 60;

/** Shares of the duration where each stage begins. */
const STAGES = [
  { from: 0, status: 'SUBMITTED', stage: 'report submission', message: 'The report request was submitted' },
  { from: 0.1, status: 'IN_QUEUE', stage: 'in queue', message: 'The report request is waiting to be generated' },
  { from: 0.4, status: 'GENERATING', stage: 'generating', message: 'The report is being generated' },
] as const;

const statusSchema = {
  id: 'string',
  type: 'string',
  status: 'string',
  stage: 'string',
  message: 'string',
  // A string ('true' / 'false'), as published.
  isExpired: 'string',
  userName: 'string',
  name: 'string',
  reportType: 'string',
  reportDownloadUrl: 'string',
  recipientEmailId: 'string',
  startTime: 'timestamp',
  statusTimestamp: 'timestamp',
  createdAt: 'timestamp',
} as const;

// The reporting area shows only eq, ne, gt, ge, lt (reference).
const statusQuery = createListQuery({
  filter: statusSchema,
  sort: statusSchema,
  filterOptions: { operators: ['eq', 'ne', 'gt', 'ge', 'lt'] },
});
const METADATA_FIELDS = ['id', 'kind', 'type', 'name', 'columns', 'filterCriteria'];
const metadataSchema = { id: 'string', kind: 'string', type: 'string', name: 'string' } as const;
const metadataQuery = createListQuery({
  filter: metadataSchema,
  sort: metadataSchema,
  filterOptions: { operators: ['eq', 'ne', 'gt', 'ge', 'lt'] },
});

function createState(ctx: SimContext): ReportingState {
  const config = ctx.config as ReportingConfig;
  return {
    exports: [],
    expiryMs: (config.exportExpiryMinutes ?? 1440) * 60_000,
    durationMs: (config.exportDurationSeconds ?? 180) * 1000,
    failReportNames: new Set(config.failReportNames ?? []),
  };
}

/** The published body marks nothing required; an export still needs these (checked by `planOf`). */
interface ExportRequest {
  name: string;
  description?: string;
  type: string;
  definition: {
    queryElements: { columns: string[]; filterCriteria?: Array<{ key: string; operator: string; value: string }> };
    enrollment: { delivery: { format: ReportFormat; email?: { subject?: string; recipients?: string[] } } };
  };
}

/** The parts of an export body the platform needs, each refused with the field it names. */
function requireExportFields(body: unknown): ExportRequest {
  const value = (body ?? {}) as Partial<ExportRequest>;
  const missing = (subject: string) => fieldError(subject, `The report export needs ${subject}`, 'required');
  if (typeof value.name !== 'string' || value.name === '') throw missing('name');
  if (typeof value.type !== 'string') throw missing('type');
  if (!Array.isArray(value.definition?.queryElements?.columns)) throw missing('definition.queryElements.columns');
  if (value.definition.enrollment?.delivery?.format === undefined)
    throw missing('definition.enrollment.delivery.format');
  return value as ExportRequest;
}

function fieldError(subject: string, message: string, description: string): SimHttpError {
  return badRequest(message, [{ source: 'field', subject, description }]);
}

/** Checks the export against its type's metadata; answers the row pipeline it asks for. */
function planOf(body: ExportRequest): {
  reportType: ReportType;
  columns: string[];
  criteria: Array<{ key: string; operator: string; value: string }>;
} {
  const reportType = REPORT_TYPES.find((t) => t.metadata.type === body.type);
  if (!reportType) {
    throw fieldError(
      'type',
      `Unknown report type '${body.type}'`,
      `one of ${REPORT_TYPES.map((t) => t.metadata.type).join(', ')}`,
    );
  }
  const known = reportType.metadata.columns.map((c) => c.name);
  const { columns, filterCriteria = [] } = body.definition.queryElements;
  columns.forEach((name, index) => {
    if (!known.includes(name)) {
      throw fieldError(
        `definition.queryElements.columns[${index}]`,
        `Column '${name}' is not in the ${body.type} metadata`,
        `one of ${known.join(', ')}`,
      );
    }
  });
  filterCriteria.forEach((criterion, index) => {
    const subject = `definition.queryElements.filterCriteria[${index}]`;
    const filter = reportType.metadata.filterCriteria.find((f) => f.name === criterion.key);
    if (!filter) {
      throw fieldError(
        `${subject}.key`,
        `Filter '${criterion.key}' is not in the ${body.type} metadata`,
        `one of ${reportType.metadata.filterCriteria.map((f) => f.name).join(', ')}`,
      );
    }
    if (!filter.supportedOperators.includes(criterion.operator)) {
      throw fieldError(
        `${subject}.operator`,
        `Filter '${criterion.key}' does not support ${criterion.operator}`,
        `one of ${filter.supportedOperators.join(', ')}`,
      );
    }
    if (criterion.key === 'sort_by' && !known.includes(criterion.value)) {
      throw fieldError(`${subject}.value`, `Cannot sort by '${criterion.value}'`, `one of ${known.join(', ')}`);
    }
    if (criterion.key === 'direction' && criterion.value !== 'ASC' && criterion.value !== 'DESC') {
      throw fieldError(`${subject}.value`, `Unknown direction '${criterion.value}'`, 'ASC or DESC');
    }
  });
  return { reportType, columns, criteria: filterCriteria };
}

function generateRows(ctx: SimContext, plan: ReturnType<typeof planOf>): Array<Array<string | number>> {
  let rows = plan.reportType.rows(ctx);
  for (const criterion of plan.criteria) {
    const test = plan.reportType.filters[criterion.key];
    if (test) rows = rows.filter((row) => test(row, criterion.value));
  }
  const sortBy = plan.criteria.find((c) => c.key === 'sort_by')?.value;
  if (sortBy !== undefined) {
    const sign = plan.criteria.find((c) => c.key === 'direction')?.value === 'DESC' ? -1 : 1;
    rows = [...rows].sort((a, b) =>
      (a[sortBy] ?? '') < (b[sortBy] ?? '') ? -sign : (a[sortBy] ?? '') > (b[sortBy] ?? '') ? sign : 0,
    );
  }
  return rows.map((row) => plan.columns.map((name) => row[name] ?? ''));
}

function handlers(state: ReportingState, ctx: SimContext) {
  const isExpired = (entry: ReportExport, now: number): boolean =>
    entry.result?.ok === true && now >= entry.result.endedAt + state.expiryMs;

  const statusOf = (entry: ReportExport, base: string) => {
    const now = ctx.clock.now();
    const expired = isExpired(entry, now);
    const fraction = (now - entry.startedAt) / Math.max(1, entry.endsAt - entry.startedAt);
    const running = [...STAGES].reverse().find((s) => fraction >= s.from) ?? STAGES[0];
    const view = !entry.result
      ? running
      : entry.result.ok
        ? {
            status: 'COMPLETED',
            stage: 'completed',
            message: expired ? 'The report has expired' : 'The report is ready to download',
          }
        : { status: 'FAILED', stage: 'failed', message: entry.result.message };
    const stageStart = entry.result
      ? entry.result.endedAt
      : entry.startedAt + running.from * (entry.endsAt - entry.startedAt);
    return {
      id: entry.id,
      resourceUri: `${base}/statuses/${entry.id}`,
      type: 'REPORT',
      name: entry.name,
      ...(entry.description === undefined ? {} : { description: entry.description }),
      userName: entry.userName,
      status: view.status,
      stage: view.stage,
      message: view.message,
      isExpired: String(expired),
      reportType: entry.reportType.metadata.type,
      reportDownloadUrl: entry.result?.ok && !expired ? entry.downloadUrl : '',
      recipientEmailId: entry.recipients.join(','),
      startTime: new Date(entry.startedAt).toISOString(),
      statusTimestamp: new Date(Math.floor(stageStart)).toISOString(),
      createdAt: new Date(entry.startedAt).toISOString(),
    };
  };

  const find = (id: string): ReportExport => {
    const entry = state.exports.find((e) => e.id === id);
    if (!entry) throw notFound('Report status', id);
    return entry;
  };

  const complete = (
    entry: ReportExport,
    plan: ReturnType<typeof planOf>,
    injected: { message: string } | undefined,
  ): AsyncOutcome => {
    const endedAt = entry.endsAt;
    if (injected || state.failReportNames.has(entry.name)) {
      const message = injected?.message ?? `The report '${entry.name}' could not be generated`;
      entry.result = { ok: false, endedAt, message };
      return { status: 'FAILED', error: { errorCode: 'REPORT_GENERATION_FAILED', message } };
    }
    const report = renderReport(entry.format, entry.name, plan.columns, generateRows(ctx, plan));
    entry.result = { ok: true, endedAt, report };
    if (entry.recipients.length > 0) {
      ctx.sendMail({
        to: entry.recipients,
        subject: entry.subject,
        body: `Your report '${entry.name}' (${entry.format}) is ready. The link is valid for ${Math.round(state.expiryMs / 60_000)} minutes.`,
        links: [entry.downloadUrl],
        kind: 'report-export',
      });
    }
    return { status: 'SUCCEEDED', results: [{ name: entry.name, resourceUri: entry.downloadUrl }] };
  };

  const base = (req: SimRequest): string =>
    req.operationId.startsWith('reportingV1alpha1.') ? '/reporting/v1alpha1' : '/reporting/v1';

  const v1: Record<string, (req: SimRequest) => SimResponse> = {
    listReportExportsMetadata: (req) => {
      // `filter`, `select` and `sort` are required (published); every field of an entry is required
      // too, so `select` may name fields but cannot drop any.
      const selected = String(req.query.select)
        .split(',')
        .map((field) => field.trim());
      const unknown = selected.filter((field) => !METADATA_FIELDS.includes(field));
      if (unknown.length > 0) {
        throw badRequest(`select names unknown fields: ${unknown.join(', ')}`, [
          { source: 'query.parameter', subject: 'select', description: `fields of ${METADATA_FIELDS.join(', ')}` },
        ]);
      }
      return {
        status: 200,
        body: metadataQuery.page(
          REPORT_TYPES.map((t) => t.metadata),
          req,
        ),
      };
    },

    createReportExport: (req) => {
      const body = requireExportFields(req.body);
      const plan = planOf(body);
      const delivery = body.definition.enrollment.delivery;
      // The export's id is its operation's: the entry exists before the operation can complete.
      const exports = state.exports;
      const record = ctx.asyncOps.start({
        flavour: 'reporting',
        type: 'report-export',
        durationMs: state.durationMs,
        // Not published; an hour, twenty times the default export, so a world whose exports
        // take longer (`exportDurationSeconds`) sees them end TIMEDOUT.
        timeoutMinutes: EXPORT_TIMEOUT_MINUTES,
        complete: (injected) => complete(exports.find((e) => e.id === record.id) as ReportExport, plan, injected),
      });
      record.resourceUri = `${base(req)}/statuses/${record.id}`;
      const signature = ctx.rng.fork(`report-signature:${record.id}`).uuid().replace(/-/g, '');
      const entry: ReportExport = {
        id: record.id,
        name: body.name,
        ...(body.description === undefined ? {} : { description: body.description }),
        userName: req.clientId,
        reportType: plan.reportType,
        format: delivery.format,
        recipients: delivery.email?.recipients ?? [],
        subject: delivery.email?.subject ?? body.name,
        startedAt: record.startedAt,
        endsAt: record.endsAt,
        signature,
        downloadUrl: `${req.origin}/_sim/downloads/${record.id}?signature=${signature}`,
      };
      state.exports.push(entry);
      return {
        status: 202,
        headers: { Location: `${base(req)}/async-operations/${record.id}` },
        body: { id: record.id, name: body.name },
      };
    },

    listReportStatuses: (req) => {
      if (req.query.filter === undefined) {
        throw badRequest('filter is required on this list', [
          { source: 'query.parameter', subject: 'filter', description: 'required' },
        ]);
      }
      const views = state.exports.map((e) => statusOf(e, base(req)));
      return { status: 200, body: statusQuery.page(views, req) };
    },

    getReportStatus: (req) => ({ status: 200, body: statusOf(find(req.params.id ?? ''), base(req)) }),
  };

  // The server adds the deprecation headers to every answer of a v1alpha1 operation.
  return Object.fromEntries(
    Object.entries(v1).flatMap(([name, handler]) => [
      [`reporting.${name}`, handler],
      [`reportingV1alpha1.${name}`, handler],
    ]),
  );
}

function extraRoutes(state: ReportingState, ctx: SimContext): ExtraRoute[] {
  return [
    {
      name: '_sim.downloadReport',
      method: 'GET',
      path: '/_sim/downloads/:id',
      handler: (req) => {
        const entry = state.exports.find((e) => e.id === req.params.id);
        const signature = Array.isArray(req.query.signature) ? req.query.signature[0] : req.query.signature;
        if (!entry || signature !== entry.signature)
          throw new SimHttpError(403, 'INVALID_SIGNATURE', 'The download link is not valid');
        if (!entry.result?.ok)
          throw new SimHttpError(404, 'REPORT_NOT_READY', `The report '${entry.name}' is not generated`);
        if (ctx.clock.now() >= entry.result.endedAt + state.expiryMs)
          throw new SimHttpError(410, 'REPORT_EXPIRED', `The report '${entry.name}' has expired`);
        const { report } = entry.result;
        const filename = `${entry.name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}.${report.extension}`;
        return {
          status: 200,
          headers: { 'content-type': report.contentType, 'content-disposition': `attachment; filename="${filename}"` },
          stream: Readable.from([report.body]),
        };
      },
    },
  ];
}

export const reportingArea: AreaModule<ReportingState> = {
  key: 'reporting',
  configSchema,
  createState,
  handlers,
  extraRoutes,
  summary: (state) => ({ reportExportTypes: REPORT_TYPES.length, reportExports: state.exports.length }),
};
