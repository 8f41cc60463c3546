import { afterEach, expect, it } from 'vitest';
import { playbook, startHarness, step, t, type Harness } from './harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const REGIONS = ['us-west', 'eu-west', 'eu-central', 'ap-northeast'];
const inRegion = t('${{ region }}');
const system = '${{ system.id }}';
const target = {
  catalogVersion: '2.4.0',
  hypervisorClusterIds: '${{ [system.hypervisorClusters.hypervisorClusterId] }}',
};

/** Prechecks, update and resume of every online system with an update path, region by region, two systems at a time. */
const rollingUpdate = playbook([
  step({
    id: 'regions',
    kind: 'forEach',
    items: t(REGIONS),
    as: 'region',
    concurrency: t(1),
    steps: [
      step({
        id: 'catalog',
        kind: 'call',
        operationId: 'privateCloud.listSoftwareCatalogs',
        region: inRegion,
        with: t({ filter: "version eq '2.4.0'" }),
      }),
      step({
        id: 'systems',
        kind: 'forEach',
        items: t('${{ steps.catalog.outputs.body.items[0].systemsWithUpdatePath[] }}'),
        as: 'system',
        concurrency: t(2),
        steps: [
          step({
            id: 'info',
            kind: 'call',
            operationId: 'privateCloud.getSystem',
            region: inRegion,
            with: t({ id: system }),
          }),
          step({
            id: 'update',
            kind: 'block',
            if: t("${{ steps.info.outputs.body.state = 'ONLINE' }}"),
            steps: [
              step({
                id: 'precheck',
                kind: 'call',
                operationId: 'privateCloud.runSoftwarePrechecks',
                region: inRegion,
                with: t({ id: system, body: target }),
                wait: {},
              }),
              step({
                id: 'apply',
                kind: 'call',
                operationId: 'privateCloud.runSoftwareUpdate',
                region: inRegion,
                with: t({ id: system, body: target }),
                wait: {},
                rescue: [
                  step({
                    id: 'resume',
                    kind: 'call',
                    operationId: 'privateCloud.resumeSoftwareUpdate',
                    region: inRegion,
                    with: t({ id: system }),
                    wait: {},
                  }),
                ],
              }),
            ],
          }),
        ],
      }),
    ],
  }),
]);

it('updates every updatable cluster of the default world, rescue resuming the pinned failure', async () => {
  const h = (harness = await startHarness());
  const result = await h.run(rollingUpdate);
  expect(result.error).toBeUndefined();
  expect(result.status).toBe('succeeded');
  // The default world pins one failure (the first system's hypervisor step): rescued, not failed.
  const rescued = result.steps.filter((step) => step.rescued);
  expect(rescued.map((step) => step.path)).toEqual(['regions[0].systems[0].update.apply']);
  expect(result.steps.find((step) => step.path === 'regions[0].systems[0].update.apply.resume')).toMatchObject({
    status: 'succeeded',
  });

  // Checked through the platform's own API: no online system has an update path to 2.4.0 left.
  for (const region of REGIONS) {
    const catalogs = await h.client.invoke(
      'privateCloud.listSoftwareCatalogs',
      { filter: "version eq '2.4.0'" },
      { region },
    );
    const left =
      (catalogs.body as { items: Array<{ systemsWithUpdatePath: Array<{ id: string }> }> }).items[0]
        ?.systemsWithUpdatePath ?? [];
    for (const remaining of left) {
      const state = (await h.client.invoke('privateCloud.getSystem', { id: remaining.id }, { region })).body as {
        state: string;
      };
      expect(state.state, `${region} system ${remaining.id} still has an update path`).not.toBe('ONLINE');
    }
  }
  const updates = h.sim.control.requests({ operationId: 'privateCloud.runSoftwareUpdate' });
  expect(updates.length).toBeGreaterThanOrEqual(3);
  expect(updates.every((entry) => entry.status === 202)).toBe(true);
  expect(
    h.sim.control.requests({ operationId: 'privateCloud.resumeSoftwareUpdate' }).map((entry) => entry.status),
  ).toEqual([202]);
});
