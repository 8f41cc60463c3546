import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { loadPlaybook, resolvePlaybookRef } from '../../src/playbook/index.js';
import type { HarnessOptions } from '../engine/harness.js';
import { failures, startBundledHarness, type BundledHarness } from './harness.js';

let harness: BundledHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

interface Row {
  system: string;
  cluster: string;
  before: string;
  after: string;
  status: string;
  attempts: number;
  resumed: boolean;
  durationMinutes?: number;
}
interface Outputs {
  catalogVersion: string;
  clusters: Row[];
  systems: { succeeded: number; failed: number; notStarted: string[] };
}
interface SystemView {
  name: string;
  state: string;
  softwareInfo: {
    hypervisorClusters: Array<{
      id: string;
      name: string;
      currentSoftwareCatalog: { version: string };
      availableSoftwareCatalogs: Array<{ version: string }>;
    }>;
  };
}

const REGIONS = ['us-west', 'eu-west', 'eu-central', 'ap-northeast'];

/** Every system of the world, read through the platform's API. */
async function systemsOf(h: BundledHarness): Promise<SystemView[]> {
  const all: SystemView[] = [];
  for (const region of REGIONS) {
    const page = await h.client.invoke('privateCloud.listSystems', { limit: 100 }, { region });
    all.push(...(page.body as { items: SystemView[] }).items);
  }
  return all;
}

it('updates the default world to the latest catalog cluster by cluster, resuming the pinned failure once', async () => {
  const h = (harness = await startBundledHarness());
  const result = await h.run('rolling-cluster-update');
  expect(result.status, failures(result)).toBe('succeeded');
  const outputs = result.outputs as Outputs;
  expect(outputs.catalogVersion).toBe('2.4.0');

  // The platform's state: every online system that offered 2.4.0 has it on those clusters now.
  const systems = await systemsOf(h);
  for (const row of outputs.clusters.filter((r) => r.status === 'succeeded')) {
    const cluster = systems
      .find((s) => s.name === row.system)
      ?.softwareInfo.hypervisorClusters.find((c) => c.name === row.cluster);
    expect(cluster?.currentSoftwareCatalog.version, `${row.system} ${row.cluster}`).toBe('2.4.0');
    expect(row.after).toBe('2.4.0');
    expect(row.before).not.toBe('2.4.0');
  }
  for (const system of systems.filter((s) => s.state === 'ONLINE')) {
    for (const cluster of system.softwareInfo.hypervisorClusters) {
      expect(
        cluster.availableSoftwareCatalogs.map((c) => c.version),
        `${system.name} ${cluster.name}`,
      ).not.toContain('2.4.0');
    }
  }
  // The pinned failure (first system, first cluster, hypervisor step) was resumed once.
  const resumed = outputs.clusters.filter((r) => r.resumed);
  expect(resumed).toMatchObject([{ system: 'hci-us-west-01', cluster: 'cluster-a', attempts: 2, status: 'succeeded' }]);
  expect(
    outputs.clusters
      .filter((r) => !r.resumed && r.status === 'succeeded')
      .every((r) => r.attempts === 1 && (r.durationMinutes ?? 0) >= 50),
  ).toBe(true);
  // The offline system is reported, not touched.
  expect(
    outputs.clusters
      .filter((r) => r.system === 'hci-eu-west-02')
      .every((r) => r.status === 'skipped (system OFFLINE)' && r.attempts === 0),
  ).toBe(true);
  expect(outputs.systems).toEqual({ succeeded: 4, failed: 0, notStarted: [] });

  // One update per updated cluster, one resume, never an update posted twice.
  const updates = h.sim.control.requests({ operationId: 'privateCloud.runSoftwareUpdate' });
  const updatedClusters = outputs.clusters.filter((r) => r.status === 'succeeded').length;
  expect(updates.map((u) => u.status)).toEqual(Array(updatedClusters).fill(202));
  expect(h.sim.control.requests({ operationId: 'privateCloud.resumeSoftwareUpdate' }).map((r) => r.status)).toEqual([
    202,
  ]);

  // Cluster by cluster, proven from the bodies sent: per cluster of the table, one precheck and
  // one update naming that cluster's id alone, on its own system.
  const systemsByName = new Map(systems.map((system) => [system.name, system]));
  const sentFor = (operationId: string) =>
    h.sim.control.requests({ operationId }).map((entry) => ({
      system: entry.path.split('/').at(-2),
      body: entry.body as { catalogVersion: string; hypervisorClusterIds: string[] },
    }));
  const expected = outputs.clusters
    .filter((row) => row.status === 'succeeded')
    .map((row) => {
      const system = systemsByName.get(row.system)!;
      const cluster = system.softwareInfo.hypervisorClusters.find((c) => c.name === row.cluster)!;
      return {
        system: (system as unknown as { id: string }).id,
        body: { catalogVersion: '2.4.0', hypervisorClusterIds: [cluster.id] },
      };
    });
  const byCluster = (
    a: { body: { hypervisorClusterIds: string[] } },
    b: { body: { hypervisorClusterIds: string[] } },
  ) => a.body.hypervisorClusterIds[0]!.localeCompare(b.body.hypervisorClusterIds[0]!);
  expect(sentFor('privateCloud.runSoftwarePrechecks').sort(byCluster)).toEqual([...expected].sort(byCluster));
  expect(sentFor('privateCloud.runSoftwareUpdate').sort(byCluster)).toEqual([...expected].sort(byCluster));
  expect(h.sim.control.violations()).toEqual([]);
});

