import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallResult, PlatformClient } from '../../src/api/index.js';
import { answerOf, expectConformant, startConformance, type Conformance, type JsonBody } from './harness.js';

const MINUTE_MS = 60_000;
const WAIT = { minPollMs: 2, maxPollMs: 20, timeoutMs: 15_000 } as const;
const dir = mkdtempSync(join(tmpdir(), 'fleetbook-conformance-reports-'));

let t: Conformance;
beforeAll(async () => {
  t = await startConformance({
    world: {
      consumptionAnalytics: { reports: 5, rowsPerReport: 250 },
      reporting: { failReportNames: ['Conformance broken'] },
    },
  });
});
afterAll(async () => {
  await expectConformant(t.sim, 'reporting-analytics');
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

const follow = (client: PlatformClient, accepted: CallResult) => client.waitForOperation(accepted, WAIT);
const METADATA_QUERY = {
  filter: "kind eq 'REPORT.EXPORTS.METADATA'",
  select: 'type,name,columns,filterCriteria',
  sort: 'type asc',
};

const exportBody = (name: string, format: 'CSV' | 'PDF' | 'EXCEL' | 'TXT', recipients: string[]) => ({
  name,
  kind: 'REPORT.EXPORTS' as const,
  type: 'UID_DEVICE_INVENTORY',
  definition: {
    queryElements: {
      columns: ['SERIAL_NUMBER', 'DEVICE_MODEL'],
      filterCriteria: [{ key: 'unassigned_only', operator: 'EQ' as const, value: 'true' }],
    },
    enrollment: { delivery: { format, email: { subject: name, recipients } } },
  },
});

describe('reporting and consumption analytics conformance', () => {
  it('reporting v1: metadata, export stages, e-mail, download, expiry', async () => {
    const { operator, observer, sim } = t;
    // `filter`, `select` and `sort` are required on this list (published).
    const metadata = await observer.reporting.listReportExportsMetadata(METADATA_QUERY);
    const types = (metadata.body.items as JsonBody[]).map((entry) => entry.type);
    expect(types).toEqual(expect.arrayContaining(['SUBSCRIPTION', 'UID_DEVICE_INVENTORY']));
    expect(metadata.body.total).toBeGreaterThan(2);
    // Reporting pages 0–100: limit=0 answers just the total.
    expect((await observer.reporting.listReportExportsMetadata({ ...METADATA_QUERY, limit: 0 })).body).toMatchObject({
      items: [],
      count: 0,
      total: metadata.body.total,
    });

    const accepted = await operator.reporting.createReportExport({
      body: exportBody('Conformance devices', 'CSV', ['ops@conformance.example']),
    });
    expect(accepted.status).toBe(202);
    const { id } = accepted.body as JsonBody;
    expect(accepted.body).toEqual({ id, name: 'Conformance devices' });
    expect(accepted.headers.location).toBe(`/reporting/v1/async-operations/${id}`);
    expect(accepted.headers.deprecation).toBeUndefined();
    const first = (await observer.reporting.getReportStatus({ id })).body as JsonBody;
    // The simulated clock runs fast: on a loaded machine the export may already be generating.
    expect(['report submission', 'in queue', 'generating']).toContain(first.stage);
    expect(first.reportDownloadUrl).toBe('');

    const done = await follow(observer, accepted);
    expect(done).toMatchObject({ outcome: 'succeeded', flavour: 'reporting', operation: { state: 'SUCCEEDED' } });
    const status = (await observer.reporting.getReportStatus({ id })).body as JsonBody;
    expect(status).toMatchObject({
      status: 'COMPLETED',
      stage: 'completed',
      isExpired: 'false',
      recipientEmailId: 'ops@conformance.example',
      userName: 'sim-operator',
    });
    expect(done.operation.results).toEqual([expect.objectContaining({ resourceUri: status.reportDownloadUrl })]);
    const listed = await observer.reporting.listReportStatuses({ filter: "status eq 'COMPLETED'" });
    expect((listed.body.items as JsonBody[]).map((entry) => entry.id)).toContain(id);
    // `filter` is required on this list: the client refuses before sending (the simulator would answer 400).
    await expect(observer.invoke('reporting.listReportStatuses', {})).rejects.toThrow(
      /needs the query parameter 'filter'/,
    );

    const download = await fetch(status.reportDownloadUrl);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-disposition')).toBe('attachment; filename="conformance-devices.csv"');
    expect((await download.text()).split('\n')[0]).toBe('SERIAL_NUMBER,DEVICE_MODEL');
    const mail = ((await (await fetch(`${sim.url}/_sim/outbox`)).json()) as { items: JsonBody[] }).items;
    expect(mail).toContainEqual(
      expect.objectContaining({
        to: ['ops@conformance.example'],
        links: [status.reportDownloadUrl],
        kind: 'report-export',
      }),
    );

    // The default expiry: a day after completion the URL is empty and the download gone.
    sim.control.clock.advance(24 * 60 * MINUTE_MS);
    expect((await observer.reporting.getReportStatus({ id })).body).toMatchObject({
      isExpired: 'true',
      reportDownloadUrl: '',
    });
    expect((await fetch(status.reportDownloadUrl)).status).toBe(410);
  });

  it('reporting v1alpha1: the same answers with Deprecation, Sunset and Link', async () => {
    const { operator, observer } = t;
    const deprecated = (result: { headers: Record<string, string> }, successor: string) => {
      expect(result.headers.deprecation).toBe('@1741737600');
      expect(result.headers.sunset).toBe('Thu, 30 Apr 2026 00:00:00 GMT');
      expect(result.headers.link).toBe(`<${successor}>; rel="successor-version"`);
    };
    const metadata = await observer.reportingV1alpha1.listReportExportsMetadata(METADATA_QUERY);
    deprecated(metadata, '/reporting/v1/report-exports-metadata');
    expect(metadata.body).toEqual((await observer.reporting.listReportExportsMetadata(METADATA_QUERY)).body);
    const accepted = await operator.reportingV1alpha1.createReportExport({
      body: exportBody('Conformance alpha', 'TXT', ['alpha@conformance.example']),
    });
    deprecated(accepted, '/reporting/v1/report-exports');
    const { id } = accepted.body as JsonBody;
    expect(accepted.headers.location).toBe(`/reporting/v1alpha1/async-operations/${id}`);
    const done = await follow(observer, accepted);
    expect(done.outcome).toBe('succeeded');
    const operation = await observer.reportingV1alpha1.getAsyncOperation({ id });
    deprecated(operation, `/reporting/v1/async-operations/${id}`);
    expect(operation.body).toMatchObject({ id, state: 'SUCCEEDED' });
    const status = await observer.reportingV1alpha1.getReportStatus({ id });
    deprecated(status, `/reporting/v1/statuses/${id}`);
    expect((status.body as JsonBody).reportDownloadUrl).toMatch(/\/_sim\/downloads\//);
    const listed = await observer.reportingV1alpha1.listReportStatuses({ filter: `id eq '${id}'` });
    deprecated(listed, '/reporting/v1/statuses');
    expect(listed.body.count).toBe(1);
    const text = await (await fetch((status.body as JsonBody).reportDownloadUrl)).text();
    expect(text.length).toBeGreaterThan(0);
  });

  it('reporting: a failed export ends FAILED with its error, the stage failed, no download', async () => {
    const { operator, observer } = t;
    const accepted = await operator.reporting.createReportExport({
      body: exportBody('Conformance broken', 'PDF', ['ops@conformance.example']),
    });
    const done = await follow(observer, accepted);
    expect(done).toMatchObject({ outcome: 'failed', operation: { state: 'FAILED', results: [] } });
    expect(done.operation.error).toMatchObject({ debugId: expect.any(String), message: expect.any(String) });
    const status = (await observer.reporting.getReportStatus({ id: (accepted.body as JsonBody).id })).body as JsonBody;
    expect(status).toMatchObject({ status: 'FAILED', stage: 'failed', reportDownloadUrl: '' });
  });

  it('consumption analytics: report list, definition, CSV attachment', async () => {
    const { observer } = t;
    // Reports live in one region each; together the three regions list them all.
    const byRegion = await Promise.all(
      ['us-west', 'ap-northeast', 'eu-central'].map((region) =>
        observer.consumptionAnalytics.listReports({}, { region }),
      ),
    );
    const reports = byRegion.flatMap((result) => result.body as JsonBody[]);
    expect(reports).toHaveLength(5);
    expect(Array.isArray(byRegion[0]!.body)).toBe(true);
    // Consumption analytics has three regions: the client refuses a fourth before sending.
    await expect(observer.consumptionAnalytics.listReports({}, { region: 'eu-west' })).rejects.toThrow(
      /not served in region 'eu-west'/,
    );
    const region = ['us-west', 'ap-northeast', 'eu-central'][
      byRegion.findIndex((result) => (result.body as JsonBody[]).length > 0)
    ]!;
    const [report] = byRegion.find((result) => (result.body as JsonBody[]).length > 0)!.body as JsonBody[];
    const definition = (await observer.consumptionAnalytics.getReport({ id: report.id }, { region })).body as JsonBody;
    expect(definition).toMatchObject({ id: report.id, name: report.name });
    expect(definition.columns.length).toBeGreaterThan(0);

    const saved = await observer.download('consumptionAnalytics.downloadReportContents', { id: report.id }, dir, {
      region,
    });
    expect(saved.filename).toMatch(/\.csv$/);
    expect(saved.contentType).toMatch(/^text\/csv/);
    const lines = readFileSync(saved.path!, 'utf8').trimEnd().split('\n');
    expect(lines[0]).toContain('sys_Product_s');
    expect(lines).toHaveLength(251);
    // The same seed gives the same rows.
    const again = await observer.invoke('consumptionAnalytics.downloadReportContents', { id: report.id }, { region });
    expect(again.body).toBe(readFileSync(saved.path!, 'utf8'));
    const raw = await fetch(`${t.sim.url}/regions/${region}/consumption-analytics/v1/reports/${report.id}/contents`, {
      headers: {
        authorization: `Bearer ${((await (await fetch(`${t.sim.authUrl}/as/token.oauth2`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials&client_id=sim-observer&client_secret=sim-observer-secret' })).json()) as JsonBody).access_token}`,
      },
    });
    expect(raw.headers.get('content-disposition')).toMatch(/^attachment; filename=".+\.csv"$/);
    await raw.body?.cancel();
  });

  it('consumption analytics v2: paged list, definition, usage fields, rows and CSV of a saved or ad-hoc report', async () => {
    const { observer } = t;
    const region = 'us-west';
    const listed = await observer.consumptionAnalytics.listReportsV2({ limit: 1 }, { region });
    expect(listed.body).toMatchObject({ count: 1, offset: 0, total: 2 });
    const [report] = listed.body.items as JsonBody[];
    expect(report).toMatchObject({
      id: expect.any(String),
      name: expect.any(String),
      generation: '1',
      createdAt: expect.stringMatching(/Z$/),
    });
    const definition = (await observer.consumptionAnalytics.getReportV2({ id: report.id }, { region }))
      .body as JsonBody;
    expect(definition).toMatchObject({
      id: report.id,
      name: report.name,
      created: { time: expect.stringMatching(/Z$/) },
    });
    const fields = (await observer.consumptionAnalytics.listUsageFieldsV2({}, { region })).body as JsonBody[];
    expect(fields.map((field) => field.fieldName)).toEqual([
      'sys_Product_s',
      'sys_Cost_f',
      'sys_AccountingDate_d',
      'ext_CostCenter_s',
    ]);

    // A saved report over the last 7 days: one row per product, date and cost center, cost summed.
    const saved = await observer.consumptionAnalytics.executeReportV2(
      { id: report.id, body: { relativeDate: 'LAST_7_DAYS' } },
      { region },
    );
    const rows = saved.body.items as JsonBody[];
    expect(saved.body.totalCount).toBe(rows.length);
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows.map((row) => row.sys_AccountingDate_d)).size).toBeLessThanOrEqual(7);
    // The v1 contents hold the same rows: the sums agree.
    const csv = String(
      (await observer.invoke('consumptionAnalytics.downloadReportContents', { id: report.id }, { region })).body,
    )
      .trimEnd()
      .split('\n')
      .slice(1);
    const week = new Set(rows.map((row) => row.sys_AccountingDate_d));
    // Product, cost, date: the product may be quoted (it may hold a comma).
    const cellsOf = (line: string) => /^("(?:[^"]|"")*"|[^,]*),([^,]*),([^,]*),/.exec(line)!.slice(1);
    const fromCsv = csv
      .map(cellsOf)
      .filter((cells) => week.has(cells[2]!))
      .reduce((sum, cells) => sum + Number(cells[1]), 0);
    const fromRun = rows.reduce((sum, row) => sum + row.sys_Cost_f, 0);
    expect(Math.abs(fromRun - fromCsv)).toBeLessThan(0.05);
    const savedCsv = await observer.invoke(
      'consumptionAnalytics.executeReportCsvV2',
      { id: report.id, body: { relativeDate: 'LAST_7_DAYS' } },
      { region },
    );
    expect(String(savedCsv.body).split('\n')[0]).toBe('sys_Product_s,sys_Cost_f,sys_AccountingDate_d,ext_CostCenter_s');
    expect(savedCsv.headers['content-disposition']).toMatch(/^attachment; filename=".+\.csv"$/);

    // An ad-hoc definition: cost by product over every report of the region.
    const adHoc = {
      columns: [{ fieldName: 'sys_Product_s' }, { fieldName: 'sys_Cost_f', aggFunction: 'SUM' as const }],
      filter: {
        dateFilter: { type: 'RELATIVE' as const, relativeRange: 'LAST_30_DAYS' as const },
        fieldFilters: [{ name: 'sys_Product_s', operator: 'NOT_EQ' as const, values: ['Compute'] }],
      },
    };
    const byProduct = (await observer.consumptionAnalytics.executeReportDefinitionV2({ body: adHoc }, { region }))
      .body as JsonBody;
    expect(byProduct.items.map((row: JsonBody) => row.sys_Product_s)).not.toContain('Compute');
    expect(byProduct.items.length).toBe(5);
    const adHocCsv = await observer.invoke(
      'consumptionAnalytics.executeReportDefinitionCsvV2',
      { body: adHoc },
      { region },
    );
    expect(String(adHocCsv.body).trimEnd().split('\n')).toHaveLength(6);
    // Unknown fields are refused with the field named.
    const refused = await answerOf(
      observer.consumptionAnalytics.executeReportDefinitionV2(
        { body: { ...adHoc, columns: [{ fieldName: 'colour' }] } },
        { region },
      ),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain("Unknown usage field 'colour'");
  });
});
