import { describe, expect, it } from 'vitest';
import { createTestContext } from '../../testing.js';
import { createAreaHarness } from '../subscriptions/area-harness.js';
import { subscriptionsArea, type SubscriptionsState } from '../subscriptions/subscriptions-area.js';
import { workspacesArea } from '../workspaces/workspaces-area.js';
import { devicesArea } from './devices-area.js';

function setup(config: Record<string, unknown> = {}) {
  const subscriptionsCtx = createTestContext({ areaKey: 'subscriptions' });
  const subscriptions: SubscriptionsState = subscriptionsArea.createState(subscriptionsCtx);
  const workspaces = workspacesArea.createState(createTestContext({ areaKey: 'workspaces' }));
  const harness = createAreaHarness(devicesArea, { config, states: { subscriptions, workspaces } });
  const operationId = (location: string | undefined) => (location ?? '').split('/').pop() ?? '';
  return {
    ...harness,
    subscriptions,
    outcomeOf: (location: string | undefined) => harness.ctx.asyncOps.get(operationId(location))?.outcome,
  };
}

const emptyAdd = { network: [], compute: [], storage: [] };
type List = { items: Array<Record<string, unknown>>; total: number; count: number };

describe('devices area', () => {
  it('generates 40 devices that consume subscription quantity', () => {
    const { state, subscriptions } = setup();
    expect(state.devices).toHaveLength(40);
    for (const subscription of subscriptions.subscriptions) {
      const used = state.devices.filter((d) => d.subscription.some((s) => s.id === subscription.id)).length;
      expect(subscription.availableQuantity).toBe(subscription.quantity - used);
    }
  });

  it('lists with filter, sort, limit and offset', async () => {
    const { state, call } = setup();
    const list = (
      await call('devices.listDevices', {
        query: {
          filter: "deviceType eq 'COMPUTE' and assignedState ne 'UNASSIGNED'",
          sort: 'serialNumber desc',
          limit: '2',
          offset: '1',
        },
      })
    ).body as List;
    const expected = state.devices
      .filter((d) => d.deviceType === 'COMPUTE' && d.assignedState !== 'UNASSIGNED')
      .map((d) => d.serialNumber)
      .sort()
      .reverse();
    expect(list.total).toBe(expected.length);
    expect(list.items.map((d) => d.serialNumber)).toEqual(expected.slice(1, 3));
    const byApp = state.devices.find((d) => d.application)!;
    const appList = (
      await call('devices.listDevices', { query: { filter: `application/id eq '${byApp.application!.id}'` } })
    ).body as List;
    expect(appList.items.every((d) => (d.application as { id: string }).id === byApp.application!.id)).toBe(true);
  });

  it('adds up to 5 devices: 202 + Location + small body, devices present on completion', async () => {
    const { ctx, state, call, outcomeOf } = setup();
    const response = await call('devices.addDevices', {
      method: 'POST',
      body: {
        network: [{ serialNumber: 'NEW-N1', macAddress: 'aa:bb:cc:dd:ee:ff', tags: { rack: '4' } }],
        compute: [{ serialNumber: 'NEW-C1', partNumber: 'P1-B21' }],
        storage: [],
      },
    });
    expect(response.status).toBe(202);
    expect(response.headers?.Location).toMatch(/^\/devices\/v1\/async-operations\//);
    expect(response.body).toEqual({
      code: 202,
      status: '202 ACCEPTED',
      transactionId: response.headers?.Location?.split('/').pop(),
    });
    expect(state.bySerial.has('NEW-N1')).toBe(false);
    ctx.advance(60_000);
    expect(outcomeOf(response.headers?.Location)).toMatchObject({
      status: 'SUCCEEDED',
      result: { failedDevicesSerial: [] },
    });
    expect(state.bySerial.get('NEW-N1')).toMatchObject({
      category: 'NETWORK',
      partNumber: expect.stringMatching(/^JL\d{3}A$/),
      macAddress: 'aa:bb:cc:dd:ee:ff',
      tags: { rack: '4' },
      assignedState: 'UNASSIGNED',
    });
    expect(state.bySerial.get('NEW-C1')).toMatchObject({ deviceType: 'COMPUTE', partNumber: 'P1-B21' });
  });

  it('reports failed serials in the result (pinned failure)', async () => {
    const { ctx, state, call, outcomeOf } = setup({ failSerialNumbers: ['BAD-1'] });
    const response = await call('devices.addDevices', {
      body: {
        network: [],
        compute: [{ serialNumber: 'BAD-1', partNumber: 'P' }],
        storage: [{ serialNumber: 'S-OK', partNumber: 'R1' }],
      },
    });
    ctx.advance(60_000);
    expect(outcomeOf(response.headers?.Location)).toMatchObject({
      status: 'FAILED',
      result: { failedDevicesSerial: ['BAD-1'] },
    });
    expect(state.bySerial.get('S-OK')).toMatchObject({ category: 'STORAGE', deviceType: 'STORAGE', partNumber: 'R1' });
    expect(state.bySerial.has('BAD-1')).toBe(false);
  });

  it('refuses more than 5 devices, missing arrays, duplicate and existing serials; dry-run validates only', async () => {
    const { state, call, rejection, ctx, outcomeOf } = setup();
    const six = Array.from({ length: 6 }, (_, i) => ({ serialNumber: `X${i}`, partNumber: 'P' }));
    expect((await rejection('devices.addDevices', { body: { ...emptyAdd, compute: six } })).message).toContain(
      '1 to 5 devices',
    );
    expect(
      (await rejection('devices.addDevices', { body: { compute: [{ serialNumber: 'A', partNumber: 'P' }] } })).message,
    ).toContain("'network' must be an array");
    const dup = await rejection('devices.addDevices', {
      body: {
        ...emptyAdd,
        compute: [{ serialNumber: 'D1', partNumber: 'P' }],
        network: [{ serialNumber: 'D1', partNumber: 'P', macAddress: 'm' }],
      },
    });
    expect(dup.message).toBe("Serial number 'D1' appears twice in the request");
    const existing = state.devices[0]!.serialNumber;
    expect(
      (
        await rejection('devices.addDevices', {
          body: { ...emptyAdd, network: [{ serialNumber: existing, partNumber: 'P', macAddress: 'm' }] },
        })
      ).message,
    ).toContain(`'${existing}' is already in the workspace`);
    expect(
      (await rejection('devices.addDevices', { body: { ...emptyAdd, network: [{ serialNumber: 'N' }] } })).message,
    ).toContain('needs macAddress');
    expect(
      (await rejection('devices.addDevices', { body: { ...emptyAdd, storage: [{ serialNumber: 'S' }] } })).message,
    ).toContain('needs partNumber');
    const dry = await call('devices.addDevices', {
      query: { 'dry-run': 'true' },
      body: { ...emptyAdd, compute: [{ serialNumber: 'DRY', partNumber: 'P' }] },
    });
    expect(dry.status).toBe(202);
    expect(outcomeOf(dry.headers?.Location)).toBeUndefined();
    ctx.advance(1);
    expect(outcomeOf(dry.headers?.Location)).toMatchObject({ status: 'SUCCEEDED', resultType: 'DRY_RUN' });
    expect(state.bySerial.has('DRY')).toBe(false);
  });

  it('assigns and unassigns an application with a region', async () => {
    const { ctx, state, call, rejection } = setup();
    const devices = state.devices.slice(0, 2);
    const application = state.applications[0]!;
    const region = application.regions[0]!;
    const headers = { 'content-type': 'application/merge-patch+json' };
    const ids = devices.map((d) => d.id);
    expect(
      (
        await call('devices.updateDevices', {
          method: 'PATCH',
          headers,
          query: { id: ids },
          body: { application: { id: application.id }, region },
        })
      ).status,
    ).toBe(202);
    ctx.advance(60_000);
    for (const device of devices)
      expect(device).toMatchObject({
        application: { id: application.id },
        region,
        assignedState: 'ASSIGNED_TO_SERVICE',
      });
    await call('devices.updateDevices', {
      headers,
      query: { id: ids },
      body: { application: { id: null }, region: null },
    });
    ctx.advance(60_000);
    for (const device of devices) expect(device).toMatchObject({ assignedState: 'UNASSIGNED' });
    for (const device of devices) expect([device.application, device.region]).toEqual([undefined, undefined]);
    expect(
      (
        await rejection('devices.updateDevices', {
          headers,
          query: { id: ids },
          body: { application: { id: 'nope' }, region },
        })
      ).message,
    ).toContain("Application 'nope' does not exist");
    expect(
      (
        await rejection('devices.updateDevices', {
          headers,
          query: { id: ids },
          body: { application: { id: application.id }, region: 'mars' },
        })
      ).message,
    ).toContain("not available in region 'mars'");
    expect(
      (await rejection('devices.updateDevices', { headers, query: { id: ids }, body: { region, subscription: [] } }))
        .message,
    ).toContain('One kind of change per call');
    expect(
      (
        await rejection('devices.updateDevices', {
          headers: { 'content-type': 'application/json' },
          query: { id: ids },
          body: { subscription: [] },
        })
      ).message,
    ).toContain('merge-patch');
    const six = state.devices.slice(0, 6).map((d) => d.id);
    expect(
      (await rejection('devices.updateDevices', { headers, query: { id: six }, body: { subscription: [] } })).message,
    ).toContain('At most 5 ids');
    expect(
      (await rejection('devices.updateDevices', { headers, query: { id: 'missing' }, body: { subscription: [] } }))
        .status,
    ).toBe(404);
  });

  it('applies and removes subscriptions, checking existence and quantity left', async () => {
    const { ctx, state, call, rejection, subscriptions } = setup();
    const headers = { 'content-type': 'application/merge-patch+json' };
    const subscription = subscriptions.subscriptions.find((s) => s.subscriptionStatus === 'STARTED')!;
    const devices = state.devices.filter((d) => !d.subscription.some((s) => s.id === subscription.id)).slice(0, 3);
    const ids = devices.map((d) => d.id);
    subscription.availableQuantity = 2;
    const short = await rejection('devices.updateDevices', {
      headers,
      query: { id: ids },
      body: { subscription: [{ id: subscription.id }] },
    });
    expect(short.message).toBe(`Subscription '${subscription.key}' has 2 units left, 3 needed`);
    expect(
      (
        await rejection('devices.updateDevices', {
          headers,
          query: { id: ids },
          body: { subscription: [{ id: 'nope' }] },
        })
      ).message,
    ).toContain("Subscription 'nope' does not exist");
    subscription.availableQuantity = 3;
    expect(
      (
        await call('devices.updateDevices', {
          headers,
          query: { id: ids },
          body: { subscription: [{ id: subscription.id }] },
        })
      ).status,
    ).toBe(202);
    ctx.advance(60_000);
    expect(subscription.availableQuantity).toBe(0);
    for (const device of devices) expect(device.subscription).toEqual([{ id: subscription.id }]);
    await call('devices.updateDevices', { headers, query: { id: ids[0]! }, body: { subscription: [] } });
    ctx.advance(60_000);
    expect(devices[0]!.subscription).toEqual([]);
    expect(subscription.availableQuantity).toBe(1);
  });

  it('fails an accepted subscription update whose quantity was used up meanwhile', async () => {
    const { ctx, state, call, subscriptions, outcomeOf } = setup();
    const headers = { 'content-type': 'application/merge-patch+json' };
    const subscription = subscriptions.subscriptions.find((s) => s.subscriptionStatus === 'STARTED')!;
    const free = state.devices.filter((d) => !d.subscription.some((s) => s.id === subscription.id));
    subscription.availableQuantity = 1;
    const first = await call('devices.updateDevices', {
      headers,
      query: { id: free[0]!.id },
      body: { subscription: [{ id: subscription.id }] },
    });
    const second = await call('devices.updateDevices', {
      headers,
      query: { id: free[1]!.id },
      body: { subscription: [{ id: subscription.id }] },
    });
    ctx.advance(60_000);
    expect(outcomeOf(first.headers?.Location)?.status).toBe('SUCCEEDED');
    expect(outcomeOf(second.headers?.Location)).toMatchObject({
      status: 'FAILED',
      error: { errorCode: 'SUBSCRIPTION_UNAVAILABLE' },
    });
    expect(subscription.availableQuantity).toBe(0);
  });
});