/**
 * A platform whose answers lack a field: a proxy in front of the simulator that passes every
 * request through and deletes, from the JSON answers of `operationPath`, what `strip` removes.
 */
function without(operationPath: RegExp, strip: (body: Record<string, unknown>) => void): HarnessOptions['via'] {
  return async (simulatorUrl) => {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const headers = Object.fromEntries(
          Object.entries(request.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name)),
        ) as Record<string, string>;
        const body = chunks.length ? Buffer.concat(chunks) : undefined;
        void fetch(`${simulatorUrl}${request.url ?? ''}`, {
          method: request.method ?? 'GET',
          headers,
          ...(body ? { body } : {}),
        }).then(async (answer) => {
          let text = await answer.text();
          const path = (request.url ?? '').split('?')[0] ?? '';
          if (operationPath.test(path) && answer.headers.get('content-type')?.includes('json')) {
            const parsed = JSON.parse(text) as Record<string, unknown>;
            strip(parsed);
            text = JSON.stringify(parsed);
          }
          const kept = [...answer.headers].filter(
            ([name]) => !['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(name),
          );
          response.writeHead(answer.status, Object.fromEntries(kept));
          response.end(text);
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}`,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  };
}

it('fails, not passes vacuously, when the system does not show the cluster versions it verifies', async () => {
  // Every getSystem answer lacks softwareInfo.hypervisorClusters[].currentSoftwareCatalog.
  const stripVersions = without(/\/systems\/[^/]+$/, (body) => {
    const clusters =
      (body.softwareInfo as { hypervisorClusters?: Array<Record<string, unknown>> } | undefined)?.hypervisorClusters ??
      [];
    for (const cluster of clusters) delete cluster.currentSoftwareCatalog;
  });
  const h = (harness = await startBundledHarness({ world: { privateCloud: { failures: [] } } }, stripVersions));
  const result = await h.run('rolling-cluster-update', { systemIds: ['hci-us-west-01'], catalogVersion: '2.4.0' });
  expect(result.status).toBe('failed');
  const verified = result.steps.filter((step) => step.path.endsWith('.verified'));
  expect(verified.length).toBeGreaterThan(0);
  expect(verified.every((step) => step.status === 'failed')).toBe(true);
  expect(verified[0]?.error?.message).toMatch(/hci-us-west-01: of clusters .*, the system shows 0 at 2\.4\.0/);
  // The updates did run on the simulator: only the verification could not see them.
  expect(h.sim.control.requests({ operationId: 'privateCloud.runSoftwareUpdate' }).length).toBeGreaterThan(0);
});

it('refuses, before any write, systems whose update path names no cluster', async () => {
  const stripClusters = without(/\/system-software-catalogs$/, (body) => {
    for (const item of (body.items as Array<{ systemsWithUpdatePath?: Array<Record<string, unknown>> }> | undefined) ??
      []) {
      for (const system of item.systemsWithUpdatePath ?? []) delete system.hypervisorClusters;
    }
  });
  const h = (harness = await startBundledHarness({}, stripClusters));
  const result = await h.run('rolling-cluster-update', { catalogVersion: '2.4.0' });
  expect(result.status).toBe('failed');
  expect(result.error?.message).toMatch(
    /^the catalog's systemsWithUpdatePath names no hypervisorClusters for hci-us-west-01, .*; nothing was sent$/,
  );
  expect(h.sim.control.requests().filter((r) => r.method !== 'GET' && !r.path.startsWith('/as/'))).toEqual([]);
});

it('names all clusters of a system in one precheck and one update with clusterByCluster: false', async () => {
  const h = (harness = await startBundledHarness({ world: { privateCloud: { failures: [] } } }));
  const result = await h.run('rolling-cluster-update', {
    clusterByCluster: false,
    catalogVersion: '2.4.0',
    maxParallelSystems: 3,
  });
  expect(result.status, failures(result)).toBe('succeeded');
  expect(h.sim.control.requests({ operationId: 'privateCloud.runSoftwarePrechecks' })).toHaveLength(3);
  expect(h.sim.control.requests({ operationId: 'privateCloud.runSoftwareUpdate' })).toHaveLength(3);
  const rows = (result.outputs as Outputs).clusters.filter((r) => r.status === 'succeeded');
  expect(rows.length).toBeGreaterThan(3);
  expect(rows.every((r) => r.after === '2.4.0' && r.attempts === 1 && !r.resumed)).toBe(true);
});

it('reruns the prechecks when the update answers 409, then resumes the failed update', async () => {
  const h = (harness = await startBundledHarness({
    faults: { rules: [{ route: 'privateCloud.runSoftwareUpdate', status: 409, count: 1 }] },
  }));
  const result = await h.run('rolling-cluster-update', { systemIds: ['hci-us-west-01'] });
  expect(result.status, failures(result)).toBe('succeeded');
  const updates = h.sim.control.requests({ operationId: 'privateCloud.runSoftwareUpdate' }).map((r) => r.status);
  expect(updates[0]).toBe(409);
  expect(updates.slice(1).every((status) => status === 202)).toBe(true);
  // Prechecks of the first cluster ran twice: once before the update, once after the 409.
  expect(h.sim.control.requests({ operationId: 'privateCloud.runSoftwarePrechecks' })).toHaveLength(updates.length);
  expect((result.outputs as Outputs).clusters[0]).toMatchObject({
    cluster: 'cluster-a',
    after: '2.4.0',
    attempts: 2,
    resumed: true,
  });
});

it('stops starting systems once more than maxFailedSystems failed, and leaves them untouched', async () => {
  const world = {
    privateCloud: {
      failures: [{ system: 'hci-us-west-01', cluster: 'cluster-a', operation: 'update', step: 'hypervisor', times: 5 }],
    },
  };
  const h = (harness = await startBundledHarness({ world }));
  const result = await h.run('rolling-cluster-update', { maxParallelSystems: 1, maxResumes: 1, maxFailedSystems: 0 });
  expect(result.status).toBe('failed');
  // The playbook's last step (top level, outside the loop) states the verdict.
  const verdict = result.steps.find(
    (step) => step.kind === 'assert' && step.status === 'failed' && !step.path.includes('.'),
  );
  expect(verdict?.error?.message).toMatch(/1 system\(s\) failed .*tolerated: 0.*3 never started.*hci-us-west-01/s);
  // One update, one resume (maxResumes), then the system failed and no other system started.
  expect(h.sim.control.requests({ operationId: 'privateCloud.resumeSoftwareUpdate' })).toHaveLength(1);
  expect(h.sim.control.requests({ operationId: 'privateCloud.runSoftwareUpdate' })).toHaveLength(1);
  const systems = await systemsOf(h);
  for (const name of ['hci-eu-central-03', 'hci-ap-northeast-04']) {
    const untouched = systems.find((s) => s.name === name);
    expect(untouched?.softwareInfo.hypervisorClusters.every((c) => c.currentSoftwareCatalog.version !== '2.4.0')).toBe(
      true,
    );
  }
  const table = h
    .lines()
    .find(
      (line) =>
        typeof line.msg === 'string' &&
        line.msg.startsWith('clusters: hci-us-west-01 cluster-a: 2.2.0 -> 2.2.0, failed'),
    );
  expect(table, 'the table is logged when the run fails').toBeDefined();
});

it('dry-runs: reads the fleet, sends no write, and says which writes it would send', async () => {
  const h = (harness = await startBundledHarness());
  const result = await h.run('rolling-cluster-update', {}, { dryRun: true });
  expect(result.status, failures(result)).toBe('succeeded');
  expect(h.sim.control.requests().filter((r) => r.method !== 'GET' && !r.path.startsWith('/as/'))).toEqual([]);
  expect(result.simulatedSteps.some((path) => path.endsWith('.precheck'))).toBe(true);
  expect(result.simulatedSteps.some((path) => path.endsWith('.update'))).toBe(true);
});

it('refuses systemIds that are unknown or have no update path, naming them, before any write', async () => {
  const h = (harness = await startBundledHarness());
  // hci-us-west-01 has a path to 2.4.0; the others are unknown or an id that is no system.
  const result = await h.run('rolling-cluster-update', { systemIds: ['hci-us-west-01', 'hci-nowhere-99', 'sys-0000'] });
  expect(result.status).toBe('failed');
  expect(result.error?.message).toMatch(
    /^systemIds with no update path to catalog 2\.4\.0 in us-west, eu-west, eu-central, ap-northeast: hci-nowhere-99, sys-0000 \(unknown, already at that version, or in another region\); nothing was sent$/,
  );
  expect(h.sim.control.requests().filter((r) => r.method !== 'GET' && !r.path.startsWith('/as/'))).toEqual([]);
});

it('declares its maintenance-window schedule disabled', () => {
  const loaded = loadPlaybook(resolvePlaybookRef('rolling-cluster-update', process.cwd()));
  expect(loaded.playbook?.schedules).toMatchObject([
    { key: 'maintenance-window', cron: '0 2 * * SAT', enabled: false },
  ]);
  const nightly = loadPlaybook(resolvePlaybookRef('nightly-report-export', process.cwd()));
  expect(nightly.playbook?.schedules).toMatchObject([{ key: 'nightly', cron: '30 1 * * *', enabled: true }]);
});

it.each([2, 3])('never has more than maxParallelSystems=%i systems in flight (request log)', async (max) => {
  const h = (harness = await startBundledHarness({ world: { privateCloud: { failures: [] } } }));
  const result = await h.run('rolling-cluster-update', { maxParallelSystems: max, catalogVersion: '2.4.0' });
  expect(result.status, failures(result)).toBe('succeeded');
  // A system is in flight from its first read (the loop's 'before') to its last (the loop's
  // 'after'): a slot frees only once its iteration ended, so the log's order bounds the overlap.
  const log = h.sim.control.requests();
  const spans = new Map<string, { first: number; last: number }>();
  log.forEach((entry, index) => {
    if (entry.operationId !== 'privateCloud.getSystem') return;
    const id = entry.path.split('/').pop() ?? '';
    const span = spans.get(id);
    spans.set(id, span ? { ...span, last: index } : { first: index, last: index });
  });
  expect(spans.size).toBe(new Set((result.outputs as Outputs).clusters.map((row) => row.system)).size);
  expect(spans.size).toBeGreaterThan(3);
  let inFlight = 0;
  let most = 0;
  log.forEach((_entry, index) => {
    for (const span of spans.values()) if (span.first === index) inFlight += 1;
    most = Math.max(most, inFlight);
    for (const span of spans.values()) if (span.last === index) inFlight -= 1;
  });
  // Bounded by the input, and reached: the systems did run side by side up to it.
  expect(most).toBe(max);
  // Every update was posted while its system was in flight.
  for (const update of log.filter((entry) => entry.operationId === 'privateCloud.runSoftwareUpdate')) {
    const id = update.path.split('/').at(-2) ?? '';
    const at = log.indexOf(update);
    expect(spans.get(id)?.first).toBeLessThan(at);
    expect(spans.get(id)?.last).toBeGreaterThan(at);
  }
});
