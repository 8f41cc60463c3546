import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallResult, PlatformClient } from '../../src/api/index.js';
import {
  answerOf,
  expectConformant,
  expectNoViolations,
  followDriving,
  startConformance,
  type Conformance,
  type JsonBody,
} from './harness.js';

const REGIONS = ['us-west', 'eu-west', 'eu-central', 'ap-northeast'] as const;
const MINUTE_MS = 60_000;

let t: Conformance;
let systems: JsonBody[];
beforeAll(async () => {
  // Simulated time runs at real speed and moves on only when a wait drives it
  // (`followDriving`): an operation is still running when the next request checks a rule.
  t = await startConformance({ timeScale: 1 });
  systems = [];
  for (const region of REGIONS) {
    const { body } = await t.admin.privateCloud.listSystems({ limit: 100 }, { region });
    systems.push(...(body.items as JsonBody[]));
  }
});
afterAll(async () => {
  await expectConformant(t.sim, 'private-cloud');
  await t.close();
});

const regionOf = (system: JsonBody) => ({ region: system.region as string });
const follow = (client: PlatformClient, accepted: CallResult) => followDriving(t.sim, client, accepted);

describe('private cloud conformance', () => {
  it('inventory: systems by region, servers, catalogs with select, paging envelope', async () => {
    const { admin, observer } = t;
    expect(systems).toHaveLength(6);
    for (const region of REGIONS) {
      const { body } = await observer.privateCloud.listSystems({}, { region });
      expect(body).toMatchObject({ offset: 0, count: body.items?.length, total: body.items?.length });
      expect((body.items as JsonBody[]).every((system) => system.region === region)).toBe(true);
    }
    const [system] = systems;
    const byId = await admin.privateCloud.getSystem({ id: system.id }, regionOf(system));
    expect(byId.body).toMatchObject({ id: system.id, name: system.name });
    // `select` (the platform's) and `filter` (the reference's): the record fields and the named properties.
    const RECORD = ['createdAt', 'customerId', 'generation', 'id', 'resourceUri', 'type', 'updatedAt'];
    for (const input of [{ select: 'name,state' }, { filter: 'name,state' }]) {
      const picked = await admin.privateCloud.getSystem({ id: system.id, ...input }, regionOf(system));
      expect(Object.keys(picked.body as object).sort()).toEqual([...RECORD, 'name', 'state'].sort());
    }
    const sorted = await admin.privateCloud.listSystems({ sort: 'name desc', select: 'name' }, regionOf(system));
    const names = (sorted.body.items as JsonBody[]).map((item) => item.name as string);
    expect(names).toEqual([...names].sort().reverse());
    const patched = await admin.privateCloud.updateSystem(
      { id: system.id, body: { location: { city: 'Leipzig' } } },
      regionOf(system),
    );
    expect(patched.body).toMatchObject({
      id: system.id,
      location: { city: 'Leipzig', countryCode: system.location.countryCode },
    });
    const sent = t.sim.control.requests({ operationId: 'privateCloud.updateSystem' }).at(-1);
    expect(sent?.body).toEqual({ location: { city: 'Leipzig' } });
    // The system is in one region only: asked in another, it is not found.
    const elsewhere = REGIONS.find((region) => region !== system.region)!;
    expect((await answerOf(admin.privateCloud.getSystem({ id: system.id }, { region: elsewhere }))).status).toBe(404);

    const servers = await admin.privateCloud.listServers({ id: system.id, limit: 10 }, regionOf(system));
    const server = (servers.body.items as JsonBody[])[0];
    expect(server.systemId).toBe(system.id);
    const one = await admin.privateCloud.getServer({ systemId: system.id, serverId: server.id }, regionOf(system));
    expect(one.body).toMatchObject({ id: server.id, serialNumber: server.serialNumber });

    const catalogs = await admin.privateCloud.listSoftwareCatalogs(
      { filter: "version eq '2.4.0'", select: 'systemsWithUpdatePath' },
      regionOf(system),
    );
    expect(catalogs.body.total).toBe(1);
    const [catalog] = catalogs.body.items as JsonBody[];
    expect(Object.keys(catalog).sort()).toEqual([
      'createdAt',
      'customerId',
      'generation',
      'id',
      'resourceUri',
      'systemsWithUpdatePath',
      'type',
      'updatedAt',
    ]);
    const path = catalog.systemsWithUpdatePath.find((entry: JsonBody) => entry.id === system.id);
    expect(path.hypervisorClusters.length).toBeGreaterThan(0);
    expect(path.hypervisorClusters[0]).toEqual({
      hypervisorClusterId: expect.any(String),
      hypervisorClusterName: expect.any(String),
    });
    const full = await admin.privateCloud.getSoftwareCatalog({ id: catalog.id }, regionOf(system));
    expect(full.body).toMatchObject({ id: catalog.id, version: '2.4.0' });

    // Paging limits of the facts page: systems 10–100.
    const paged = await admin.privateCloud.listSystems({ limit: 10, offset: 5 }, { region: 'us-west' });
    expect(paged.body).toMatchObject({ offset: 5, count: 0 });
    const tooMany = await answerOf(admin.privateCloud.listSystems({ limit: 101 }, { region: 'us-west' }));
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.errorDetails).toBeUndefined();
    expect(tooMany.body.message).toContain('limit');
  });

  it('regions: one regional URL for every region sends x-fleetbook-region; the prefix and the header agree', async () => {
    const headerClient = t.clientFor('sim-observer', { regionalUrl: t.sim.url });
    const byHeader = await headerClient.privateCloud.listSystems({}, { region: 'eu-west' });
    const byPrefix = await t.observer.privateCloud.listSystems({}, { region: 'eu-west' });
    expect(byHeader.body).toEqual(byPrefix.body);
    const logged = t.sim.control.requests({ operationId: 'privateCloud.listSystems' }).slice(-2);
    expect(logged.map((entry) => [entry.path, entry.region])).toEqual([
      ['/private-cloud-business/v1beta1/systems', 'eu-west'],
      ['/regions/eu-west/private-cloud-business/v1beta1/systems', 'eu-west'],
    ]);
    const unknown = await fetch(`${t.sim.url}/regions/mars-1/private-cloud-business/v1beta1/systems`);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as JsonBody).errorCode).toBe('UNKNOWN_REGION');
  });

  it('lifecycle: 409 without precheck, precheck, update failing at the pinned step, resume, catalogs follow', async () => {
    const { admin } = t;
    // The default world pins a failure at the hypervisor step of the first system.
    const system = systems.find((candidate) => candidate.name.endsWith('-01'))!;
    const at = regionOf(system);
    const body = { catalogVersion: '2.4.0' };

    const noPrecheck = await answerOf(admin.privateCloud.runSoftwareUpdate({ id: system.id, body }, at));
    expect(noPrecheck).toMatchObject({ status: 409, errorCode: 'PRECHECK_REQUIRED' });
    expect(noPrecheck.body.errorDetails).toBeUndefined();

    const precheck = await admin.privateCloud.runSoftwarePrechecks({ id: system.id, body }, at);
    expect(precheck.status).toBe(202);
    expect(precheck.headers.location).toMatch(/^\/data-services\/v1beta1\/async-operations\/[\w-]+$/);
    // One software operation at a time: prechecks, update, resume, refresh, add-cluster → 409.
    for (const second of [
      () => admin.privateCloud.runSoftwarePrechecks({ id: system.id, body }, at),
      () => admin.privateCloud.runSoftwareUpdate({ id: system.id, body }, at),
      () => admin.privateCloud.resumeSoftwareUpdate({ id: system.id }, at),
      () => admin.privateCloud.refreshSoftwareVersions({ id: system.id }, at),
      () =>
        admin.privateCloud.addHypervisorCluster(
          { id: system.id, body: { hypervisorClusterName: 'c-x', platformDatacenterName: 'dc' } },
          at,
        ),
    ]) {
      expect(await answerOf(second())).toMatchObject({ status: 409, errorCode: 'OPERATION_IN_PROGRESS' });
    }
    const prechecked = await follow(admin, precheck);
    expect(prechecked).toMatchObject({ outcome: 'succeeded', flavour: 'dataServices' });
    expect(prechecked.operation).toMatchObject({ state: 'SUCCEEDED', progressPercent: 100 });

    const update = await admin.privateCloud.runSoftwareUpdate({ id: system.id, body }, at);
    expect(update.status).toBe(202);
    const failed = await follow(admin, update);
    expect(failed.outcome).toBe('failed');
    expect(failed.operation).toMatchObject({
      state: 'FAILED',
      healthStatus: 'ERROR',
      error: { errorCode: 'UPDATE_STEP_FAILED' },
    });
    expect(failed.error?.message).toContain('hypervisor');
    const afterFailure = (await admin.privateCloud.getSystem({ id: system.id }, at)).body as JsonBody;
    expect(afterFailure.softwareInfo.lastOperation).toMatchObject({
      state: 'FAILED',
      failedStep: 'hypervisor',
      catalogVersion: '2.4.0',
    });

    const resumed = await admin.privateCloud.resumeSoftwareUpdate({ id: system.id }, at);
    expect(resumed.status).toBe(202);
    expect((await follow(admin, resumed)).outcome).toBe('succeeded');
    const updated = (await admin.privateCloud.getSystem({ id: system.id }, at)).body as JsonBody;
    expect(updated.softwareInfo.currentUpdateStatus.state).toBe('UPDATE_COMPLETE');
    for (const cluster of updated.softwareInfo.hypervisorClusters) {
      expect(cluster).toMatchObject({ currentSoftwareCatalog: { version: '2.4.0' }, availableSoftwareCatalogs: [] });
    }
    const catalog = (await admin.privateCloud.listSoftwareCatalogs({ filter: "version eq '2.4.0'" }, at)).body
      .items as JsonBody[];
    expect(catalog[0].systemsWithUpdatePath.map((entry: JsonBody) => entry.id)).not.toContain(system.id);
    // Nothing failed any more: resume is a 400 at once.
    expect(await answerOf(admin.privateCloud.resumeSoftwareUpdate({ id: system.id }, at))).toMatchObject({
      status: 400,
    });
    // The resumed update posted exactly one update and one resume.
    const writes = t.sim.control
      .requests()
      .filter(
        (entry) =>
          entry.path.startsWith(
            `/regions/${system.region}/private-cloud-business/v1beta1/systems/${system.id}/software-update`,
          ) && entry.status === 202,
      );
    expect(writes.map((entry) => entry.operationId)).toEqual([
      'privateCloud.runSoftwareUpdate',
      'privateCloud.resumeSoftwareUpdate',
    ]);
  });

  it('a precheck is valid for its window: an update after it answers 409 saying to rerun the prechecks', async () => {
    const { admin } = t;
    const system = systems.find((candidate) => candidate.name.endsWith('-03'))!;
    const at = regionOf(system);
    const [firstCluster, ...otherClusters] = (system.hypervisorClusters as JsonBody[]).map(
      (cluster) => cluster.id as string,
    );
    expect(otherClusters.length).toBeGreaterThan(0);
    const body = { catalogVersion: '2.4.0' };
    await follow(admin, await admin.privateCloud.runSoftwarePrechecks({ id: system.id, body }, at));
    // Default validity: 240 simulated minutes.
    t.sim.control.clock.advance(241 * MINUTE_MS);
    const stale = await answerOf(admin.privateCloud.runSoftwareUpdate({ id: system.id, body }, at));
    expect(stale).toMatchObject({ status: 409, errorCode: 'PRECHECK_REQUIRED' });
    expect(stale.body.message).toContain('rerun the prechecks');
    // A precheck of some clusters does not cover the others.
    const one = { ...body, hypervisorClusterIds: [firstCluster!] };
    await follow(admin, await admin.privateCloud.runSoftwarePrechecks({ id: system.id, body: one }, at));
    expect(await answerOf(admin.privateCloud.runSoftwareUpdate({ id: system.id, body }, at))).toMatchObject({
      status: 409,
      errorCode: 'PRECHECK_REQUIRED',
    });
    const update = await admin.privateCloud.runSoftwareUpdate({ id: system.id, body: one }, at);
    expect(update.status).toBe(202);
    expect((await follow(admin, update)).outcome).toBe('succeeded');
    const after = (await admin.privateCloud.getSystem({ id: system.id }, at)).body as JsonBody;
    const versions = (after.softwareInfo.hypervisorClusters as JsonBody[]).map((cluster) => [
      cluster.id,
      cluster.currentSoftwareCatalog.version === '2.4.0',
    ]);
    expect(Object.fromEntries(versions)).toEqual(
      Object.fromEntries([[firstCluster, true], ...otherClusters.map((id) => [id, false])]),
    );
  });

  it('refuses at once: unknown cluster, catalog a cluster lacks (prechecks and update), family without updates (400), offline system (403)', async () => {
    const { admin } = t;
    const byNumber = (n: string) => systems.find((candidate) => candidate.name.endsWith(n))!;
    const first = byNumber('-04');
    const unknown = await answerOf(
      admin.privateCloud.runSoftwarePrechecks(
        { id: first.id, body: { catalogVersion: '2.4.0', hypervisorClusterIds: ['nope'] } },
        regionOf(first),
      ),
    );
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain('hypervisorClusterIds');
    const partialSystem = byNumber('-04');
    const lacking = await answerOf(
      admin.privateCloud.runSoftwarePrechecks(
        { id: partialSystem.id, body: { catalogVersion: '2.4.0' } },
        regionOf(partialSystem),
      ),
    );
    expect(lacking.status).toBe(400);
    expect(lacking.body.message).toMatch(/^catalogVersion: /);
    // The update makes the same checks before looking for a precheck: 400, not 409.
    const unknownOnUpdate = await answerOf(
      admin.privateCloud.runSoftwareUpdate(
        { id: first.id, body: { catalogVersion: '2.4.0', hypervisorClusterIds: ['nope'] } },
        regionOf(first),
      ),
    );
    expect(unknownOnUpdate).toMatchObject({ status: 400 });
    expect(unknownOnUpdate.body.message).toMatch(/^hypervisorClusterIds: /);
    const lackingOnUpdate = await answerOf(
      admin.privateCloud.runSoftwareUpdate(
        { id: partialSystem.id, body: { catalogVersion: '2.4.0' } },
        regionOf(partialSystem),
      ),
    );
    expect(lackingOnUpdate).toMatchObject({ status: 400 });
    expect(lackingOnUpdate.body.message).toMatch(/^catalogVersion: /);
    const legacySystem = byNumber('-06');
    expect(legacySystem.updateSupported).toBe(false);
    expect(
      (
        await answerOf(
          admin.privateCloud.runSoftwarePrechecks(
            { id: legacySystem.id, body: { catalogVersion: '2.4.0' } },
            regionOf(legacySystem),
          ),
        )
      ).status,
    ).toBe(400);
    const offlineSystem = byNumber('-02');
    expect(offlineSystem.state).toBe('OFFLINE');
    expect(
      await answerOf(
        admin.privateCloud.runSoftwarePrechecks(
          { id: offlineSystem.id, body: { catalogVersion: '2.4.0' } },
          regionOf(offlineSystem),
        ),
      ),
    ).toMatchObject({ status: 403, errorCode: 'SYSTEM_OFFLINE' });
    // A malformed body: 400 naming the field.
    const malformed = await answerOf(
      admin.invoke('privateCloud.runSoftwarePrechecks', { id: first.id, body: { catalogVersion: 7 } }, regionOf(first)),
    );
    expect(malformed.status).toBe(400);
    expect(malformed.body.message).toContain('catalogVersion');
  });

  it('version refresh and add-hypervisor-cluster run as data-services operations', async () => {
    const { admin } = t;
    const system = systems.find((candidate) => candidate.name.endsWith('-05'))!;
    const at = regionOf(system);
    const refresh = await admin.privateCloud.refreshSoftwareVersions({ id: system.id }, at);
    expect(refresh.status).toBe(202);
    expect(refresh.body).toEqual({});
    expect((await follow(admin, refresh)).outcome).toBe('succeeded');
    // The client sends the platform's POST; the reference's GET is served too.
    expect(t.sim.control.requests({ operationId: 'privateCloud.refreshSoftwareVersions' }).at(-1)?.method).toBe('POST');
    const byGet = await admin.privateCloud.refreshSoftwareVersionsByGet({ id: system.id }, at);
    expect(byGet.status).toBe(202);
    expect((await follow(admin, byGet)).outcome).toBe('succeeded');
    const before = ((await admin.privateCloud.getSystem({ id: system.id }, at)).body as JsonBody).hypervisorClusters
      .length;
    const add = await admin.privateCloud.addHypervisorCluster(
      {
        id: system.id,
        body: { hypervisorClusterName: 'cluster-conformance', platformDatacenterName: 'dc-1', configureVds: true },
      },
      at,
    );
    expect(add.status).toBe(202);
    const added = await follow(admin, add);
    expect(added.outcome).toBe('succeeded');
    const after = (await admin.privateCloud.getSystem({ id: system.id }, at)).body as JsonBody;
    expect(after.hypervisorClusters).toHaveLength(before + 1);
    expect(after.hypervisorClusters.at(-1).name).toBe('cluster-conformance');
  });

  it('configuration analysis: start 202, the latest report of each system, a report by id; the data-services list', async () => {
    const { admin, observer } = t;
    const system = systems.find((candidate) => candidate.name.endsWith('-05'))!;
    const at = regionOf(system);
    const started = await admin.privateCloud.startConfigurationAnalysis({ body: { systemId: system.id } }, at);
    expect(started.status).toBe(202);
    expect((await follow(admin, started)).outcome).toBe('succeeded');
    const reports = (
      await observer.privateCloud.listConfigurationAnalysisReports({ filter: `systemId eq '${system.id}'` }, at)
    ).body as JsonBody;
    expect(reports).toMatchObject({
      count: 1,
      items: [{ systemId: system.id, systemName: system.name, type: 'configuration-analysis-report' }],
    });
    const [report] = reports.items as JsonBody[];
    expect(
      (await observer.privateCloud.getConfigurationAnalysisReport({ reportId: report.id }, at)).body,
    ).toMatchObject({ id: report.id, totalPassed: expect.any(Number) });
    const analysed = (await observer.privateCloud.getSystem({ id: system.id, select: 'configAnalysisStatus' }, at))
      .body as JsonBody;
    expect(analysed.configAnalysisStatus).toMatchObject({
      totalPassed: report.totalPassed,
      totalFailed: report.totalFailed,
    });
    expect(
      await answerOf(observer.privateCloud.getConfigurationAnalysisReport({ reportId: 'nope' }, at)),
    ).toMatchObject({ status: 404 });
    const operations = (
      await observer.dataServices.listAsyncOperations({ filter: "displayName eq 'configuration-analysis'" }, at)
    ).body as JsonBody;
    expect(operations.items.map((operation: JsonBody) => operation.id)).toContain(
      started.headers.location!.split('/').pop(),
    );
  });

  it('provisioning policies: create 200, update and delete 202 with operations', async () => {
    const { admin, operator } = t;
    const listed = await operator.privateCloud.listProvisioningPolicies({ sort: 'name asc', limit: 20 });
    expect(listed.body.total).toBe(3);
    const created = await operator.privateCloud.createProvisioningPolicy({
      body: { name: 'conformance-policy', description: 'gold', storageType: 'dHCI' },
    });
    expect(created.status).toBe(200);
    const id = (created.body as JsonBody).id as string;
    expect(
      await answerOf(operator.privateCloud.createProvisioningPolicy({ body: { name: 'conformance-policy' } })),
    ).toMatchObject({ status: 409 });
    const tooLong = await answerOf(operator.privateCloud.createProvisioningPolicy({ body: { name: 'x'.repeat(81) } }));
    expect(tooLong.status).toBe(400);
    const update = await operator.privateCloud.updateProvisioningPolicy({ id, body: { description: 'platinum' } });
    expect(update.status).toBe(202);
    expect(
      await answerOf(operator.privateCloud.updateProvisioningPolicy({ id, body: { description: 'again' } })),
    ).toMatchObject({ status: 409 });
    expect((await follow(operator, update)).outcome).toBe('succeeded');
    expect((await operator.privateCloud.getProvisioningPolicy({ id })).body).toMatchObject({ description: 'platinum' });
    const removal = await admin.privateCloud.deleteProvisioningPolicy({ id });
    expect(removal.status).toBe(202);
    expect((await follow(admin, removal)).outcome).toBe('succeeded');
    expect((await answerOf(admin.privateCloud.getProvisioningPolicy({ id }))).status).toBe(404);
  });

  it('a pinned precheck failure ends the precheck FAILED on that cluster; the update is refused until only passing clusters are named', async () => {
    const named = systems.find((candidate) => candidate.name === 'hci-eu-central-03')!;
    const [pinnedCluster, ...passing] = named.hypervisorClusters as JsonBody[];
    expect(passing.length).toBeGreaterThan(0);
    const pinned = await startConformance({
      timeScale: 1,
      world: {
        privateCloud: { failures: [{ system: named.name, cluster: pinnedCluster.name, operation: 'precheck' }] },
      },
    });
    try {
      const { admin, sim } = pinned;
      const [system] = (
        await admin.privateCloud.listSystems({ filter: `name eq '${named.name}'` }, { region: 'eu-central' })
      ).body.items as JsonBody[];
      const at = regionOf(system);
      const body = { catalogVersion: '2.4.0' };
      const precheck = await followDriving(
        sim,
        admin,
        await admin.privateCloud.runSoftwarePrechecks({ id: system.id, body }, at),
      );
      expect(precheck).toMatchObject({
        outcome: 'failed',
        operation: { state: 'FAILED', displayName: 'software-prechecks', error: { errorCode: 'PRECHECK_FAILED' } },
      });
      expect(precheck.error?.message).toContain(pinnedCluster.name);
      for (const cluster of passing) expect(precheck.error?.message).not.toContain(cluster.name);
      const states = ((await admin.privateCloud.getSystem({ id: system.id }, at)).body as JsonBody).softwareInfo
        .hypervisorClusters as JsonBody[];
      expect(Object.fromEntries(states.map((cluster) => [cluster.id, cluster.currentUpdateStatus.state]))).toEqual(
        Object.fromEntries([
          [pinnedCluster.id, 'PRECHECK_FAILED'],
          ...passing.map((cluster) => [cluster.id, 'PRECHECK_COMPLETE']),
        ]),
      );

      // Every cluster, or the failed one alone: 409 naming only the failed cluster.
      for (const hypervisorClusterIds of [undefined, [pinnedCluster.id]]) {
        const refused = await answerOf(
          admin.privateCloud.runSoftwareUpdate(
            { id: system.id, body: { ...body, ...(hypervisorClusterIds ? { hypervisorClusterIds } : {}) } },
            at,
          ),
        );
        expect(refused).toMatchObject({ status: 409, errorCode: 'PRECHECK_REQUIRED' });
        expect(refused.body.message).toContain(pinnedCluster.id);
      }
      const update = await admin.privateCloud.runSoftwareUpdate(
        { id: system.id, body: { ...body, hypervisorClusterIds: passing.map((cluster) => cluster.id) } },
        at,
      );
      expect(update.status).toBe(202);
      expect((await followDriving(sim, admin, update)).outcome).toBe('succeeded');
      const after = ((await admin.privateCloud.getSystem({ id: system.id }, at)).body as JsonBody).softwareInfo
        .hypervisorClusters as JsonBody[];
      expect(
        Object.fromEntries(after.map((cluster) => [cluster.id, cluster.currentSoftwareCatalog.version === '2.4.0'])),
      ).toEqual(Object.fromEntries([[pinnedCluster.id, false], ...passing.map((cluster) => [cluster.id, true])]));
      // Only the refused attempts and the one accepted update reached the platform's write.
      const updates = sim.control
        .requests({ operationId: 'privateCloud.runSoftwareUpdate' })
        .map((entry) => entry.status);
      expect(updates).toEqual([409, 409, 202]);
      await expectNoViolations(sim);
    } finally {
      await pinned.close();
    }
  });

  it('a resumed update can fail again (pinned twice) and be resumed again, each time from the failed step', async () => {
    const pinned = await startConformance({
      timeScale: 1,
      world: {
        privateCloud: {
          failures: [{ system: 'hci-eu-central-03', operation: 'update', step: 'server-firmware', times: 2 }],
        },
      },
    });
    try {
      const { admin, sim } = pinned;
      const [system] = (
        await admin.privateCloud.listSystems({ filter: "name eq 'hci-eu-central-03'" }, { region: 'eu-central' })
      ).body.items as JsonBody[];
      const at = regionOf(system);
      const body = { catalogVersion: '2.4.0' };
      await followDriving(sim, admin, await admin.privateCloud.runSoftwarePrechecks({ id: system.id, body }, at));
      const update = await followDriving(
        sim,
        admin,
        await admin.privateCloud.runSoftwareUpdate({ id: system.id, body }, at),
      );
      expect(update.error?.message).toContain('server-firmware');
      const startedAt = sim.control.clock.now();
      const firstResume = await followDriving(
        sim,
        admin,
        await admin.privateCloud.resumeSoftwareUpdate({ id: system.id }, at),
      );
      expect(firstResume).toMatchObject({
        outcome: 'failed',
        operation: { displayName: 'software-update-resume', error: { errorCode: 'UPDATE_STEP_FAILED' } },
      });
      // Only the server-firmware step ran again: 15 simulated minutes, not 45.
      const ran =
        Date.parse(firstResume.operation.endedAt as string) - Date.parse(firstResume.operation.startedAt as string);
      expect(ran).toBe(15 * MINUTE_MS);
      expect(sim.control.clock.now()).toBeGreaterThan(startedAt);
      const secondResume = await followDriving(
        sim,
        admin,
        await admin.privateCloud.resumeSoftwareUpdate({ id: system.id }, at),
      );
      expect(secondResume.outcome).toBe('succeeded');
      expect(
        ((await admin.privateCloud.getSystem({ id: system.id }, at)).body as JsonBody).softwareInfo.currentUpdateStatus
          .state,
      ).toBe('UPDATE_COMPLETE');
      await expectNoViolations(sim);
    } finally {
      await pinned.close();
    }
  });

  it('async operations: INITIALIZED, RUNNING with progress, SUCCEEDED; polling interval divided by the time scale', async () => {
    // A clock that only moves when told, to see each state.
    const still = await startConformance({ timeScale: 1e-6 });
    try {
      const [system] = (await still.admin.privateCloud.listSystems({}, { region: 'eu-central' })).body
        .items as JsonBody[];
      const accepted = await still.admin.privateCloud.refreshSoftwareVersions({ id: system.id }, regionOf(system));
      const read = async () =>
        (
          await still.admin.dataServices.getAsyncOperation(
            { id: accepted.headers.location!.split('/').pop()! },
            regionOf(system),
          )
        ).body as JsonBody;
      expect(await read()).toMatchObject({
        state: 'INITIALIZED',
        progressPercent: 0,
        suggestedPollingIntervalSeconds: 30 / 1e-6,
      });
      still.sim.control.clock.advance(30_000);
      expect(await read()).toMatchObject({ state: 'RUNNING', progressPercent: 50 });
      still.sim.control.clock.advance(30_000);
      const done = await read();
      expect(done).toMatchObject({ state: 'SUCCEEDED', progressPercent: 100, displayName: 'software-version-refresh' });
      // The published record: no timeoutMinutes (a wait is bounded by the caller's deadline).
      expect(done).not.toHaveProperty('timeoutMinutes');
      expect(done.endedAt).toBeDefined();
      await expectNoViolations(still.sim);
    } finally {
      await still.close();
    }
  });
});
