import { afterEach, expect, it } from 'vitest';
import { loadPlaybook, resolvePlaybookRef } from '../../src/playbook/index.js';
import { failures, startBundledHarness, type BundledHarness } from './harness.js';

let harness: BundledHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

interface User {
  id: string;
  username: string;
  userStatus: string;
  createdAt: string;
  lastLogin?: string;
}

const DAY_MS = 86_400_000;

it('subscription-onboarding: adds new keys 5 per request, skips known ones, sets the tiers', async () => {
  const h = (harness = await startBundledHarness());
  const listed = async () =>
    (
      (await h.client.invoke('subscriptions.listSubscriptions', { limit: 200 })).body as {
        items: Array<{ key: string }>;
      }
    ).items;
  const known = (await listed())[0]!.key;
  const keys = [known, ...Array.from({ length: 6 }, (_, index) => `NEWKEY${String(index).padStart(4, '0')}`)];
  const result = await h.run('subscription-onboarding', {
    keys,
    autoSubscriptions: [
      { deviceType: 'COMPUTE', tier: 'ENHANCED_COMPUTE' },
      { deviceType: 'AP', tier: null },
    ],
  });
  expect(result.status, failures(result)).toBe('succeeded');
  expect(result.outputs).toMatchObject({ alreadyPresent: [known] });
  expect((result.outputs as { added: string[] }).added).toHaveLength(6);
  expect((await listed()).map((s) => s.key)).toEqual(expect.arrayContaining(keys));
  expect(
    h.sim.control.requests({ operationId: 'subscriptions.addSubscriptions' }).filter((r) => r.status === 202),
  ).toHaveLength(2);
  const settings = (await h.client.invoke('subscriptions.listAutoSubscriptionSettings', {})).body as {
    items: Array<{ autoSubscriptionSettings: Array<{ deviceType: string; tier: string }> }>;
  };
  const pairs = settings.items[0]!.autoSubscriptionSettings;
  expect(pairs).toContainEqual({ deviceType: 'COMPUTE', tier: 'ENHANCED_COMPUTE' });
  expect(pairs.map((p) => p.deviceType)).not.toContain('AP');
});

it('user-access-review: a verified user the platform shows without lastLogin (never logged in) is stale, not active', async () => {
  const loaded = loadPlaybook(resolvePlaybookRef('user-access-review', process.cwd()));
  const review = loaded.playbook?.steps.find((step) => step.id === 'review') as unknown as {
    values: { evaluate(scope: unknown): Promise<{ stale: Array<{ username: string }> }> };
  };
  const startedAt = '2026-01-01T00:00:00Z';
  const items = [
    { id: '1', username: 'never@example.com', userStatus: 'VERIFIED', createdAt: '2025-01-01T00:00:00Z' },
    {
      id: '2',
      username: 'recent@example.com',
      userStatus: 'VERIFIED',
      createdAt: '2025-01-01T00:00:00Z',
      lastLogin: '2025-12-30T00:00:00Z',
    },
  ];
  const { stale } = await review.values.evaluate({
    inputs: { keep: [], unverifiedDays: 14, inactiveDays: 90, remove: false, invite: [] },
    steps: { users: { status: 'succeeded', outputs: { body: { items } } } },
    run: { id: 'r', playbook: 'user-access-review', dryRun: false, startedAt },
    env: {},
  });
  expect(stale.map((user) => user.username)).toEqual(['never@example.com']);
});

