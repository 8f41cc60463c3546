import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { playbook, startHarness, step, t, type Harness } from './harness.js';

let harness: Harness | undefined;
let dir: string | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const firstSystem = '${{ steps.catalog.outputs.body.items[0].systemsWithUpdatePath[0].id }}';
const catalog = step({
  id: 'catalog',
  kind: 'call',
  operationId: 'privateCloud.listSoftwareCatalogs',
  with: t({ filter: "version eq '2.4.0'" }),
});

it('repeats a read until its condition holds (until + poll), the step reading its own answer', async () => {
  // Prechecks take 5 simulated minutes: half a second here, several polls.
  const h = (harness = await startHarness({ timeScale: 600 }));
  const result = await h.run(
    playbook([
      catalog,
      step({
        id: 'start',
        kind: 'call',
        operationId: 'privateCloud.runSoftwarePrechecks',
        with: t({ id: firstSystem, body: { catalogVersion: '2.4.0' } }),
      }),
      step({
        id: 'state',
        kind: 'call',
        operationId: 'privateCloud.getSystem',
        with: t({ id: firstSystem }),
        until: t("${{ steps.state.outputs.body.softwareInfo.currentUpdateStatus.state = 'PRECHECK_COMPLETE' }}"),
        poll: { intervalMs: 20, timeoutMs: 10_000 },
      }),
    ]),
  );
  expect(result.status).toBe('succeeded');
  expect(h.sim.control.requests({ operationId: 'privateCloud.getSystem' }).length).toBeGreaterThan(1);
});

it('fails an until that never holds once its poll timeout passes', async () => {
  const h = (harness = await startHarness());
  const result = await h.run(
    playbook([
      step({
        id: 'never',
        kind: 'call',
        operationId: 'privateCloud.listSystems',
        with: t({}),
        until: t('${{ false }}'),
        poll: { intervalMs: 10, timeoutMs: 60 },
      }),
    ]),
  );
  expect(result.steps[0]).toMatchObject({ status: 'failed', error: { code: 'POLL_TIMEOUT' } });
});

it('gathers every page of a list (paginate: all)', async () => {
  const h = (harness = await startHarness());
  const result = await h.run(
    playbook(
      [
        step({
          id: 'all',
          kind: 'call',
          operationId: 'privateCloud.listSystems',
          with: t({ limit: 10 }),
          paginate: 'all',
          region: t('eu-west'),
        }),
      ],
      {
        outputs: t('${{ $count(steps.all.outputs.body.items) }}'),
      },
    ),
  );
  expect(result.status).toBe('succeeded');
  const onePage = await h.client.invoke('privateCloud.listSystems', { limit: 10 }, { region: 'eu-west' });
  expect(result.outputs).toBe((onePage.body as { total: number }).total);
});

it('streams a download to a file (saveTo) and runs parallel branches', async () => {
  const h = (harness = await startHarness());
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-save-'));
  const file = join(dir, 'report.csv');
  const result = await h.run(
    playbook([
      step({
        id: 'both',
        kind: 'parallel',
        branches: [
          [step({ id: 'reports', kind: 'call', operationId: 'consumptionAnalytics.listReports', with: t({}) })],
          [step({ id: 'systems', kind: 'call', operationId: 'privateCloud.listSystems', with: t({}) })],
        ],
      }),
      step({
        id: 'save',
        kind: 'call',
        operationId: 'consumptionAnalytics.downloadReportContents',
        with: t({ id: '${{ steps.reports.outputs.body[0].id }}' }),
        saveTo: t(file),
      }),
    ]),
  );
  expect(result.error).toBeUndefined();
  expect(result.steps.map((s) => [s.path, s.status])).toEqual([
    ['both', 'succeeded'],
    ['both.reports', 'succeeded'],
    ['both.systems', 'succeeded'],
    ['save', 'succeeded'],
  ]);
  const journal = (await h.store.journal(result.runId)).map((entry) => entry.event);
  const saved = journal.find((event) => event.type === 'step.finished' && event.path === 'save');
  const text = readFileSync(file, 'utf8');
  // Lines of the file as written, counted while streaming (a last line without a newline counts).
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  expect(lines).toBeGreaterThan(1);
  expect(saved).toMatchObject({ outputs: { body: { path: file, bytesWritten: Buffer.byteLength(text), lines } } });
  expect(text.split('\n')[0]).toMatch(/,/);
});

it('refuses a rendered input the operation does not take, naming it, before sending', async () => {
  const h = (harness = await startHarness());
  const result = await h.run(
    playbook([
      step({ id: 'bad', kind: 'call', operationId: 'privateCloud.listSystems', with: t({ limit: '${{ "ten" }}' }) }),
    ]),
  );
  expect(result.steps[0]).toMatchObject({
    status: 'failed',
    error: { code: 'INVALID_CALL_INPUT', message: expect.stringContaining('limit') },
  });
  expect(h.sim.control.requests({ operationId: 'privateCloud.listSystems' })).toEqual([]);
});
