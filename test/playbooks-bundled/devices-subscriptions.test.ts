import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { loadPlaybook, resolvePlaybookRef } from '../../src/playbook/index.js';
import { jsonLines, runCli } from '../support/cli.js';
import { failures, startBundledHarness, type BundledHarness } from './harness.js';

let harness: BundledHarness | undefined;
let directory: string | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  if (directory) rmSync(directory, { recursive: true, force: true });
  directory = undefined;
});

const APPLICATION = {
  id: '3f2a1b0c-9d8e-4f7a-8b6c-5d4e3f2a1b0c',
  name: 'Compute operations',
  regions: ['us-west', 'eu-central'],
};

interface Device {
  id: string;
  serialNumber: string;
  category: string;
  region?: string;
  application?: { id: string };
  subscription: Array<{ id: string; key: string }>;
  tags: Record<string, string>;
}

async function devicesOf(h: BundledHarness): Promise<Device[]> {
  const page = await h.client.invoke('devices.listDevices', { limit: 2000 });
  return (page.body as { items: Device[] }).items;
}

const devices = Array.from({ length: 7 }, (_, index) => {
  const serialNumber = `ONB${String(index).padStart(6, '0')}`;
  if (index % 3 === 0)
    return { serialNumber, macAddress: `00:11:22:33:44:${String(index).padStart(2, '0')}`, tags: { site: 'berlin' } };
  if (index % 3 === 1) return { serialNumber, partNumber: `P${index}0000-B21`, tags: { site: 'berlin' } };
  return { serialNumber, partNumber: `R${index}Q83A`, category: 'STORAGE', tags: { site: 'berlin' } };
});

it('device-onboarding: adds the devices 5 per request, assigns application and region, applies the subscription', async () => {
  const h = (harness = await startBundledHarness({ world: { devices: { applications: [APPLICATION] } } }));
  const key = (
    (await h.client.invoke('subscriptions.listSubscriptions', {})).body as { items: Array<{ key: string; id: string }> }
  ).items[0]!;
  const result = await h.run('device-onboarding', {
    devices,
    applicationId: APPLICATION.id,
    region: 'us-west',
    subscriptionKey: key.key,
  });
  expect(result.status, failures(result)).toBe('succeeded');

  // Accepted adds (a token that expired in simulated time shows as a 401 answered by a fresh token).
  const accepted = () => h.sim.control.requests({ operationId: 'devices.addDevices' }).filter((r) => r.status === 202);
  expect(accepted()).toHaveLength(2);
  const onboarded = (await devicesOf(h)).filter((d) => d.serialNumber.startsWith('ONB'));
  expect(onboarded).toHaveLength(7);
  for (const device of onboarded) {
    expect(device).toMatchObject({
      application: { id: APPLICATION.id },
      region: 'us-west',
      subscription: [{ id: key.id, key: key.key }],
      tags: { site: 'berlin' },
    });
  }
  expect(onboarded.filter((d) => d.category === 'STORAGE').map((d) => d.serialNumber)).toEqual([
    'ONB000002',
    'ONB000005',
  ]);
  // Application, then subscription, for 5 and 2 devices: four updates.
  expect(h.sim.control.requests({ operationId: 'devices.updateDevices' }).filter((r) => r.status === 202)).toHaveLength(
    4,
  );

  // Run again: nothing is added twice.
  const again = await h.run('device-onboarding', { devices, applicationId: APPLICATION.id, region: 'us-west' });
  expect(again.status, failures(again)).toBe('succeeded');
  expect(again.outputs).toMatchObject({ added: 0, alreadyPresent: 7 });
  expect(accepted()).toHaveLength(2);
});

it('device-onboarding: reports the devices the platform refused and fails', async () => {
  const h = (harness = await startBundledHarness({
    world: { devices: { applications: [APPLICATION], failSerialNumbers: ['ONB000004'] } },
  }));
  const result = await h.run('device-onboarding', { devices, applicationId: APPLICATION.id, region: 'eu-central' });
  expect(result.status).toBe('failed');
  expect(result.error?.message).toMatch(/ONB000004/);
  const verdict = result.steps.find((step) => step.kind === 'assert' && step.status === 'failed');
  expect(verdict?.error?.message).toBe('1 of 7 devices were not onboarded: ONB000004');
  const onboarded = (await devicesOf(h)).filter((d) => d.serialNumber.startsWith('ONB'));
  expect(onboarded.map((d) => d.serialNumber)).not.toContain('ONB000004');
  expect(onboarded.every((d) => d.application?.id === APPLICATION.id && d.region === 'eu-central')).toBe(true);
});