it('user-access-review: invites, reports stale users by default, removes them only with remove: true', async () => {
  const h = (harness = await startBundledHarness());
  const users = async () =>
    ((await h.client.invoke('users.listUsers', { limit: 600 })).body as { items: User[] }).items;
  const before = await users();
  const invite = ['new.operator@example.com', before[0]!.username];
  const report = await h.run('user-access-review', { invite, inactiveDays: 60 });
  expect(report.status, failures(report)).toBe('succeeded');
  const stale = (report.outputs as { stale: Array<{ username: string; reason: string }> }).stale;
  // What the platform's data says is stale, computed here independently.
  const now = Date.now();
  const expected = before.filter((u) =>
    u.userStatus === 'UNVERIFIED'
      ? Date.parse(u.createdAt) < now - 14 * DAY_MS
      : u.lastLogin === undefined || Date.parse(u.lastLogin) < now - 60 * DAY_MS,
  );
  expect(expected.length).toBeGreaterThan(0);
  expect(stale.map((u) => u.username).sort()).toEqual(expected.map((u) => u.username).sort());
  expect((report.outputs as { invited: string[] }).invited).toEqual(['new.operator@example.com']);
  const afterReport = await users();
  expect(afterReport).toHaveLength(before.length + 1);
  expect(h.sim.control.requests({ operationId: 'users.deleteUser' })).toEqual([]);

  const keep = expected[0]!.username;
  const removal = await h.run('user-access-review', { inactiveDays: 60, remove: true, keep: [keep] });
  expect(removal.status, failures(removal)).toBe('succeeded');
  const remaining = (await users()).map((u) => u.username);
  expect(remaining).toContain(keep);
  expect(remaining).toContain('new.operator@example.com');
  for (const user of expected.slice(1)) expect(remaining).not.toContain(user.username);
  expect(h.sim.control.requests({ operationId: 'users.deleteUser' })).toHaveLength(expected.length - 1);
});

it('msp-tenant-provisioning: creates the new tenants and updates the existing ones by name, twice the same', async () => {
  const h = (harness = await startBundledHarness());
  const tenants = async () =>
    (
      (await h.client.invoke('workspaces.listTenants', { limit: 300 })).body as {
        items: Array<{ id: string; workspaceName: string }>;
      }
    ).items;
  const existing = (await tenants())[0]!;
  const address = { streetAddress: '1 Main St', city: 'Berlin', zip: '10115', countryCode: 'DE' };
  const declared = [
    {
      workspaceName: existing.workspaceName,
      email: 'it@existing.example.com',
      address,
      description: 'updated by fleetbook',
    },
    { workspaceName: 'Acme Retail', email: 'it@acme.example.com', address },
  ];
  const first = await h.run('msp-tenant-provisioning', { tenants: declared });
  expect(first.status, failures(first)).toBe('succeeded');
  expect(first.outputs).toEqual({ created: ['Acme Retail'], updated: [existing.workspaceName] });
  const second = await h.run('msp-tenant-provisioning', { tenants: declared });
  expect(second.outputs).toEqual({ created: [], updated: [existing.workspaceName, 'Acme Retail'] });
  const names = (await tenants()).map((t) => t.workspaceName);
  expect(names.filter((name) => name === 'Acme Retail')).toHaveLength(1);
  expect(h.sim.control.requests({ operationId: 'workspaces.createTenant' }).map((r) => r.status)).toEqual([201]);
  expect(h.sim.control.requests({ operationId: 'workspaces.updateTenant' }).map((r) => r.status)).toEqual([
    200, 200, 200,
  ]);
});

it('provisioning-policy-sync: creates, updates and (with prune) deletes until the policies are as declared', async () => {
  const h = (harness = await startBundledHarness());
  type Policy = {
    id: string;
    name: string;
    description: string;
    storageType: string;
    volumeInfo: Record<string, unknown>;
  };
  const policies = async () =>
    ((await h.client.invoke('privateCloud.listProvisioningPolicies', { limit: 1000 })).body as { items: Policy[] })
      .items;
  const [gold, silver, bronze] = await policies();
  const declared = [
    { name: gold!.name, description: gold!.description, volumeInfo: gold!.volumeInfo },
    { name: silver!.name, description: 'silver, now with a new description' },
    {
      name: 'platinum',
      description: 'all flash',
      storageType: 'dHCI',
      volumeInfo: { allFlash: true, deduplication: true },
    },
  ];
  const kept = await h.run('provisioning-policy-sync', { policies: declared });
  expect(kept.status, failures(kept)).toBe('succeeded');
  expect(kept.outputs).toEqual({
    created: ['platinum'],
    updated: [silver!.name],
    deleted: [],
    undeclared: [bronze!.name],
  });
  expect((await policies()).map((p) => p.name)).toContain(bronze!.name);

  const pruned = await h.run('provisioning-policy-sync', { policies: declared, prune: true });
  expect(pruned.status, failures(pruned)).toBe('succeeded');
  expect(pruned.outputs).toEqual({ created: [], updated: [], deleted: [bronze!.name], undeclared: [bronze!.name] });
  const final = await policies();
  expect(final.map((p) => p.name).sort()).toEqual([gold!.name, silver!.name, 'platinum'].sort());
  expect(final.find((p) => p.name === silver!.name)?.description).toBe('silver, now with a new description');
  expect(final.find((p) => p.name === 'platinum')).toMatchObject({
    storageType: 'dHCI',
    volumeInfo: { allFlash: true, deduplication: true },
  });
  // The unchanged policy was never patched.
  const patched = h.sim.control.requests({ operationId: 'privateCloud.updateProvisioningPolicy' }).map((r) => r.path);
  expect(patched.some((path) => path.endsWith(gold!.id))).toBe(false);
});

