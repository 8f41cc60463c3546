import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { resolveInputs } from '../../src/engine/inputs.js';
import { loadPlaybook, resolvePlaybookRef } from '../../src/playbook/index.js';
import { failures, startBundledHarness, type BundledHarness } from './harness.js';

let harness: BundledHarness | undefined;
let directory: string | undefined;
let webhook: Server | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  if (directory) rmSync(directory, { recursive: true, force: true });
  directory = undefined;
  await new Promise((resolve) => (webhook ? webhook.close(resolve) : resolve(undefined)));
  webhook = undefined;
});

interface ExportOutputs {
  statusId: string;
  downloadUrl: string;
  recipients: string[];
}

it('nightly-report-export: posts the export, waits for it, outputs the URL, and the e-mail lands in the outbox', async () => {
  const h = (harness = await startBundledHarness());
  const recipients = ['ops@example.com', 'finance@example.com'];
  const result = await h.run('nightly-report-export', {
    reportType: 'SUBSCRIPTION',
    columns: ['SUBSCRIPTION_KEY', 'SUBSCRIPTION_TYPE', 'QUANTITY'],
    filters: [{ key: 'sort_by', value: 'SUBSCRIPTION_KEY' }],
    format: 'CSV',
    recipients,
    subject: 'Subscriptions tonight',
  });
  expect(result.status, failures(result)).toBe('succeeded');
  const outputs = result.outputs as ExportOutputs;
  expect(outputs.downloadUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/_sim\/downloads\//);
  const mail = h.sim.control.outbox().find((message) => message.subject === 'Subscriptions tonight');
  expect(mail?.to).toEqual(recipients);
  expect(mail?.links).toContain(outputs.downloadUrl);
  // The export asked for exactly the columns and filter given.
  const [posted] = h.sim.control.requests({ operationId: 'reporting.createReportExport' });
  expect(posted?.status).toBe(202);
  const download = await fetch(outputs.downloadUrl);
  expect((await download.text()).split('\n')[0]).toMatch(/SUBSCRIPTION_KEY.*SUBSCRIPTION_TYPE.*QUANTITY/);
});

it('nightly-report-export: fails clearly when the report fails to generate, and refuses unknown columns before posting', async () => {
  const h = (harness = await startBundledHarness({ world: { reporting: { failReportNames: ['doomed'] } } }));
  const failed = await h.run('nightly-report-export', { name: 'doomed', recipients: ['ops@example.com'] });
  expect(failed.status).toBe('failed');
  expect(failed.error?.message).toMatch(/could not be generated/);
  expect(h.sim.control.outbox()).toEqual([]);

  const unknown = await h.run('nightly-report-export', {
    columns: ['SUBSCRIPTION_KEY', 'NO_SUCH_COLUMN'],
    recipients: ['ops@example.com'],
  });
  expect(unknown.status).toBe('failed');
  expect(unknown.error?.message).toMatch(/NO_SUCH_COLUMN.*not columns of SUBSCRIPTION/);
  expect(h.sim.control.requests({ operationId: 'reporting.createReportExport' })).toHaveLength(1);
});

it('nightly-report-export: recipients are required, as the platform requires them: none is refused before anything runs', async () => {
  const { playbook } = loadPlaybook(resolvePlaybookRef('nightly-report-export', process.cwd()));
  expect(playbook?.inputs.recipients).toMatchObject({ required: true });
  expect(() => resolveInputs(playbook?.inputs ?? {}, {}, 'nightly-report-export')).toThrow(
    /input 'recipients' \(array\) is required/,
  );
  expect(() => resolveInputs(playbook?.inputs ?? {}, { recipients: [] }, 'nightly-report-export')).toThrow(
    /input 'recipients' must NOT have fewer than 1 items/,
  );
});

it('nightly-report-export: a dry run reads the metadata and posts nothing', async () => {
  const h = (harness = await startBundledHarness());
  const result = await h.run('nightly-report-export', { recipients: ['ops@example.com'] }, { dryRun: true });
  expect(result.status, failures(result)).toBe('succeeded');
  expect(result.simulatedSteps).toEqual(['export']);
  expect(h.sim.control.requests({ operationId: 'reporting.createReportExport' })).toEqual([]);
});

it('consumption-report-download: streams the CSV to a dated file and posts rows and total cost to the webhook', async () => {
  const h = (harness = await startBundledHarness());
  directory = mkdtempSync(join(tmpdir(), 'fleetbook-consumption-'));
  const received: Array<{ headers: Record<string, unknown>; body: Record<string, unknown> }> = [];
  webhook = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString()));
    request.on('end', () => {
      received.push({ headers: request.headers, body: JSON.parse(text) as Record<string, unknown> });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => webhook?.listen(0, '127.0.0.1', resolve));
  const address = webhook.address() as { port: number };
  const result = await h.run('consumption-report-download', {
    reportName: 'Monthly cost by product',
    directory,
    webhookUrl: `http://127.0.0.1:${address.port}/hook`,
    webhookToken: 'hook-secret',
  });
  expect(result.status, failures(result)).toBe('succeeded');
  const outputs = result.outputs as { file: string; rows: number; totalCost: number };
  expect(outputs.file).toMatch(/monthly-cost-by-product-\d{4}-\d{2}-\d{2}\.csv$/);
  const lines = readFileSync(outputs.file, 'utf8').trim().split('\n');
  expect(lines[0]).toContain('sys_Cost_f');
  expect(outputs.rows).toBe(lines.length - 1);
  const fields = (line: string): string[] => line.replace(/"[^"]*"/g, '""').split(',');
  const costAt = fields(lines[0]!).indexOf('sys_Cost_f');
  const total = lines.slice(1).reduce((sum, line) => sum + Number(fields(line)[costAt] || 0), 0);
  expect(total).toBeGreaterThan(0);
  expect(received).toHaveLength(1);
  const posted = received[0]?.body as { rows: number; totalCost: number };
  expect(received[0]?.body).toMatchObject({ report: 'Monthly cost by product', file: outputs.file });
  // What was posted is what the saved file holds: its rows, and its cost total to the cent.
  expect(posted.rows).toBe(lines.length - 1);
  expect(Math.abs(posted.totalCost - total)).toBeLessThanOrEqual(0.005 + 1e-9);
  expect(outputs.totalCost).toBe(posted.totalCost);
  // The rows and the total were counted as the CSV streamed to the file: one download, not two.
  expect(h.sim.control.requests({ operationId: 'consumptionAnalytics.downloadReportContents' })).toHaveLength(1);
  expect(received[0]?.headers.authorization).toBe('Bearer hook-secret');
  expect(JSON.stringify(h.lines())).not.toContain('hook-secret');
});