it('device-onboarding: its verification fails when the devices read back lack the assignment or the subscription', async () => {
  const loaded = loadPlaybook(resolvePlaybookRef('device-onboarding', process.cwd()));
  const report = loaded.playbook?.steps.find((step) => step.id === 'report');
  expect(report?.kind).toBe('set');
  const evaluate = async (items: unknown[]): Promise<Record<string, unknown>> => {
    const scope = {
      inputs: { applicationId: APPLICATION.id, region: 'us-west', subscriptionKey: 'KEY1' },
      steps: {
        found: { status: 'succeeded', outputs: { ids: ['d1'], missing: [] } },
        verify: { status: 'succeeded', outputs: { body: { items } } },
      },
      run: { id: 'r', playbook: 'device-onboarding', dryRun: false, startedAt: '2026-01-01T00:00:00Z' },
      env: {},
    };
    return await (
      report as unknown as { values: { evaluate(scope: unknown): Promise<Record<string, unknown>> } }
    ).values.evaluate(scope);
  };
  expect(
    await evaluate([
      { id: 'd1', application: { id: APPLICATION.id }, region: 'us-west', subscription: [{ key: 'KEY1' }] },
    ]),
  ).toMatchObject({ unassigned: [], unsubscribed: [] });
  // The fields it checks absent (an unassigned device, or a read that lost them): both fail.
  expect(await evaluate([{ id: 'd1' }])).toMatchObject({ unassigned: ['d1'], unsubscribed: ['d1'] });
  expect(await evaluate([])).toMatchObject({ unassigned: ['d1'], unsubscribed: ['d1'] });
});

it("device-onboarding: runs from an --inputs devices.yaml file (the docs' example) with `fleetbook run`", async () => {
  const h = (harness = await startBundledHarness({ world: { devices: { applications: [APPLICATION] } } }));
  directory = mkdtempSync(join(tmpdir(), 'fleetbook-onboarding-'));
  // The inputs file docs/playbooks.md shows, with an application of this workspace.
  const docs = readFileSync(new URL('../../docs/playbooks.md', import.meta.url), 'utf8');
  const shown = /```yaml\n(# devices\.yaml\n[\s\S]*?)```/.exec(docs)?.[1];
  expect(shown).toBeDefined();
  const file = join(directory, 'devices.yaml');
  writeFileSync(file, (shown ?? '').replace(/^applicationId: .*$/m, `applicationId: ${APPLICATION.id}`));
  const { code, stdout, stderr } = await runCli(['run', 'device-onboarding', '--inputs', file, '--json'], {
    env: {
      FLEETBOOK_HOME: join(directory, 'home'),
      FLEETBOOK_CLIENT_ID: 'sim-admin',
      FLEETBOOK_CLIENT_SECRET: 'sim-admin-secret',
      FLEETBOOK_AUTH_URL: h.sim.authUrl,
      FLEETBOOK_BASE_URL: h.sim.baseUrl,
      FLEETBOOK_REGIONAL_URL: h.sim.regionalUrl,
      FLEETBOOK_REGION: 'us-west',
    },
  });
  expect(code, stderr).toBe(0);
  const result = jsonLines(stdout).at(-1)?.result as {
    status: string;
    outputs: { added: number; alreadyPresent: number; failed: string[] };
  };
  expect(result).toMatchObject({ status: 'succeeded', outputs: { added: 3, alreadyPresent: 0, failed: [] } });
  // The platform holds the file's two devices, assigned as the file says.
  const added = (await devicesOf(h)).filter((device) => ['SW0001', 'SRV0002'].includes(device.serialNumber));
  expect(added.map((device) => device.serialNumber).sort()).toEqual(['SRV0002', 'SW0001']);
  expect((await devicesOf(h)).find((device) => device.serialNumber === 'ST0003')?.category).toBe('STORAGE');
  expect(added.every((device) => device.application?.id === APPLICATION.id && device.region === 'eu-central')).toBe(
    true,
  );
  expect(added.find((device) => device.serialNumber === 'SW0001')?.tags).toEqual({ site: 'berlin' });
  expect(h.sim.control.requests({ operationId: 'devices.addDevices' }).filter((r) => r.status === 202)).toHaveLength(1);
});