it('software-version-refresh: refreshes every online system and reports the updates per cluster', async () => {
  const h = (harness = await startBundledHarness());
  const result = await h.run('software-version-refresh');
  expect(result.status, failures(result)).toBe('succeeded');
  const outputs = result.outputs as {
    clusters: Array<{ system: string; cluster: string; current: string; available: string[]; refreshed: boolean }>;
    byVersion: Record<string, string[]>;
  };
  // Offline hci-eu-west-02 is reported with its last known versions, not refreshed.
  expect(
    h.sim.control.requests({ operationId: 'privateCloud.refreshSoftwareVersions' }).filter((r) => r.status === 202),
  ).toHaveLength(5);
  expect(outputs.clusters.filter((c) => c.system === 'hci-eu-west-02').every((c) => !c.refreshed)).toBe(true);
  for (const region of ['us-west', 'eu-west', 'eu-central', 'ap-northeast']) {
    const systems = (
      (await h.client.invoke('privateCloud.listSystems', { limit: 100 }, { region })).body as {
        items: Array<{
          name: string;
          softwareInfo: {
            hypervisorClusters: Array<{ name: string; availableSoftwareCatalogs: Array<{ version: string }> }>;
          };
        }>;
      }
    ).items;
    for (const system of systems) {
      for (const cluster of system.softwareInfo.hypervisorClusters) {
        const row = outputs.clusters.find((c) => c.system === system.name && c.cluster === cluster.name);
        expect(row?.available, `${system.name} ${cluster.name}`).toEqual(
          cluster.availableSoftwareCatalogs.map((c) => c.version),
        );
      }
    }
  }
  expect(outputs.byVersion['2.4.0']).toContain('hci-us-west-01/cluster-a');
});

it('software-version-refresh: with systemIds, refreshes and reports only those systems (by name or id)', async () => {
  const h = (harness = await startBundledHarness());
  const apNortheast = (
    (await h.client.invoke('privateCloud.listSystems', { limit: 100 }, { region: 'ap-northeast' })).body as {
      items: Array<{ id: string; name: string }>;
    }
  ).items[0]!;
  const usWest = (
    (await h.client.invoke('privateCloud.listSystems', { limit: 100 }, { region: 'us-west' })).body as {
      items: Array<{ id: string; name: string }>;
    }
  ).items[0]!;
  // One named, one by its id.
  const result = await h.run('software-version-refresh', { systemIds: [usWest.name, apNortheast.id] });
  expect(result.status, failures(result)).toBe('succeeded');
  const outputs = result.outputs as { clusters: Array<{ system: string; refreshed: boolean }> };
  expect([...new Set(outputs.clusters.map((row) => row.system))].sort()).toEqual(
    [apNortheast.name, usWest.name].sort(),
  );
  expect(outputs.clusters.every((row) => row.refreshed)).toBe(true);
  // The platform was asked to refresh those two systems and no other.
  const refreshed = h.sim.control
    .requests({ operationId: 'privateCloud.refreshSoftwareVersions' })
    .filter((r) => r.status === 202);
  expect(refreshed.map((r) => [usWest.id, apNortheast.id].find((id) => r.path.includes(`/${id}/`))).sort()).toEqual(
    [apNortheast.id, usWest.id].sort(),
  );
});

it('software-version-refresh: refuses systemIds that are no system, naming them, before any refresh', async () => {
  const h = (harness = await startBundledHarness());
  const result = await h.run('software-version-refresh', { systemIds: ['hci-us-west-01', 'hci-nowhere-99'] });
  expect(result.status).toBe('failed');
  expect(result.error?.message).toBe(
    'systemIds that are no system of us-west, eu-west, eu-central, ap-northeast: hci-nowhere-99; nothing was refreshed',
  );
  expect(h.sim.control.requests({ operationId: 'privateCloud.refreshSoftwareVersions' })).toEqual([]);
});
