import { afterEach, describe, expect, it } from 'vitest';
import { startTestSimulator, type JsonBody } from './core-helpers.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function start() {
  const t = await startTestSimulator({ timeScale: 1e-6 });
  close = () => t.sim.close();
  return { ...t, advance: (ms: number) => t.sim.control.clock.advance(ms) };
}
const mergePatch = { 'content-type': 'application/merge-patch+json' };

describe('devices and subscriptions through HTTP', () => {
  it('lists with filter, sort, limit and offset; 400 naming a bad filter', async () => {
    const { call, sim } = await start();
    const all = (await call('GET', '/devices/v1/devices')).body;
    expect(all.total).toBe(40);
    const filter = encodeURIComponent("deviceType in ['COMPUTE', 'STORAGE'] and not assignedState eq 'UNASSIGNED'");
    const page = await call(
      'GET',
      `/devices/v1/devices?filter=${filter}&sort=${encodeURIComponent('serialNumber desc')}&limit=3&offset=1`,
    );
    const expected = (all.items as JsonBody[])
      .filter((d) => ['COMPUTE', 'STORAGE'].includes(d.deviceType) && d.assignedState !== 'UNASSIGNED')
      .map((d) => d.serialNumber as string)
      .sort()
      .reverse();
    expect(page.body.total).toBe(expected.length);
    expect(page.body.items.map((d: JsonBody) => d.serialNumber)).toEqual(expected.slice(1, 4));
    const bad = await call('GET', `/devices/v1/devices?filter=${encodeURIComponent("colour eq 'red'")}`);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("unknown property 'colour'");
    expect(bad.body.errorDetails[0].issues[0]).toMatchObject({ source: 'query.parameter', subject: 'filter' });
    expect(
      (await call('GET', `/subscriptions/v1/subscriptions?filter=${encodeURIComponent('quantity eq 1.5')}`)).status,
    ).toBe(400);
    expect(sim.control.violations()).toEqual([]);
  });

  it('adds devices (202 + Location), follows the operation to its result, refuses duplicates', async () => {
    const { call, advance, sim } = await start();
    const body = {
      network: [{ serialNumber: 'NW-1', macAddress: '00:1B:44:11:3A:B7' }],
      compute: [{ serialNumber: 'CZ-1', partNumber: 'P1-B21' }],
      storage: [],
    };
    const accepted = await call('POST', '/devices/v1/devices', { body });
    expect(accepted.status).toBe(202);
    const location = accepted.headers.get('location')!;
    expect(accepted.body).toEqual({ code: 202, status: '202 ACCEPTED', transactionId: location.split('/').pop() });
    advance(60_000);
    expect((await call('GET', location)).body).toMatchObject({
      status: 'SUCCEEDED',
      result: { failedDevicesSerial: [] },
    });
    const found = await call('GET', `/devices/v1/devices?filter=${encodeURIComponent("serialNumber eq 'NW-1'")}`);
    expect(found.body.items[0]).toMatchObject({ category: 'NETWORK', macAddress: '00:1B:44:11:3A:B7' });
    const again = await call('POST', '/devices/v1/devices', { body });
    expect(again.status).toBe(400);
    expect(again.body.message).toContain("'NW-1' is already in the workspace");
    const six = {
      ...body,
      network: [],
      compute: Array.from({ length: 6 }, (_, i) => ({ serialNumber: `S${i}`, partNumber: 'P' })),
    };
    expect((await call('POST', '/devices/v1/devices', { body: six })).status).toBe(400);
    expect(sim.control.violations()).toEqual([]);
  });

  it('applies a subscription to devices, consuming quantity; removes it again', async () => {
    const { call, advance, sim, token } = await start();
    const subscriptions = (
      await call(
        'GET',
        `/subscriptions/v1/subscriptions?filter=${encodeURIComponent("subscriptionStatus eq 'STARTED' and availableQuantity ge 2")}`,
      )
    ).body.items;
    const subscription = subscriptions[0];
    const devices = (await call('GET', '/devices/v1/devices')).body.items
      .filter((d: JsonBody) => !(d.subscription ?? []).some((s: JsonBody) => s.id === subscription.id))
      .slice(0, 2);
    const ids = devices.map((d: JsonBody) => `id=${d.id}`).join('&');
    const patch = await fetch(`${sim.url}/devices/v1/devices?${ids}`, {
      method: 'PATCH',
      // The helper's call() sends application/json; this update takes a merge patch.
      headers: { ...mergePatch, authorization: `Bearer ${await token()}` },
      body: JSON.stringify({ subscription: [{ id: subscription.id }] }),
    });
    expect(patch.status).toBe(202);
    advance(60_000);
    expect((await call('GET', patch.headers.get('location')!)).body.status).toBe('SUCCEEDED');
    // Quantities are strings, as published.
    expect((await call('GET', `/subscriptions/v1/subscriptions/${subscription.id}`)).body.availableQuantity).toBe(
      String(Number(subscription.availableQuantity) - 2),
    );
    expect((await call('GET', `/devices/v1/devices/${devices[0].id}`)).body.subscription).toEqual([
      expect.objectContaining({ id: subscription.id, key: subscription.key, tier: subscription.tier }),
    ]);
    expect(sim.control.violations()).toEqual([]);
  });

  it('auto-subscription settings: upsert and removal by null tier', async () => {
    const { call, sim } = await start();
    const settings = (await call('GET', '/subscriptions/v1/auto-subscription-settings')).body.items[0];
    const updated = await call('PATCH', `/subscriptions/v1/auto-subscription-settings/${settings.id}`, {
      body: {
        autoSubscriptionSettings: [
          { deviceType: 'SWITCH', tier: 'ADVANCED_SWITCH' },
          { deviceType: 'AP', tier: null },
        ],
      },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.autoSubscriptionSettings).toEqual([
      { deviceType: 'COMPUTE', tier: 'STANDARD_COMPUTE' },
      { deviceType: 'SWITCH', tier: 'ADVANCED_SWITCH' },
    ]);
    const added = await call('POST', '/subscriptions/v1/subscriptions', {
      body: { subscriptions: [{ key: 'KX7Q2M9RTV4L' }] },
    });
    expect(added.status).toBe(202);
    expect(added.headers.get('location')).toMatch(/^\/subscriptions\/v1\/async-operations\//);
    expect(sim.control.violations()).toEqual([]);
  });
});
