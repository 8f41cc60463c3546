import { describe, expect, it } from 'vitest';
import type { Readable } from 'node:stream';
import { createTestContext } from '../../testing.js';
import { devicesArea } from '../devices/devices-area.js';
import { createAreaHarness } from '../subscriptions/area-harness.js';
import { subscriptionsArea } from '../subscriptions/subscriptions-area.js';
import { usersArea } from '../users/users-area.js';
import { reportingArea } from './reporting-area.js';

function setup(config: Record<string, unknown> = {}) {
  const subscriptions = subscriptionsArea.createState(createTestContext({ areaKey: 'subscriptions' }));
  const devices = devicesArea.createState(createTestContext({ areaKey: 'devices', states: { subscriptions } }));
  const users = usersArea.createState(createTestContext({ areaKey: 'users' }));
  const harness = createAreaHarness(reportingArea, { config, states: { subscriptions, devices, users } });
  const [download] = reportingArea.extraRoutes!(harness.state, harness.ctx);
  return { ...harness, subscriptions, download: download! };
}

const exportBody = (overrides: Record<string, unknown> = {}) => ({
  name: 'Nightly subscription inventory',
  kind: 'REPORT.EXPORTS',
  type: 'SUBSCRIPTION',
  definition: {
    queryElements: {
      columns: ['SUBSCRIPTION_KEY', 'AVAILABLE_QUANTITY'],
      filterCriteria: [
        { key: 'sort_by', operator: 'EQ', value: 'SUBSCRIPTION_KEY' },
        { key: 'direction', operator: 'EQ', value: 'DESC' },
      ],
    },
    enrollment: {
      delivery: { format: 'CSV', email: { subject: 'Inventory', recipients: ['ops@example.com', 'cfo@example.com'] } },
    },
  },
  ...overrides,
});

async function text(stream: Readable | undefined): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream!) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

