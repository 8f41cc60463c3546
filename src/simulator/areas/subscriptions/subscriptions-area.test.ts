import { describe, expect, it } from 'vitest';
import { createTestContext } from '../../testing.js';
import { workspacesArea } from '../workspaces/workspaces-area.js';
import { createAreaHarness } from './area-harness.js';
import { subscriptionsArea } from './subscriptions-area.js';

function setup(config: Record<string, unknown> = {}) {
  const workspaces = workspacesArea.createState(createTestContext({ areaKey: 'workspaces' }));
  return createAreaHarness(subscriptionsArea, { config, states: { workspaces } });
}

type List = { items: Array<Record<string, unknown>>; total: number };

describe('subscriptions area', () => {
  it('generates 12 subscriptions by default, deterministic for a seed', () => {
    const a = setup().state;
    const b = setup().state;
    expect(a.subscriptions).toHaveLength(12);
    expect(a.subscriptions.map((s) => s.key)).toEqual(b.subscriptions.map((s) => s.key));
    expect(setup({ subscriptions: 3 }).state.subscriptions).toHaveLength(3);
  });

  it('lists with filter, sort and paging, and gets by id', async () => {
    const { state, call } = setup();
    const list = (
      await call('subscriptions.listSubscriptions', {
        query: { filter: "subscriptionStatus eq 'STARTED'", sort: 'quantity desc,key', limit: '3' },
      })
    ).body as List & { count: number };
    const started = state.subscriptions.filter((s) => s.subscriptionStatus === 'STARTED');
    expect(list.total).toBe(started.length);
    expect(list.count).toBe(Math.min(3, started.length));
    const quantities = list.items.map((s) => s.quantity as number);
    expect([...quantities].sort((x, y) => y - x)).toEqual(quantities);
    const first = state.subscriptions[0]!;
    expect((await call('subscriptions.getSubscription', { params: { id: first.id } })).body).toMatchObject({
      id: first.id,
      key: first.key,
    });
  });

  it('refuses an unknown filter property and an unknown id', async () => {
    const { rejection } = setup();
    expect((await rejection('subscriptions.listSubscriptions', { query: { filter: "colour eq 'x'" } })).status).toBe(
      400,
    );
    expect((await rejection('subscriptions.getSubscription', { params: { id: 'nope' } })).status).toBe(404);
  });

  it('adds by keys asynchronously: 202 with Location, applied on completion', async () => {
    const { ctx, state, call } = setup();
    const response = await call('subscriptions.addSubscriptions', {
      method: 'POST',
      body: { subscriptions: [{ key: 'NEWKEY0001' }, { key: 'NEWKEY0002' }] },
    });
    expect(response.status).toBe(202);
    const location = response.headers?.Location ?? '';
    expect(location).toMatch(/^\/subscriptions\/v1\/async-operations\/[0-9a-f-]{36}$/);
    expect(response.body).toEqual({ code: 202, status: '202 ACCEPTED', transactionId: location.split('/').pop() });
    expect(state.subscriptions).toHaveLength(12);
    ctx.advance(60_000);
    expect(ctx.asyncOps.get(location.split('/').pop()!)?.outcome?.status).toBe('SUCCEEDED');
    expect(state.subscriptions.map((s) => s.key)).toEqual(expect.arrayContaining(['NEWKEY0001', 'NEWKEY0002']));
  });

  it('refuses more than 5 keys, duplicates, existing and malformed keys; dry-run changes nothing', async () => {
    const { ctx, state, call, rejection } = setup();
    const six = Array.from({ length: 6 }, (_, i) => ({ key: `NEWKEY000${i}` }));
    expect((await rejection('subscriptions.addSubscriptions', { body: { subscriptions: six } })).message).toContain(
      '1 to 5',
    );
    expect(
      (
        await rejection('subscriptions.addSubscriptions', {
          body: { subscriptions: [{ key: 'NEWKEY0001' }, { key: 'NEWKEY0001' }] },
        })
      ).message,
    ).toContain('given twice');
    const existing = state.subscriptions[0]!.key;
    expect(
      (await rejection('subscriptions.addSubscriptions', { body: { subscriptions: [{ key: existing }] } })).message,
    ).toContain('already in the workspace');
    expect(
      (await rejection('subscriptions.addSubscriptions', { body: { subscriptions: [{ key: 'bad key' }] } })).status,
    ).toBe(400);
    const dry = await call('subscriptions.addSubscriptions', {
      body: { subscriptions: [{ key: 'NEWKEY0009' }] },
      query: { 'dry-run': 'true' },
    });
    expect(dry.status).toBe(202);
    ctx.advance(1);
    expect(ctx.asyncOps.get(dry.headers!.Location!.split('/').pop()!)?.outcome?.status).toBe('SUCCEEDED');
    expect(state.subscriptions.some((s) => s.key === 'NEWKEY0009')).toBe(false);
  });

  it('updates tags of up to 5 subscriptions asynchronously, null removing a tag', async () => {
    const { ctx, state, call, rejection } = setup();
    const [a, b] = state.subscriptions;
    const response = await call('subscriptions.updateSubscriptions', {
      method: 'PATCH',
      query: { id: [a!.id, b!.id] },
      body: { tags: { team: 'ops', gone: null } },
    });
    expect(response.status).toBe(202);
    expect(a!.tags).toEqual({});
    ctx.advance(60_000);
    expect(a!.tags).toEqual({ team: 'ops' });
    expect(b!.tags).toEqual({ team: 'ops' });
    await call('subscriptions.updateSubscriptions', { query: { id: a!.id }, body: { tags: { team: null } } });
    ctx.advance(60_000);
    expect(a!.tags).toEqual({});
    const ids = state.subscriptions.slice(0, 6).map((s) => s.id);
    expect(
      (await rejection('subscriptions.updateSubscriptions', { query: { id: ids }, body: { tags: {} } })).message,
    ).toContain('At most 5 ids');
    const tooMany = Object.fromEntries(Array.from({ length: 26 }, (_, i) => [`t${i}`, 'v']));
    expect(
      (await rejection('subscriptions.updateSubscriptions', { query: { id: a!.id }, body: { tags: tooMany } })).message,
    ).toContain('at most 25 tags');
  });

  it('auto-subscription settings: defaults, upsert of pairs, null tier removes the pair', async () => {
    const { call, rejection, ctx } = setup();
    const list = (await call('subscriptions.listAutoSubscriptionSettings')).body as List;
    expect(list.total).toBe(1);
    const settings = list.items[0]!;
    expect(settings.tenantWorkspaceId).toBe(ctx.stateOf<{ workspace: { id: string } }>('workspaces').workspace.id);
    expect(settings.autoSubscriptionSettings).toEqual([
      { deviceType: 'COMPUTE', tier: 'STANDARD_COMPUTE' },
      { deviceType: 'AP', tier: 'FOUNDATION_AP' },
    ]);
    const id = settings.id as string;
    const generation = settings.generation as number;
    const updated = await call('subscriptions.updateAutoSubscriptionSettings', {
      method: 'PATCH',
      params: { id },
      body: {
        autoSubscriptionSettings: [
          { deviceType: 'COMPUTE', tier: 'ENHANCED_COMPUTE' },
          { deviceType: 'AP', tier: null },
          { deviceType: 'SWITCH', tier: 'FOUNDATION_SWITCH' },
        ],
      },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      id,
      generation: generation + 1,
      autoSubscriptionSettings: [
        { deviceType: 'COMPUTE', tier: 'ENHANCED_COMPUTE' },
        { deviceType: 'SWITCH', tier: 'FOUNDATION_SWITCH' },
      ],
    });
    expect((await call('subscriptions.getAutoSubscriptionSettings', { params: { id } })).body).toEqual(updated.body);
    expect(
      (
        await rejection('subscriptions.updateAutoSubscriptionSettings', {
          params: { id },
          body: { autoSubscriptionSettings: [] },
        })
      ).status,
    ).toBe(400);
    expect(
      (await rejection('subscriptions.listAutoSubscriptionSettings', { query: { filter: "id eq 'x'" } })).status,
    ).toBe(400);
  });
});
