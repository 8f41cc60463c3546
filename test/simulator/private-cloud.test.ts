import { afterEach, describe, expect, it } from 'vitest';
import { startTestSimulator, type JsonBody } from './core-helpers.js';

const BASE = '/private-cloud-business/v1beta1';
const MINUTE = 60_000;
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

/** A simulator whose clock only moves when the test advances it (time scale near zero). */
async function start(world?: object) {
  const t = await startTestSimulator({ timeScale: 1e-6, ...(world ? { world } : {}) });
  close = () => t.sim.close();
  const advance = (ms: number) => t.sim.control.clock.advance(ms);
  const systems = (await t.call('GET', `${BASE}/systems?limit=100`)).body.items as JsonBody[];
  const byName = (name: string) => systems.find((s) => s.name === name);
  const operation = async (location: string) => (await t.call('GET', location)).body;
  return { ...t, advance, systems, byName, operation };
}

describe('private cloud: software lifecycle', () => {
  it('prechecks, update failing at the pinned step, resume, success; catalogs follow', async () => {
    const { call, advance, systems, operation } = await start();
    const system = systems[0];
    expect(system.softwareInfo.hypervisorClusters[0].availableSoftwareCatalogs.map((c: JsonBody) => c.version)).toEqual(
      ['2.3.1', '2.4.0'],
    );
    const path = `${BASE}/systems/${system.id}`;

    const noPrecheck = await call('POST', `${path}/software-update`, { body: { catalogVersion: '2.4.0' } });
    expect(noPrecheck.status).toBe(409);
    expect(noPrecheck.body.errorCode).toBe('PRECHECK_REQUIRED');

    const precheck = await call('POST', `${path}/software-prechecks`, { body: { catalogVersion: '2.4.0' } });
    expect(precheck.status).toBe(202);
    const precheckAt = precheck.headers.get('location')!;
    expect(precheckAt).toMatch(/^\/data-services\/v1beta1\/async-operations\//);
    expect((await call('POST', `${path}/software-update`, { body: { catalogVersion: '2.4.0' } })).status).toBe(409);
    advance(5 * MINUTE);
    expect(await operation(precheckAt)).toMatchObject({ state: 'SUCCEEDED', progressPercent: 100 });
    const prechecked = (await call('GET', path)).body;
    expect(prechecked.softwareInfo.currentUpdateStatus.state).toBe('PRECHECK_COMPLETE');
    expect(prechecked.softwareInfo.precheckValidUntil).toBeDefined();

    const update = await call('POST', `${path}/software-update`, { body: { catalogVersion: '2.4.0' } });
    expect(update.status).toBe(202);
    const updateAt = update.headers.get('location')!;
    const conflict = await call('POST', `${path}/software-prechecks`, { body: { catalogVersion: '2.4.0' } });
    expect(conflict.status).toBe(409);
    expect(conflict.body.errorCode).toBe('OPERATION_IN_PROGRESS');
    expect((await call('GET', `${path}/software-version-refresh`)).status).toBe(409);
    advance(15 * MINUTE);
    expect(await operation(updateAt)).toMatchObject({ state: 'RUNNING' });
    // The pinned failure: the hypervisor step, the second of three (30 minutes).
    advance(15 * MINUTE);
    const failed = await operation(updateAt);
    expect(failed).toMatchObject({
      state: 'FAILED',
      healthStatus: 'ERROR',
      error: { errorCode: 'UPDATE_STEP_FAILED' },
    });
    expect(failed.error.error).toContain('hypervisor');
    const failedSystem = (await call('GET', path)).body;
    expect(failedSystem.softwareInfo.currentUpdateStatus.state).toBe('UPDATE_FAILED');
    expect(failedSystem.softwareInfo.lastOperation).toMatchObject({ state: 'FAILED', failedStep: 'hypervisor' });

    const resume = await call('POST', `${path}/software-update-resume`);
    expect(resume.status).toBe(202);
    const resumeAt = resume.headers.get('location')!;
    // Resume continues from the hypervisor step: two steps, 30 minutes.
    advance(30 * MINUTE);
    expect(await operation(resumeAt)).toMatchObject({ state: 'SUCCEEDED' });
    const updated = (await call('GET', path)).body;
    expect(
      updated.softwareInfo.hypervisorClusters.every(
        (c: JsonBody) => c.currentSoftwareCatalog.version === '2.4.0' && c.availableSoftwareCatalogs.length === 0,
      ),
    ).toBe(true);
    expect(updated.softwareInfo.currentUpdateStatus.state).toBe('UPDATE_COMPLETE');

    const withPath = (
      await call('GET', `${BASE}/system-software-catalogs?filter=version eq '2.4.0'&select=systemsWithUpdatePath`)
    ).body;
    expect(Object.keys(withPath.items[0]).sort()).toEqual([
      'createdAt',
      'customerId',
      'generation',
      'id',
      'resourceUri',
      'systemsWithUpdatePath',
      'type',
      'updatedAt',
    ]);
    expect(withPath.items[0].systemsWithUpdatePath.map((s: JsonBody) => s.id)).not.toContain(system.id);

    const notFailed = await call('POST', `${path}/software-update-resume`);
    expect(notFailed.status).toBe(400);
  });

  it('answers 409 once the precheck result is stale', async () => {
    const { call, advance, systems } = await start({ privateCloud: { precheckValidityMinutes: 60, failures: [] } });
    const path = `${BASE}/systems/${systems[2].id}`;
    expect((await call('POST', `${path}/software-prechecks`, { body: { catalogVersion: '2.4.0' } })).status).toBe(202);
    advance(5 * MINUTE + 61 * MINUTE);
    const stale = await call('POST', `${path}/software-update`, { body: { catalogVersion: '2.4.0' } });
    expect(stale.status).toBe(409);
    expect(stale.body.message).toContain('rerun the prechecks');
    expect(stale.body.errorDetails).toBeUndefined();
  });

  it('degrades a pinned system after its update, and a system set unhealthy by hand', async () => {
    const probe = await start();
    const firstName = probe.systems[0].name as string;
    await probe.sim.close();
    const { call, advance, systems, sim } = await start({
      privateCloud: { failures: [], degradeAfterUpdate: { systems: [firstName], to: 'WARNING' } },
    });
    const [first, , third] = systems;
    expect(first.name).toBe(firstName);
    const health = async (id: string) => (await call('GET', `${BASE}/systems/${id}`)).body.health.overallHealth;
    const update = async (id: string) => {
      const path = `${BASE}/systems/${id}`;
      expect((await call('POST', `${path}/software-prechecks`, { body: { catalogVersion: '2.4.0' } })).status).toBe(
        202,
      );
      advance(5 * MINUTE);
      expect((await call('POST', `${path}/software-update`, { body: { catalogVersion: '2.4.0' } })).status).toBe(202);
      advance(60 * MINUTE);
    };
    expect(await health(first.id)).toBe('OK');
    await update(first.id);
    expect(await health(first.id)).toBe('WARNING');
    // By hand, through the control surface: by name or id, checked.
    const base = sim.url;
    const set = (who: string, body: unknown) =>
      fetch(`${base}/_sim/private-cloud/systems/${who}/health`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const made = await set(third.name, { overallHealth: 'CRITICAL' });
    expect(made.status).toBe(200);
    expect(await made.json()).toEqual({ id: third.id, name: third.name, overallHealth: 'CRITICAL' });
    expect(await health(third.id)).toBe('CRITICAL');
    expect((await set(third.id, { overallHealth: 'OK' })).status).toBe(200);
    expect(await health(third.id)).toBe('OK');
    expect((await set(third.id, { overallHealth: 'ILL' })).status).toBe(400);
    expect((await set('nope', { overallHealth: 'OK' })).status).toBe(404);
  });

  it('degrades systems by probability, the same ones whatever the order of the updates', async () => {
    const world = {
      privateCloud: { systems: 30, clustersPerSystem: 1, failures: [], degradeAfterUpdate: { probability: 0.5 } },
    };
    /** Updates every system that can take 2.4.0, in `order`; the ids of those left CRITICAL. */
    const degradedAfterUpdating = async (order: (ids: string[]) => string[]) => {
      const { call, advance, systems } = await start(world);
      const ready = systems
        .filter(
          (s) =>
            s.health.overallHealth === 'OK' &&
            s.softwareInfo.hypervisorClusters[0].availableSoftwareCatalogs.some((c: JsonBody) => c.version === '2.4.0'),
        )
        .map((s) => s.id as string);
      for (const id of order(ready))
        await call('POST', `${BASE}/systems/${id}/software-prechecks`, { body: { catalogVersion: '2.4.0' } });
      advance(5 * MINUTE);
      for (const id of order(ready))
        await call('POST', `${BASE}/systems/${id}/software-update`, { body: { catalogVersion: '2.4.0' } });
      advance(60 * MINUTE);
      const degraded: string[] = [];
      for (const id of ready)
        if ((await call('GET', `${BASE}/systems/${id}`)).body.health.overallHealth === 'CRITICAL') degraded.push(id);
      await close?.();
      close = undefined;
      return { ready, degraded };
    };
    const forwards = await degradedAfterUpdating((ids) => ids);
    const backwards = await degradedAfterUpdating((ids) => [...ids].reverse());
    expect(forwards.ready.length).toBeGreaterThan(8);
    // About half: neither none nor all, and the same systems either way.
    expect(forwards.degraded.length).toBeGreaterThan(0);
    expect(forwards.degraded.length).toBeLessThan(forwards.ready.length);
    expect(backwards.degraded).toEqual(forwards.degraded);
  });

  it('refuses a pinned degrade of a system the world does not have', async () => {
    await expect(
      startTestSimulator({ world: { privateCloud: { degradeAfterUpdate: { systems: ['no-such-system'] } } } }),
    ).rejects.toThrow(/degradeAfterUpdate.systems\[0\] 'no-such-system' is not a system/);
  });

  it('refuses unknown clusters, unavailable catalogs, unsupported families and offline systems at once', async () => {
    const { call, systems } = await start();
    const [fresh, offline, , partial, , legacy] = systems;
    const unknown = await call('POST', `${BASE}/systems/${fresh.id}/software-prechecks`, {
      body: { catalogVersion: '2.4.0', hypervisorClusterIds: ['nope'] },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain('hypervisorClusterIds');
    // The last cluster of this system cannot take 2.4.0: all clusters (omitted ids) must offer it.
    const lastCluster = partial.softwareInfo.hypervisorClusters.at(-1);
    expect(lastCluster.unavailableSoftwareCatalogs[0]).toMatchObject({ version: '2.4.0' });
    expect(
      (await call('POST', `${BASE}/systems/${partial.id}/software-prechecks`, { body: { catalogVersion: '2.4.0' } }))
        .status,
    ).toBe(400);
    const others = partial.softwareInfo.hypervisorClusters.slice(0, -1).map((c: JsonBody) => c.id);
    expect(
      (
        await call('POST', `${BASE}/systems/${partial.id}/software-prechecks`, {
          body: { catalogVersion: '2.4.0', hypervisorClusterIds: others },
        })
      ).status,
    ).toBe(202);
    expect(legacy.updateSupported).toBe(false);
    expect(
      (await call('POST', `${BASE}/systems/${legacy.id}/software-prechecks`, { body: { catalogVersion: '2.4.0' } }))
        .status,
    ).toBe(400);
    expect(offline.state).toBe('OFFLINE');
    expect(
      (await call('POST', `${BASE}/systems/${offline.id}/software-prechecks`, { body: { catalogVersion: '2.4.0' } }))
        .status,
    ).toBe(403);
  });

  it('runs version refresh and add-cluster as async operations', async () => {
    const { call, advance, systems, operation } = await start();
    const path = `${BASE}/systems/${systems[4].id}`;
    const refresh = await call('GET', `${path}/software-version-refresh`);
    expect(refresh.status).toBe(202);
    advance(MINUTE);
    expect(await operation(refresh.headers.get('location')!)).toMatchObject({ state: 'SUCCEEDED' });
    const add = await call('POST', `${path}/add-hypervisor-cluster`, {
      body: { hypervisorClusterName: 'cluster-new', platformDatacenterName: 'dc-1', configureVds: true },
    });
    expect(add.status).toBe(202);
    expect(
      (
        await call('POST', `${path}/add-hypervisor-cluster`, {
          body: { hypervisorClusterName: 'x', platformDatacenterName: 'dc-1' },
        })
      ).status,
    ).toBe(409);
    advance(10 * MINUTE);
    expect(await operation(add.headers.get('location')!)).toMatchObject({ state: 'SUCCEEDED' });
    expect((await call('GET', path)).body.hypervisorClusters.map((c: JsonBody) => c.name)).toContain('cluster-new');
  });

  it("a version refresh moves the system's versionsRefreshedAt to its end; a failed one and other systems keep theirs", async () => {
    const { call, advance, systems, operation, sim, forget } = await start();
    const path = `${BASE}/systems/${systems[4].id}`;
    const refreshedAt = async (at: string) => (await call('GET', at)).body.softwareInfo.versionsRefreshedAt as string;
    const DAY = 24 * 60 * MINUTE;
    const first = await refreshedAt(path);
    // The scheduled refresh: at most a day ago, then every day. Moving just past the next one
    // also keeps the rest of the test clear of a scheduled refresh.
    expect(sim.control.clock.now() - Date.parse(first)).toBeLessThan(DAY);
    advance(Date.parse(first) + DAY - sim.control.clock.now() + MINUTE);
    // Advances count against token lifetimes: the cached token has expired.
    forget();
    const scheduled = await refreshedAt(path);
    expect(Date.parse(scheduled) - Date.parse(first)).toBe(DAY);
    const other = await refreshedAt(`${BASE}/systems/${systems[3].id}`);

    advance(5 * MINUTE);
    const refresh = await call('GET', `${path}/software-version-refresh`);
    expect(await refreshedAt(path)).toBe(scheduled);
    advance(MINUTE);
    const done = await operation(refresh.headers.get('location')!);
    expect(done.state).toBe('SUCCEEDED');
    expect(await refreshedAt(path)).toBe(done.endedAt);
    expect(Date.parse(done.endedAt)).toBeGreaterThan(Date.parse(scheduled));
    expect(await refreshedAt(`${BASE}/systems/${systems[3].id}`)).toBe(other);

    sim.control.faults.set({ asyncOperations: [{ type: 'software-version-refresh', outcome: 'FAILED', count: 1 }] });
    advance(MINUTE);
    const failing = await call('GET', `${path}/software-version-refresh`);
    advance(MINUTE);
    expect((await operation(failing.headers.get('location')!)).state).toBe('FAILED');
    expect(await refreshedAt(path)).toBe(done.endedAt);
    expect(sim.control.violations()).toEqual([]);
  });

  it('fails an update by async fault injection and keeps the system resumable', async () => {
    const t = await startTestSimulator({
      timeScale: 1e-6,
      world: { privateCloud: { failures: [] } },
      faults: { asyncOperations: [{ type: 'software-update', outcome: 'FAILED', count: 1 }] },
    });
    close = () => t.sim.close();
    const system = (await t.call('GET', `${BASE}/systems`)).body.items[2];
    const path = `${BASE}/systems/${system.id}`;
    await t.call('POST', `${path}/software-prechecks`, { body: { catalogVersion: '2.4.0' } });
    t.sim.control.clock.advance(5 * MINUTE);
    const update = await t.call('POST', `${path}/software-update`, { body: { catalogVersion: '2.4.0' } });
    t.sim.control.clock.advance(45 * MINUTE);
    expect((await t.call('GET', update.headers.get('location')!)).body).toMatchObject({
      state: 'FAILED',
      error: { errorCode: 'SIMULATED_FAILURE' },
    });
    expect((await t.call('POST', `${path}/software-update-resume`)).status).toBe(202);
  });
});

describe('private cloud: provisioning policies', () => {
  it('creates (200), refuses duplicates (409), updates and deletes through async operations', async () => {
    const { call, advance, operation } = await start();
    const created = await call('POST', `${BASE}/vm-provisioning-policies`, {
      body: { name: 'platinum', description: 'fast', storageType: 'dHCI' },
    });
    expect(created.status).toBe(200);
    expect((await call('POST', `${BASE}/vm-provisioning-policies`, { body: { name: 'platinum' } })).status).toBe(409);
    const path = `${BASE}/vm-provisioning-policies/${created.body.id}`;
    const patch = await call('PATCH', path, { body: { description: 'faster' } });
    expect(patch.status).toBe(202);
    expect((await call('GET', path)).body.description).toBe('fast');
    advance(30_000);
    expect(await operation(patch.headers.get('location')!)).toMatchObject({ state: 'SUCCEEDED' });
    expect((await call('GET', path)).body).toMatchObject({ description: 'faster', generation: 2 });
    const del = await call('DELETE', path);
    expect(del.status).toBe(202);
    advance(30_000);
    expect(await operation(del.headers.get('location')!)).toMatchObject({ state: 'SUCCEEDED' });
    expect((await call('GET', path)).status).toBe(404);
  });
});

describe('private cloud: time scale', () => {
  it('divides durations and the suggested polling interval by the time scale', async () => {
    const t = await startTestSimulator({ timeScale: 3000 });
    close = () => t.sim.close();
    const system = (await t.call('GET', `${BASE}/systems`)).body.items[4];
    const refresh = await t.call('GET', `${BASE}/systems/${system.id}/software-version-refresh`);
    const first = (await t.call('GET', refresh.headers.get('location')!)).body;
    expect(first.suggestedPollingIntervalSeconds).toBeCloseTo(0.01);
    // One simulated minute at 3000x is 20 ms of real time. Real time on purpose: the time scale
    // is the mapping of wall time to simulated time, so only the wall clock can test it.
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect((await t.call('GET', refresh.headers.get('location')!)).body.state).toBe('SUCCEEDED');
  });
});

describe('private cloud: pages of systems kept whole', () => {
  it('answers a kept page with the bytes a fresh rendering gives, and renders it again after a cluster update', async () => {
    // Without response validation: with it, every answer is parsed and serialized again.
    const t = await startTestSimulator({
      timeScale: 1e-6,
      validateResponses: false,
      world: { privateCloud: { failures: [] } },
    });
    close = () => t.sim.close();
    const raw = async (path: string) => {
      const response = await fetch(`${t.sim.url}${path}`, { headers: { authorization: `Bearer ${await t.token()}` } });
      const text = await response.text();
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(Number(response.headers.get('content-length'))).toBe(Buffer.byteLength(text));
      return text;
    };
    const page = `${BASE}/systems?offset=2&limit=10`;
    // A filtered list renders every view anew and serializes the page as any answer.
    const fresh = () => raw(`${page}&filter=${encodeURIComponent('generation ge 0')}`);
    const before = await raw(page);
    expect(await raw(page)).toBe(before);
    expect(before).toBe(await fresh());

    const system = JSON.parse(before).items[0];
    const path = `${BASE}/systems/${system.id}`;
    // Its view, kept from the page, answers a read of the system alone.
    expect(await raw(path)).toBe(JSON.stringify(system));
    expect(system.softwareInfo.hypervisorClusters[0].currentSoftwareCatalog.version).not.toBe('2.4.0');
    await t.call('POST', `${path}/software-prechecks`, { body: { catalogVersion: '2.4.0' } });
    t.sim.control.clock.advance(5 * MINUTE);
    const update = await t.call('POST', `${path}/software-update`, { body: { catalogVersion: '2.4.0' } });
    expect(update.status).toBe(202);
    t.sim.control.clock.advance(45 * MINUTE);
    expect((await t.call('GET', update.headers.get('location')!)).body.state).toBe('SUCCEEDED');

    const after = await raw(page);
    expect(JSON.parse(after).items[0].softwareInfo.hypervisorClusters[0].currentSoftwareCatalog.version).toBe('2.4.0');
    expect(after).toBe(await fresh());
    expect(await raw(page)).toBe(after);
  });
});