it('consumption-report-download: names the reports of the region when the name is unknown', async () => {
  const h = (harness = await startBundledHarness());
  const result = await h.run('consumption-report-download', { reportName: 'No such report' });
  expect(result.status).toBe('failed');
  expect(result.error?.message).toMatch(
    /no report named 'No such report' in us-west \(reports: .*Monthly cost by product/,
  );
});

it('nightly-report-export: fails clearly when the finished report has expired by the time its status is read', async () => {
  // A link valid for a few simulated microseconds: expired at the first status read after completion.
  const h = (harness = await startBundledHarness({ world: { reporting: { exportExpiryMinutes: 0.000001 } } }));
  const result = await h.run('nightly-report-export', { name: 'stale', recipients: ['ops@example.com'] });
  expect(result.status).toBe('failed');
  expect(result.error?.message).toBe('report stale has expired; export it again');
  const [status] = h.sim.control.requests({ operationId: 'reporting.getReportStatus' });
  expect(status?.status).toBe(200);
  expect((result.outputs as { downloadUrl?: string } | undefined)?.downloadUrl ?? '').toBe('');
});

it('nightly-report-export: a PDF export downloads as a PDF', async () => {
  const h = (harness = await startBundledHarness());
  const result = await h.run('nightly-report-export', {
    name: 'subscriptions pdf',
    format: 'PDF',
    recipients: ['ops@example.com'],
    subject: 'PDF tonight',
  });
  expect(result.status, failures(result)).toBe('succeeded');
  const outputs = result.outputs as ExportOutputs & { format: string };
  expect(outputs.format).toBe('PDF');
  const download = await fetch(outputs.downloadUrl);
  expect(download.status).toBe(200);
  expect(download.headers.get('content-type')).toBe('application/pdf');
  expect(download.headers.get('content-disposition')).toMatch(/filename="subscriptions-pdf\.pdf"/);
  expect(
    Buffer.from(await download.arrayBuffer())
      .subarray(0, 5)
      .toString('latin1'),
  ).toBe('%PDF-');
  expect(h.sim.control.outbox().find((message) => message.subject === 'PDF tonight')?.links).toContain(
    outputs.downloadUrl,
  );
});

it('nightly-report-export: its expiry check also fires when a finished status has no download URL at all', async () => {
  const loaded = loadPlaybook(resolvePlaybookRef('nightly-report-export', process.cwd()));
  const check = loaded.playbook?.steps.find((step) => step.kind === 'fail' && /has expired/.test(JSON.stringify(step)));
  expect(check?.if).toBeDefined();
  const fires = async (body: Record<string, unknown>): Promise<unknown> =>
    check?.if?.evaluate({
      inputs: { name: 'n' },
      steps: { status: { status: 'succeeded', outputs: { body: { status: 'COMPLETED', ...body } } } },
      run: { id: 'r', playbook: 'nightly-report-export', dryRun: false, startedAt: '2026-01-01T00:00:00Z' },
      env: {},
    });
  // isExpired is a string on the platform.
  expect(await fires({ isExpired: 'false' })).toBe(true);
  expect(await fires({ isExpired: 'false', reportDownloadUrl: '' })).toBe(true);
  expect(await fires({ isExpired: 'true', reportDownloadUrl: 'http://x/_sim/downloads/1' })).toBe(true);
  expect(await fires({ isExpired: 'false', reportDownloadUrl: 'http://x/_sim/downloads/1' })).toBe(false);
});

it('nightly-report-export: a status without its status field fails the run instead of passing for completed', async () => {
  const loaded = loadPlaybook(resolvePlaybookRef('nightly-report-export', process.cwd()));
  const check = loaded.playbook?.steps.find(
    (step) => step.kind === 'fail' && /failed at stage/.test(JSON.stringify(step)),
  );
  const fires = async (body: Record<string, unknown>): Promise<unknown> =>
    check?.if?.evaluate({
      inputs: { name: 'n' },
      steps: { status: { status: 'succeeded', outputs: { body } } },
      run: { id: 'r', playbook: 'nightly-report-export', dryRun: false, startedAt: '2026-01-01T00:00:00Z' },
      env: {},
    });
  expect(await fires({ stage: 'completed', isExpired: 'false' })).toBe(true);
  expect(await fires({ status: 'FAILED' })).toBe(true);
  expect(await fires({ status: 'COMPLETED' })).toBe(false);
});
