import { afterEach, describe, expect, it } from 'vitest';
import { startTestSimulator, type JsonBody } from './core-helpers.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

describe('consumption analytics through HTTP', () => {
  it('lists per region (bare array) and serves definitions', async () => {
    const t = await startTestSimulator();
    close = () => t.sim.close();
    const all = (await t.call('GET', '/consumption-analytics/v1/reports')).body as JsonBody[];
    expect(all).toHaveLength(5);
    const west = (await t.call('GET', '/regions/us-west/consumption-analytics/v1/reports')).body as JsonBody[];
    expect(west.length).toBeGreaterThan(0);
    expect(west.length).toBeLessThan(5);
    const definition = await t.call('GET', `/regions/us-west/consumption-analytics/v1/reports/${west[0].id}`);
    expect(definition.body).toMatchObject({ id: west[0].id, sharing: {}, columns: expect.any(Array) as unknown });
    const elsewhere = all.find((r) => !west.some((w) => w.id === r.id))!;
    expect((await t.call('GET', `/regions/us-west/consumption-analytics/v1/reports/${elsewhere.id}`)).status).toBe(404);
    expect(t.sim.control.violations()).toEqual([]);
  });

  it('streams 50 MB of CSV as an attachment while the server process stays small', async () => {
    const t = await startTestSimulator({ world: { consumptionAnalytics: { rowsPerReport: 1_300_000 } } });
    close = () => t.sim.close();
    const [report] = (await t.call('GET', '/consumption-analytics/v1/reports')).body as JsonBody[];
    const response = await fetch(`${t.sim.url}/consumption-analytics/v1/reports/${report.id}/contents`, {
      headers: { authorization: `Bearer ${await t.token()}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename=".+\.csv"$/);
    const rssBefore = process.memoryUsage().rss;
    let bytes = 0;
    let peakRss = 0;
    let header = '';
    for await (const chunk of response.body!) {
      if (header === '') header = Buffer.from(chunk).toString().split('\n')[0]!;
      bytes += chunk.length;
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }
    expect(header).toBe('sys_Product_s,sys_Cost_f,sys_AccountingDate_d,ext_CostCenter_s');
    expect(bytes).toBeGreaterThan(50 * 1024 * 1024);
    // Server and client share this process: a buffered report would add 50+ MB (twice, as UTF-16 text).
    expect(peakRss - rssBefore).toBeLessThan(45 * 1024 * 1024);
  }, 60_000);
});