describe('reporting area', () => {
  it('lists the metadata entries of the reference and more, by the required filter, select and sort', async () => {
    const { call, rejection } = setup();
    const query = { filter: "kind eq 'REPORT.EXPORTS.METADATA'", select: 'type,name,columns', sort: 'type desc' };
    const page = (await call('reporting.listReportExportsMetadata', { query })).body as {
      items: Array<{ id: string; type: string; kind: string; name: string }>;
      total: number;
    };
    expect(page.items.map((m) => m.type)).toEqual(['USER_INVENTORY', 'UID_DEVICE_INVENTORY', 'SUBSCRIPTION']);
    expect(
      page.items.every(
        (m) => /^[0-9a-f-]{36}$/.test(m.id) && m.kind === 'REPORT.EXPORTS.METADATA' && m.name.length > 0,
      ),
    ).toBe(true);
    const one = (
      await call('reporting.listReportExportsMetadata', { query: { ...query, filter: "type eq 'SUBSCRIPTION'" } })
    ).body as { items: Array<{ name: string }> };
    expect(one.items.map((m) => m.name)).toEqual(['Subscriptions']);
    expect(
      (await rejection('reporting.listReportExportsMetadata', { query: { ...query, select: 'colour' } })).message,
    ).toContain('colour');
  });

  it('moves an export through its stages, e-mails recipients and serves the download until expiry', async () => {
    const { ctx, call, download, subscriptions } = setup({ exportExpiryMinutes: 60 });
    const accepted = await call('reporting.createReportExport', { method: 'POST', body: exportBody() });
    expect(accepted.status).toBe(202);
    const { id } = accepted.body as { id: string };
    expect(accepted.body).toEqual({ id, name: exportBody().name });
    expect(accepted.headers?.Location).toBe(`/reporting/v1/async-operations/${id}`);
    const status = async () =>
      (await call('reporting.getReportStatus', { params: { id } })).body as Record<string, unknown>;
    expect(await status()).toMatchObject({
      status: 'SUBMITTED',
      stage: 'report submission',
      reportDownloadUrl: '',
      isExpired: 'false',
      reportType: 'SUBSCRIPTION',
      userName: 'sim-admin',
    });
    ctx.advance(30_000);
    expect(await status()).toMatchObject({ status: 'IN_QUEUE', stage: 'in queue' });
    ctx.advance(70_000);
    expect(await status()).toMatchObject({ status: 'GENERATING', stage: 'generating' });
    expect(ctx.outbox).toHaveLength(0);
    ctx.advance(100_000);
    const done = await status();
    expect(done).toMatchObject({
      status: 'COMPLETED',
      stage: 'completed',
      isExpired: 'false',
      recipientEmailId: 'ops@example.com,cfo@example.com',
    });
    const url = done.reportDownloadUrl as string;
    expect(url).toMatch(new RegExp(`^http://127.0.0.1:0/_sim/downloads/${id}\\?signature=[0-9a-f]{32}$`));
    expect(ctx.asyncOps.get(id)?.outcome).toMatchObject({
      status: 'SUCCEEDED',
      results: [{ name: 'Nightly subscription inventory', resourceUri: url }],
    });
    expect(ctx.outbox).toEqual([
      expect.objectContaining({
        to: ['ops@example.com', 'cfo@example.com'],
        subject: 'Inventory',
        links: [url],
        kind: 'report-export',
      }),
    ]);

    const signature = new URL(url).searchParams.get('signature')!;
    const file = await download.handler(ctx.request('_sim.downloadReport', { params: { id }, query: { signature } }));
    expect(file.headers).toMatchObject({
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': 'attachment; filename="nightly-subscription-inventory.csv"',
    });
    const lines = (await text(file.stream)).toString().trimEnd().split('\n');
    expect(lines[0]).toBe('SUBSCRIPTION_KEY,AVAILABLE_QUANTITY');
    expect(lines.slice(1)).toEqual(
      [...subscriptions.subscriptions]
        .sort((a, b) => (a.key < b.key ? 1 : -1))
        .map((s) => `${s.key},${s.availableQuantity}`),
    );
    await expect(
      Promise.resolve().then(() =>
        download.handler(ctx.request('_sim.downloadReport', { params: { id }, query: { signature: 'forged' } })),
      ),
    ).rejects.toMatchObject({ status: 403 });

    ctx.advance(60 * 60_000);
    expect(await status()).toMatchObject({ isExpired: 'true', reportDownloadUrl: '', status: 'COMPLETED' });
    await expect(
      Promise.resolve().then(() =>
        download.handler(ctx.request('_sim.downloadReport', { params: { id }, query: { signature } })),
      ),
    ).rejects.toMatchObject({ status: 410 });
  });

  it('renders the requested format', async () => {
    const { ctx, call, download } = setup();
    const formats = {
      PDF: ['application/pdf', '%PDF-1.4'],
      EXCEL: ['application/vnd.ms-excel', '<?xml'],
      TXT: ['text/plain; charset=utf-8', 'SERIAL_NUMBER\tDEVICE_MODEL'],
    } as const;
    for (const [format, [contentType, start]] of Object.entries(formats)) {
      const body = exportBody({
        type: 'UID_DEVICE_INVENTORY',
        definition: {
          queryElements: { columns: ['SERIAL_NUMBER', 'DEVICE_MODEL'] },
          enrollment: { delivery: { format } },
        },
      });
      const { id } = (await call('reporting.createReportExport', { body })).body as { id: string };
      ctx.advance(200_000);
      const url = new URL(
        ((await call('reporting.getReportStatus', { params: { id } })).body as { reportDownloadUrl: string })
          .reportDownloadUrl,
      );
      const file = await download.handler(
        ctx.request('_sim.downloadReport', {
          params: { id },
          query: { signature: url.searchParams.get('signature')! },
        }),
      );
      expect(file.headers?.['content-type']).toBe(contentType);
      const bytes = await text(file.stream);
      expect(bytes.toString('latin1').startsWith(start)).toBe(true);
      if (format === 'PDF') expect(bytes.toString('latin1').trimEnd().endsWith('%%EOF')).toBe(true);
    }
    expect(ctx.outbox).toHaveLength(0);
  });

  it('fails a pinned export: stage failed, no e-mail, no URL', async () => {
    const { ctx, call } = setup({ failReportNames: ['Broken'] });
    const { id } = (await call('reporting.createReportExport', { body: exportBody({ name: 'Broken' }) })).body as {
      id: string;
    };
    ctx.advance(200_000);
    expect((await call('reporting.getReportStatus', { params: { id } })).body).toMatchObject({
      status: 'FAILED',
      stage: 'failed',
      reportDownloadUrl: '',
    });
    expect(ctx.asyncOps.get(id)?.outcome?.status).toBe('FAILED');
    expect(ctx.outbox).toHaveLength(0);
  });

  it('refuses unknown types, columns, filters and operators', async () => {
    const { rejection } = setup();
    expect((await rejection('reporting.createReportExport', { body: exportBody({ type: 'NOPE' }) })).message).toBe(
      "Unknown report type 'NOPE'",
    );
    // The published body requires nothing; the export still needs its name, type, columns and format.
    expect((await rejection('reporting.createReportExport', { body: undefined })).message).toBe(
      'The report export needs name',
    );
    expect(
      (
        await rejection('reporting.createReportExport', {
          body: { name: 'x', type: 'SUBSCRIPTION', definition: { queryElements: { columns: [] } } },
        })
      ).message,
    ).toBe('The report export needs definition.enrollment.delivery.format');
    const bad = (queryElements: unknown) =>
      exportBody({ definition: { queryElements, enrollment: { delivery: { format: 'CSV' } } } });
    expect(
      (await rejection('reporting.createReportExport', { body: bad({ columns: ['SERIAL_NUMBER'] }) })).message,
    ).toContain("Column 'SERIAL_NUMBER' is not in the SUBSCRIPTION metadata");
    expect(
      (
        await rejection('reporting.createReportExport', {
          body: bad({ columns: ['SUBSCRIPTION_KEY'], filterCriteria: [{ key: 'colour', operator: 'EQ', value: 'x' }] }),
        })
      ).message,
    ).toContain("Filter 'colour'");
    expect(
      (
        await rejection('reporting.createReportExport', {
          body: bad({
            columns: ['SUBSCRIPTION_KEY'],
            filterCriteria: [{ key: 'product_type', operator: 'GT', value: 'x' }],
          }),
        })
      ).message,
    ).toContain('does not support GT');
  });

  it('lists statuses with a required filter limited to eq ne gt ge lt', async () => {
    const { call, rejection } = setup();
    await call('reporting.createReportExport', { body: exportBody() });
    await call('reporting.createReportExport', {
      body: exportBody({
        type: 'USER_INVENTORY',
        definition: { queryElements: { columns: ['USERNAME'] }, enrollment: { delivery: { format: 'CSV' } } },
      }),
    });
    const page = (await call('reporting.listReportStatuses', { query: { filter: "reportType eq 'USER_INVENTORY'" } }))
      .body as { items: unknown[]; total: number };
    expect(page.total).toBe(1);
    expect(
      (await call('reporting.listReportStatuses', { query: { filter: "isExpired eq 'false'" } })).body,
    ).toMatchObject({ total: 2 });
    expect((await rejection('reporting.listReportStatuses', {})).message).toContain('filter is required');
    expect(
      (await rejection('reporting.listReportStatuses', { query: { filter: 'startTime le 2030-01-01T00:00:00Z' } }))
        .message,
    ).toContain("operator 'le' is not supported");
  });

  it('answers v1alpha1 as v1 (the server adds its deprecation headers: test/simulator/reporting.test.ts)', async () => {
    const { call } = setup();
    const accepted = await call('reportingV1alpha1.createReportExport', { body: exportBody() });
    const { id } = accepted.body as { id: string };
    expect(accepted.headers).toMatchObject({ Location: `/reporting/v1alpha1/async-operations/${id}` });
    const status = await call('reportingV1alpha1.getReportStatus', { params: { id } });
    expect(status.body).toMatchObject({ id, resourceUri: `/reporting/v1alpha1/statuses/${id}` });
    const query = { filter: "kind eq 'REPORT.EXPORTS.METADATA'", select: 'type', sort: 'type' };
    const v1 = await call('reporting.listReportExportsMetadata', { query });
    expect((await call('reportingV1alpha1.listReportExportsMetadata', { query })).body).toEqual(v1.body);
  });
});
