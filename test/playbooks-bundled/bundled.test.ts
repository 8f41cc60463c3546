import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { recordApproval } from '../../src/engine/index.js';
import { loadPlaybook } from '../../src/playbook/index.js';
import { failures, startBundledHarness, type BundledHarness } from './harness.js';

// A dry run performs reads, and the CSV download is one: it lands here.
const downloads = mkdtempSync(join(tmpdir(), 'fleetbook-dry-run-'));
const DIR = resolve(import.meta.dirname, '../../playbooks');
const NAMES = [
  'rolling-cluster-update',
  'software-version-refresh',
  'nightly-report-export',
  'consumption-report-download',
  'device-onboarding',
  'subscription-onboarding',
  'user-access-review',
  'msp-tenant-provisioning',
  'provisioning-policy-sync',
  'canary-rolling-update',
  'weekly-fleet-report',
];

/** Inputs a dry run needs (the required ones, and enough to reach every write). */
const DRY_RUN_INPUTS: Record<string, Record<string, unknown>> = {
  'nightly-report-export': { recipients: ['ops@example.com'] },
  'consumption-report-download': { directory: downloads },
  'device-onboarding': {
    devices: [{ serialNumber: 'DRY000001', macAddress: '00:11:22:33:44:55' }],
    applicationId: 'app',
    region: 'us-west',
  },
  'subscription-onboarding': {
    keys: ['DRYRUNKEY1'],
    autoSubscriptions: [{ deviceType: 'COMPUTE', tier: 'ENHANCED_COMPUTE' }],
  },
  'user-access-review': { invite: ['dry.run@example.com'], remove: true },
  'msp-tenant-provisioning': {
    tenants: [{ workspaceName: 'Dry Run Ltd', email: 'it@dry.example.com', address: { countryCode: 'DE' } }],
  },
  'provisioning-policy-sync': { policies: [{ name: 'dry-run-policy', description: 'd' }], prune: true },
};

it('the bundled playbooks are these eleven, each valid, schema-linked and with every input described', () => {
  expect(
    readdirSync(DIR)
      .filter((file) => file.endsWith('.yaml'))
      .map((file) => file.replace(/\.yaml$/, ''))
      .sort(),
  ).toEqual([...NAMES].sort());
  for (const name of NAMES) {
    const file = resolve(DIR, `${name}.yaml`);
    expect(readFileSync(file, 'utf8').split('\n')[0]).toBe(
      '# yaml-language-server: $schema=../schemas/playbook.schema.json',
    );
    const { playbook, problems } = loadPlaybook(file);
    expect(problems, name).toEqual([]);
    expect(playbook?.name).toBe(name);
    for (const [input, spec] of Object.entries(playbook?.inputs ?? {})) {
      expect((spec.schema as { description?: string }).description, `${name} input ${input}`).toMatch(/\w/);
    }
  }
});

let harness: BundledHarness;
beforeAll(async () => {
  harness = await startBundledHarness();
});
afterAll(async () => {
  await harness.close();
  rmSync(downloads, { recursive: true, force: true });
});

it.each(NAMES)('%s dry-runs against the default world without sending a write', async (name) => {
  harness.sim.control.clearRequests();
  const result = await harness.run(name, DRY_RUN_INPUTS[name] ?? {}, { dryRun: true });
  expect(result.status, failures(result)).toBe('succeeded');
  const writes = harness.sim.control
    .requests()
    .filter((entry) => entry.method !== 'GET' && !entry.path.startsWith('/as/'));
  expect(writes).toEqual([]);
  expect(harness.sim.control.requests({ operationId: 'privateCloud.refreshSoftwareVersions' })).toEqual([]);
  if (!['software-version-refresh', 'consumption-report-download', 'weekly-fleet-report'].includes(name))
    expect(result.simulatedSteps.length, name).toBeGreaterThan(0);
});

it('canary-rolling-update with its defaults succeeds on the default world: the pinned hypervisor failure is resumed', async () => {
  harness.sim.control.clearRequests();
  const first = await harness.run('canary-rolling-update');
  expect(first.status, failures(first)).toBe('waiting');
  await recordApproval(harness.store, { runId: first.runId, decision: 'approved', by: 'tester' }, Date.now);
  const result = await harness.resume('canary-rolling-update', first.runId);
  expect(result.status, failures(result)).toBe('succeeded');
  const outputs = result.outputs as {
    canary: string;
    systems: Array<{ system: string; status: string; after?: string }>;
  };
  // The default canary is the world's first system, whose first cluster fails its first update.
  expect(outputs.canary).toBe('hci-us-west-01');
  expect(outputs.systems[0]).toMatchObject({ system: 'hci-us-west-01', status: 'succeeded', after: '2.4.0' });
  expect(outputs.systems.every((row) => ['succeeded', 'skipped'].includes(row.status))).toBe(true);
  expect(harness.sim.control.requests({ operationId: 'privateCloud.resumeSoftwareUpdate' })).toHaveLength(1);
});
