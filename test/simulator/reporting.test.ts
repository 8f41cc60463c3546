import { afterEach, describe, expect, it } from 'vitest';
import { startTestSimulator, type JsonBody } from './core-helpers.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

const exportBody = {
  name: 'Nightly device inventory',
  kind: 'REPORT.EXPORTS',
  type: 'UID_DEVICE_INVENTORY',
  definition: {
    queryElements: {
      columns: ['SERIAL_NUMBER', 'DEVICE_MODEL'],
      filterCriteria: [{ key: 'unassigned_only', operator: 'EQ', value: 'true' }],
    },
    enrollment: { delivery: { format: 'CSV', email: { subject: 'Devices', recipients: ['ops@example.com'] } } },
  },
};

describe('reporting through HTTP', () => {
  for (const version of ['v1', 'v1alpha1'] as const) {
    it(`${version}: export stages, e-mail, download URL in the operation and the status`, async () => {
      const t = await startTestSimulator({ timeScale: 1e-6 });
      close = () => t.sim.close();
      const { call, sim } = t;
      const accepted = await call('POST', `/reporting/${version}/report-exports`, { body: exportBody });
      expect(accepted.status).toBe(202);
      const { id } = accepted.body;
      const location = accepted.headers.get('location')!;
      expect(location).toBe(`/reporting/${version}/async-operations/${id}`);
      if (version === 'v1alpha1') {
        expect(accepted.headers.get('deprecation')).toBe('@1741737600');
        expect(accepted.headers.get('sunset')).toMatch(/GMT$/);
        expect(accepted.headers.get('link')).toBe('</reporting/v1/report-exports>; rel="successor-version"');
      } else {
        expect(accepted.headers.get('deprecation')).toBeNull();
      }
      expect((await call('GET', `/reporting/${version}/statuses/${id}`)).body).toMatchObject({
        stage: 'report submission',
        reportDownloadUrl: '',
      });
      sim.control.clock.advance(60_000);
      expect((await call('GET', `/reporting/${version}/statuses/${id}`)).body).toMatchObject({
        status: 'IN_QUEUE',
        stage: 'in queue',
      });
      sim.control.clock.advance(10 * 60_000);
      const status = (await call('GET', `/reporting/${version}/statuses/${id}`)).body;
      expect(status).toMatchObject({ status: 'COMPLETED', isExpired: 'false' });
      const operation = (await call('GET', location)).body;
      expect(operation).toMatchObject({ state: 'SUCCEEDED', results: [{ resourceUri: status.reportDownloadUrl }] });
      expect(status.reportDownloadUrl).toMatch(new RegExp(`^${sim.url}/_sim/downloads/${id}\\?signature=`));
      const outbox = (await (await fetch(`${sim.url}/_sim/outbox`)).json()) as { items: JsonBody[] };
      expect(outbox.items).toEqual([
        expect.objectContaining({ to: ['ops@example.com'], links: [status.reportDownloadUrl], kind: 'report-export' }),
      ]);
      const listed = await call(
        'GET',
        `/reporting/${version}/statuses?filter=${encodeURIComponent("status eq 'COMPLETED'")}`,
      );
      expect(listed.body.total).toBe(1);
      expect((await call('GET', `/reporting/${version}/statuses`)).status).toBe(400);
      sim.control.clock.advance(25 * 60 * 60_000);
      // A day later the cached token has expired: ask for a new one.
      t.forget();
      expect((await call('GET', `/reporting/${version}/statuses/${id}`)).body).toMatchObject({
        isExpired: 'true',
        reportDownloadUrl: '',
      });
      expect(sim.control.violations()).toEqual([]);
    });
  }

  it('an export that would run past its timeoutMinutes ends TIMEDOUT then, without a fault, and sends no e-mail', async () => {
    // Exports of three hours in this world; the platform gives up after the record's timeoutMinutes.
    const t = await startTestSimulator({ timeScale: 1e-6, world: { reporting: { exportDurationSeconds: 3 * 3600 } } });
    close = () => t.sim.close();
    const { call, sim } = t;
    const accepted = await call('POST', '/reporting/v1/report-exports', { body: exportBody });
    const location = accepted.headers.get('location')!;
    // The published reporting record shows no timeoutMinutes; the simulator still ends it after 60.
    const running = (await call('GET', location)).body;
    expect(running.timeoutMinutes).toBeUndefined();
    sim.control.clock.advance(59 * 60_000);
    expect((await call('GET', location)).body.state).toBe('RUNNING');
    sim.control.clock.advance(60_000);
    const ended = (await call('GET', location)).body;
    // Not an injected fault: the message says only that the time ran out.
    expect(ended).toMatchObject({
      state: 'TIMEDOUT',
      error: { message: 'The report-export operation did not finish within 60 minutes' },
    });
    expect(Date.parse(ended.endedAt) - Date.parse(ended.startedAt)).toBe(60 * 60_000);
    expect((await call('GET', `/reporting/v1/statuses/${accepted.body.id}`)).body.reportDownloadUrl).toBe('');
    expect(sim.control.outbox()).toEqual([]);
    expect(sim.control.violations()).toEqual([]);
  });

  it('v1alpha1 says it is deprecated on every answer, a refusal included; v1 never does', async () => {
    const t = await startTestSimulator();
    close = () => t.sim.close();
    const refused = await t.call('GET', '/reporting/v1alpha1/statuses/00000000-0000-4000-8000-000000000000');
    expect(refused.status).toBe(404);
    expect(refused.headers.get('deprecation')).toBe('@1741737600');
    expect(refused.headers.get('link')).toBe(
      '</reporting/v1/statuses/00000000-0000-4000-8000-000000000000>; rel="successor-version"',
    );
    const invalid = await t.call('POST', '/reporting/v1alpha1/report-exports', { body: { name: 'no kind' } });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get('link')).toBe('</reporting/v1/report-exports>; rel="successor-version"');
    const stable = await t.call('GET', '/reporting/v1/statuses/00000000-0000-4000-8000-000000000000');
    expect(stable.status).toBe(404);
    expect(stable.headers.get('deprecation')).toBeNull();
  });

  it('serves the report at the signed download URL', async () => {
    const t = await startTestSimulator({ timeScale: 1e-6 });
    close = () => t.sim.close();
    const { call, sim } = t;
    const { id } = (await call('POST', '/reporting/v1/report-exports', { body: exportBody })).body;
    sim.control.clock.advance(10 * 60_000);
    const url = (await call('GET', `/reporting/v1/statuses/${id}`)).body.reportDownloadUrl as string;
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="nightly-device-inventory.csv"');
    const devices = (
      await call('GET', `/devices/v1/devices?filter=${encodeURIComponent("assignedState eq 'UNASSIGNED'")}`)
    ).body.total;
    const lines = (await response.text()).trimEnd().split('\n');
    expect(lines[0]).toBe('SERIAL_NUMBER,DEVICE_MODEL');
    expect(lines).toHaveLength(devices + 1);
  });
});
