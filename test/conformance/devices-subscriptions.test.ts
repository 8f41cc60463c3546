import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallResult, PlatformClient } from '../../src/api/index.js';
import {
  answerOf,
  expectConformant,
  expectNoViolations,
  startConformance,
  type Conformance,
  type JsonBody,
} from './harness.js';

const DAY_MS = 24 * 3_600_000;
const WAIT = { minPollMs: 2, maxPollMs: 20, timeoutMs: 15_000 } as const;

let t: Conformance;
beforeAll(async () => {
  t = await startConformance();
});
afterAll(async () => {
  await expectConformant(t.sim, 'devices-subscriptions');
  await t.close();
});

const follow = (client: PlatformClient, accepted: CallResult) => client.waitForOperation(accepted, WAIT);
const idOf = (accepted: CallResult) => accepted.headers.location!.split('/').pop()!;

describe('devices and subscriptions conformance', () => {
  it('devices: add 202 + Location, result, update assigns and applies subscriptions, get, list', async () => {
    const { operator, observer } = t;
    const body = {
      network: [{ serialNumber: 'CONF-NW-1', macAddress: '00:1B:44:11:3A:B7', tags: { site: 'berlin' } }],
      compute: [{ serialNumber: 'CONF-CZ-1', partNumber: 'P12345-B21' }],
      storage: [],
    };
    const dryRun = await operator.devices.addDevices({ body, 'dry-run': true });
    expect(dryRun.status).toBe(202);
    expect((await follow(operator, dryRun)).operation).toMatchObject({ status: 'SUCCEEDED', resultType: 'DRY_RUN' });
    expect((await observer.devices.listDevices({ filter: "serialNumber eq 'CONF-NW-1'" })).body.total).toBe(0);

    const added = await operator.devices.addDevices({ body });
    expect(added.status).toBe(202);
    expect(added.headers.location).toMatch(/^\/devices\/v1\/async-operations\/[\w-]+$/);
    expect(added.body).toEqual({ code: 202, status: '202 ACCEPTED', transactionId: idOf(added) });
    const done = await follow(operator, added);
    expect(done).toMatchObject({
      outcome: 'succeeded',
      flavour: 'devices',
      operation: { status: 'SUCCEEDED', result: { failedDevicesSerial: [] }, progressPercent: 100 },
    });
    expect(Number.isInteger(done.operation.suggestedPollingIntervalSeconds)).toBe(true);

    const found = await observer.devices.listDevices({
      filter: "serialNumber in ['CONF-NW-1', 'CONF-CZ-1']",
      sort: 'serialNumber desc',
    });
    expect((found.body.items as JsonBody[]).map((device) => [device.serialNumber, device.category])).toEqual([
      ['CONF-NW-1', 'NETWORK'],
      ['CONF-CZ-1', 'COMPUTE'],
    ]);
    const [network, compute] = found.body.items as JsonBody[];
    expect(['SWITCH', 'AP', 'GATEWAY']).toContain(network.deviceType);
    const shown = (await observer.devices.getDevice({ id: network.id })).body as JsonBody;
    expect(shown).toMatchObject({
      partNumber: expect.stringMatching(/^JL\d{3}A$/),
      macAddress: '00:1B:44:11:3A:B7',
      tags: { site: 'berlin' },
      source: 'MANAGED',
      ownership: 'MANAGED',
    });
    // The world fills the published inventory facts.
    expect(shown.location).toMatchObject({
      id: expect.any(String),
      resourceUri: expect.any(String),
      city: expect.any(String),
    });
    expect(shown.warranty.currentSupportLevel).toMatchObject({
      startDate: expect.any(String),
      endDate: expect.any(String),
    });
    expect(shown.contact.email).toContain('@');

    // A failed addition carries the failed serial numbers as the facts page shows.
    const failing = await startConformance({ world: { devices: { failSerialNumbers: ['CONF-ST-1'] } } });
    try {
      const unknown = await failing.operator.devices.addDevices({
        body: { network: [], compute: [], storage: [{ serialNumber: 'CONF-ST-1', partNumber: 'R0Q83A' }] },
      });
      const failed = await follow(failing.operator, unknown);
      expect(failed).toMatchObject({
        outcome: 'failed',
        operation: {
          status: 'FAILED',
          result: { failedDevicesSerial: ['CONF-ST-1'] },
          error: { errorCode: 'DEVICES_NOT_ADDED' },
        },
      });
      expect(failed.error?.message).toContain('CONF-ST-1');
      await expectNoViolations(failing.sim);
    } finally {
      await failing.close();
    }
    // Refused at once: a serial number already present, more than five devices.
    expect((await answerOf(operator.devices.addDevices({ body }))).status).toBe(400);
    const six = {
      network: [],
      storage: [],
      compute: Array.from({ length: 6 }, (_, i) => ({ serialNumber: `CONF-SIX-${i}`, partNumber: 'P1' })),
    };
    expect((await answerOf(operator.devices.addDevices({ body: six }))).status).toBe(400);

    // Assign both to an application the world knows, in one of its regions.
    const assigned = (
      (await observer.devices.listDevices({ filter: "assignedState eq 'ASSIGNED_TO_SERVICE'", limit: 1 })).body
        .items as JsonBody[]
    )[0];
    const assign = await operator.devices.updateDevices({
      id: [network.id, compute.id],
      body: { application: { id: assigned.application.id }, region: assigned.region },
    });
    expect(assign.status).toBe(202);
    expect((await follow(operator, assign)).outcome).toBe('succeeded');
    expect((await observer.devices.getDevice({ id: compute.id })).body).toMatchObject({
      assignedState: 'ASSIGNED_TO_SERVICE',
      region: assigned.region,
    });

    // Apply a subscription with quantity left: its available quantity drops by two; remove it again.
    const subscription = (
      (
        await observer.subscriptions.listSubscriptions({
          filter: "subscriptionStatus eq 'STARTED' and availableQuantity ge 2",
          limit: 1,
        })
      ).body.items as JsonBody[]
    )[0];
    const apply = await operator.devices.updateDevices({
      id: [network.id, compute.id],
      body: { subscription: [{ id: subscription.id }] },
    });
    expect((await follow(operator, apply)).outcome).toBe('succeeded');
    // Quantities are strings, as published.
    expect((await observer.subscriptions.getSubscription({ id: subscription.id })).body).toMatchObject({
      availableQuantity: String(Number(subscription.availableQuantity) - 2),
    });
    expect((await observer.devices.getDevice({ id: network.id })).body).toMatchObject({
      subscription: [
        {
          id: subscription.id,
          key: subscription.key,
          tier: subscription.tier,
          resourceUri: `/subscriptions/v1/subscriptions/${subscription.id}`,
        },
      ],
    });
    const remove = await operator.devices.updateDevices({ id: [network.id, compute.id], body: { subscription: [] } });
    expect((await follow(operator, remove)).outcome).toBe('succeeded');
    expect((await observer.subscriptions.getSubscription({ id: subscription.id })).body).toMatchObject({
      availableQuantity: subscription.availableQuantity,
    });
    // Unknown subscription, unknown application: 400 at once.
    const unknownId = '00000000-0000-4000-8000-000000000000';
    expect(
      (
        await answerOf(
          operator.devices.updateDevices({ id: [network.id], body: { subscription: [{ id: unknownId }] } }),
        )
      ).status,
    ).toBe(400);
    expect(
      (
        await answerOf(
          operator.devices.updateDevices({
            id: [network.id],
            body: { application: { id: unknownId }, region: 'eu-west' },
          }),
        )
      ).status,
    ).toBe(400);
    // Unassign: application id and region null, as the published operation text says.
    const unassign = await operator.devices.updateDevices({
      id: [compute.id],
      body: { application: { id: null }, region: null },
    });
    expect((await follow(operator, unassign)).outcome).toBe('succeeded');
    const unassigned = (await observer.devices.getDevice({ id: compute.id })).body as JsonBody;
    expect(unassigned.assignedState).toBe('UNASSIGNED');
    expect([unassigned.application, unassigned.region]).toEqual([undefined, undefined]);
    const sixIds = Array.from({ length: 6 }, (_, i) => `00000000-0000-4000-8000-00000000000${i}`);
    expect((await answerOf(operator.devices.updateDevices({ id: sixIds, body: { subscription: [] } }))).status).toBe(
      400,
    );
  });

  it('subscriptions: add by key, tag update, get, list', async () => {
    const { operator, observer } = t;
    const added = await operator.subscriptions.addSubscriptions({
      body: { subscriptions: [{ key: 'CONFKEY000001' }, { key: 'CONFKEY000002' }] },
    });
    expect(added.status).toBe(202);
    expect(added.headers.location).toMatch(/^\/subscriptions\/v1\/async-operations\/[\w-]+$/);
    const done = await follow(operator, added);
    expect(done).toMatchObject({ outcome: 'succeeded', flavour: 'subscriptions', operation: { status: 'SUCCEEDED' } });
    const listed = await observer.subscriptions.listSubscriptions({
      filter: "key in ['CONFKEY000001', 'CONFKEY000002']",
      sort: 'key asc',
    });
    expect((listed.body.items as JsonBody[]).map((subscription) => subscription.key)).toEqual([
      'CONFKEY000001',
      'CONFKEY000002',
    ]);
    const [first] = listed.body.items as JsonBody[];
    const tagged = await operator.subscriptions.updateSubscriptions({
      id: [first.id],
      body: { tags: { owner: 'ops' } },
    });
    expect(tagged.status).toBe(202);
    expect((await follow(operator, tagged)).outcome).toBe('succeeded');
    expect((await observer.subscriptions.getSubscription({ id: first.id })).body).toMatchObject({
      tags: { owner: 'ops' },
    });
    const untagged = await operator.subscriptions.updateSubscriptions({
      id: [first.id],
      body: { tags: { owner: null } },
    });
    await follow(operator, untagged);
    expect(((await observer.subscriptions.getSubscription({ id: first.id })).body as JsonBody).tags).toEqual({});
    // Refused at once: a key already added, six keys.
    expect(
      (await answerOf(operator.subscriptions.addSubscriptions({ body: { subscriptions: [{ key: 'CONFKEY000001' }] } })))
        .status,
    ).toBe(400);
    const six = Array.from({ length: 6 }, (_, i) => ({ key: `CONFSIX00000${i}` }));
    expect((await answerOf(operator.subscriptions.addSubscriptions({ body: { subscriptions: six } }))).status).toBe(
      400,
    );
  });

  it('auto-subscription settings: upsert pairs, remove a pair with a null tier', async () => {
    const { operator, observer } = t;
    const listed = await observer.subscriptions.listAutoSubscriptionSettings();
    const [settings] = listed.body.items as JsonBody[];
    expect(settings.autoSubscriptionSettings.length).toBeGreaterThan(0);
    // The list adds the tenant workspace to each record, as published.
    const { tenantWorkspaceId, ...own } = settings;
    expect(tenantWorkspaceId).toEqual(expect.any(String));
    expect((await observer.subscriptions.getAutoSubscriptionSettings({ id: settings.id })).body).toEqual(own);
    const updated = await operator.subscriptions.updateAutoSubscriptionSettings({
      id: settings.id,
      body: {
        autoSubscriptionSettings: [
          { deviceType: 'SWITCH', tier: 'ADVANCED_SWITCH' },
          { deviceType: 'AP', tier: null },
        ],
      },
    });
    expect(updated.status).toBe(200);
    const pairs = (updated.body as JsonBody).autoSubscriptionSettings as JsonBody[];
    expect(pairs).toContainEqual({ deviceType: 'SWITCH', tier: 'ADVANCED_SWITCH' });
    expect(pairs.some((pair) => pair.deviceType === 'AP')).toBe(false);
    // Published enums: an unknown device type or tier is refused before anything changes.
    const refused = await answerOf(
      operator.subscriptions.updateAutoSubscriptionSettings({
        id: settings.id,
        body: { autoSubscriptionSettings: [{ deviceType: 'TOASTER' as 'AP', tier: 'FOUNDATION_AP' }] },
      }),
    );
    expect(refused.status).toBe(400);
    expect((await observer.subscriptions.getAutoSubscriptionSettings({ id: settings.id })).body).toEqual(updated.body);
  });

  it('paging limits of the facts page: out of range 400, an offset past the end', async () => {
    const { observer } = t;
    for (const [call, max] of [
      [(limit: number) => observer.devices.listDevices({ limit }), 2000],
      [(limit: number) => observer.subscriptions.listSubscriptions({ limit }), 200],
    ] as const) {
      expect((await call(max)).status).toBe(200);
      const over = await answerOf(call(max + 1));
      expect(over.status).toBe(400);
      expect(over.body.errorDetails[0].issues[0]).toMatchObject({ source: 'query.parameter', subject: 'limit' });
    }
    // Devices take 1–2000: 0 is out of range here (reporting, 0–100, answers just the total).
    expect((await answerOf(observer.devices.listDevices({ limit: 0 }))).status).toBe(400);
    // Offset past the end: an empty page, the total kept.
    const past = await observer.devices.listDevices({ offset: 10_000 });
    expect(past.body).toMatchObject({ items: [], count: 0, offset: 10_000 });
    expect(past.body.total).toBeGreaterThan(0);
  });

  it('async operations: an id of another flavour is a 404; devices and subscriptions operations are gone a day after they end', async () => {
    const { operator, admin } = t;
    const added = await operator.subscriptions.addSubscriptions({
      body: { subscriptions: [{ key: 'CONFKEYGONE01' }] },
    });
    await follow(operator, added);
    const id = idOf(added);
    expect((await operator.subscriptions.getAsyncOperation({ id })).status).toBe(200);
    expect(await answerOf(operator.devices.getAsyncOperation({ id }))).toMatchObject({ status: 404 });
    expect(await answerOf(admin.dataServices.getAsyncOperation({ id }, { region: 'eu-west' }))).toMatchObject({
      status: 404,
    });
    expect(await answerOf(admin.reporting.getAsyncOperation({ id }))).toMatchObject({ status: 404 });
    // Half an hour of margin: at this time scale that is half a real second.
    t.sim.control.clock.advance(DAY_MS - 30 * 60_000);
    expect((await operator.subscriptions.getAsyncOperation({ id })).status).toBe(200);
    t.sim.control.clock.advance(30 * 60_000);
    expect(await answerOf(operator.subscriptions.getAsyncOperation({ id }))).toMatchObject({ status: 404 });
  });

  it('rate limits: the published per-minute limit per client, 429 with rate-limit headers and a Retry-After header (the published 429 body has no retry detail)', async () => {
    const limited = await startConformance({ rateLimitScale: 1 });
    try {
      // Sent raw: the client keeps to the limit the answers state, so it would never see the 429.
      const token = (
        (await (
          await fetch(`${limited.sim.authUrl}/as/token.oauth2`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: 'grant_type=client_credentials&client_id=sim-admin&client_secret=sim-admin-secret',
          })
        ).json()) as { access_token: string }
      ).access_token;
      const add = (key: string) =>
        fetch(`${limited.sim.url}/subscriptions/v1/subscriptions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ subscriptions: [{ key }] }),
        });
      for (let i = 0; i < 4; i += 1) expect((await add(`CONFRATE0000${i}`)).status).toBe(202);
      const raw = await add('CONFRATE00011');
      expect(raw.status).toBe(429);
      expect(raw.headers.get('ratelimit-limit')).toBe('4');
      expect(raw.headers.get('ratelimit-remaining')).toBe('0');
      expect(Number(raw.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
      expect(Number(raw.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(((await raw.json()) as { errorDetails?: unknown }).errorDetails).toBeUndefined();
      // Per client: another client still has its own minute.
      expect(
        (
          await limited
            .clientFor('sim-operator')
            .subscriptions.addSubscriptions({ body: { subscriptions: [{ key: 'CONFRATE00010' }] } })
        ).status,
      ).toBe(202);
      await expectNoViolations(limited.sim);
    } finally {
      await limited.close();
    }
  });
});
