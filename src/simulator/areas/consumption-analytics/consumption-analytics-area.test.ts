import { describe, expect, it } from 'vitest';
import type { Readable } from 'node:stream';
import { createAreaHarness } from '../subscriptions/area-harness.js';
import { consumptionAnalyticsArea } from './consumption-analytics-area.js';

async function text(stream: Readable | undefined): Promise<string> {
  let out = '';
  for await (const chunk of stream!) out += String(chunk);
  return out;
}

describe('consumption analytics area', () => {
  it('lists 5 reports as a bare array; a region sees only its own', async () => {
    const { state, call } = createAreaHarness(consumptionAnalyticsArea);
    const all = (await call('consumptionAnalytics.listReports')).body as Array<Record<string, unknown>>;
    expect(all).toHaveLength(5);
    expect(Object.keys(all[0]!)).not.toContain('region');
    const west = (await call('consumptionAnalytics.listReports', { region: 'us-west' })).body as Array<{ id: string }>;
    expect(west.map((r) => r.id)).toEqual(state.reports.filter((r) => r.region === 'us-west').map((r) => r.id));
    expect(west.length).toBeGreaterThan(0);
    expect(west.length).toBeLessThan(5);
  });

  it('serves a definition, 404 from another region', async () => {
    const { state, call, rejection } = createAreaHarness(consumptionAnalyticsArea);
    const report = state.reports[0]!;
    const definition = (
      await call('consumptionAnalytics.getReport', { params: { id: report.id }, region: report.region })
    ).body;
    expect(definition).toMatchObject({
      id: report.id,
      name: report.name,
      filter: { dateFilter: { relativeRange: 'LAST_90_DAYS' } },
      pivot: false,
    });
    expect(report.created.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/);
    const other = state.reports.find((r) => r.region !== report.region)!;
    expect(
      (await rejection('consumptionAnalytics.getReport', { params: { id: other.id }, region: report.region })).status,
    ).toBe(404);
  });

  it('streams CSV contents as an attachment, the same for every download', async () => {
    const { state, call } = createAreaHarness(consumptionAnalyticsArea, {
      config: { rowsPerReport: 2500, reportRows: [10] },
    });
    const first = state.reports[0]!;
    const response = await call('consumptionAnalytics.downloadReportContents', { params: { id: first.id } });
    expect(response.headers).toMatchObject({
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': 'attachment; filename="monthly-cost-by-product.csv"',
    });
    const csv = await text(response.stream);
    const lines = csv.trimEnd().split('\n');
    expect(lines[0]).toBe('sys_Product_s,sys_Cost_f,sys_AccountingDate_d,ext_CostCenter_s');
    expect(lines).toHaveLength(11);
    expect(
      await text((await call('consumptionAnalytics.downloadReportContents', { params: { id: first.id } })).stream),
    ).toBe(csv);
    const second = await text(
      (await call('consumptionAnalytics.downloadReportContents', { params: { id: state.reports[1]!.id } })).stream,
    );
    const rows = second.trimEnd().split('\n').slice(1);
    expect(rows).toHaveLength(2500);
    expect(rows.some((row) => row.endsWith(',""'))).toBe(true);
    expect(rows.some((row) => row.startsWith('"Private Cloud, managed"'))).toBe(true);
    for (const row of rows.slice(0, 50))
      expect(row).toMatch(/^("[^"]*"|[^,]+),\d+\.\d{2},\d{4}-\d{2}-\d{2},("[^"]*"|CC-\d{4})$/);
  });

  it('streams 50 MB without holding it in memory', async () => {
    const { state, call } = createAreaHarness(consumptionAnalyticsArea, { config: { rowsPerReport: 1_300_000 } });
    const response = await call('consumptionAnalytics.downloadReportContents', {
      params: { id: state.reports[0]!.id },
    });
    global.gc?.();
    const before = process.memoryUsage().heapUsed;
    let bytes = 0;
    let peak = 0;
    for await (const chunk of response.stream!) {
      bytes += (chunk as Buffer).length;
      peak = Math.max(peak, process.memoryUsage().heapUsed - before);
    }
    expect(bytes).toBeGreaterThan(50 * 1024 * 1024);
    // Garbage between collections, but nowhere near the size of the report.
    expect(peak).toBeLessThan(40 * 1024 * 1024);
  }, 60_000);
});
