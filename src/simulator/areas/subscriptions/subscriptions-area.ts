/**
 * Subscription management: subscriptions added by key (async), tag updates (async), and
 * the workspace's auto-subscription settings.
 *
 * `PATCH /subscriptions/v1/subscriptions` mirrors the device update: `?id=..&id=..` (at most
 * 5), an `application/merge-patch+json` body `{tags: {name: value | null}}` (null removes the
 * tag), 202 with an async operation whose completion applies the tags. Records are answered
 * as published: quantities as strings.
 */
import type { AreaModule, Rng, SimContext, SimRequest } from '../../context.js';
import { badRequest, notFound } from '../../errors.js';
import { createListQuery } from '../../filter/index.js';
import type { WorkspacesState } from '../workspaces/workspaces-area.js';
import { generatedRecord, touch, WORLD_EPOCH_MS, type RecordFields } from '../workspaces/world-time.js';
import { acceptWrite, batchIds, checkTags, MAX_BATCH } from './batch-writes.js';

/** Published subscription types the world uses, each with the published tiers it sells. */
const PRODUCTS = {
  CENTRAL_COMPUTE: { tiers: ['FOUNDATION_SERVER', 'STANDARD_SERVER', 'ENHANCED_SERVER'], label: 'server' },
  CENTRAL_STORAGE: { tiers: ['FOUNDATION_STORAGE', 'STANDARD_STORAGE', 'ENHANCED_STORAGE'], label: 'storage' },
  CENTRAL_SWITCH: { tiers: ['FOUNDATION_SWITCH_6300', 'ADVANCED_SWITCH_6300'], label: 'switch' },
  CENTRAL_AP: { tiers: ['FOUNDATION_AP', 'ADVANCED_AP'], label: 'access point' },
} as const;
type SubscriptionType = keyof typeof PRODUCTS;
const SUBSCRIPTION_TYPES = Object.keys(PRODUCTS) as SubscriptionType[];

export interface Subscription extends RecordFields {
  resourceUri: string;
  key: string;
  /** Numbers here; the published record answers them as strings. */
  quantity: number;
  availableQuantity: number;
  isEval: boolean;
  sku: string;
  skuDescription: string;
  tierDescription: string;
  productType: 'DEVICE';
  quote: string;
  contract: string;
  po: string;
  resellerPo: string;
  subscriptionType: SubscriptionType;
  subscriptionStatus: 'STARTED' | 'ENDED' | 'SUSPENDED';
  tier: string;
  startTime: string;
  endTime: string;
  tags: Record<string, string>;
}

/** The published record: quantities as strings. */
export function subscriptionView(subscription: Subscription): Record<string, unknown> {
  return {
    ...subscription,
    quantity: String(subscription.quantity),
    availableQuantity: String(subscription.availableQuantity),
  };
}

export interface AutoSubscriptionSettings extends RecordFields {
  resourceUri: string;
  autoSubscriptionSettings: Array<{ deviceType: string; tier: string }>;
}

export interface SubscriptionsState {
  /** In creation order; `byId` indexes the same objects. */
  subscriptions: Subscription[];
  byId: Map<string, Subscription>;
  autoSettings: AutoSubscriptionSettings[];
}

/** World-file settings of the subscriptions area. */
export interface SubscriptionsConfig {
  /** @default 12 */
  subscriptions?: number;
}

/** JSON Schema of the world-file section `subscriptions`. */
const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { subscriptions: { type: 'integer', minimum: 0, maximum: 100_000 } },
} as const;

/** Simulated duration of a subscription write. */
const WRITE_DURATION_MS = 8_000;
const DAY_MS = 86_400_000;
const KEY_PATTERN = /^[A-Z0-9]{8,32}$/;

const schema = {
  id: 'string',
  key: 'string',
  quantity: 'integer',
  availableQuantity: 'integer',
  isEval: 'boolean',
  sku: 'string',
  skuDescription: 'string',
  tierDescription: 'string',
  productType: 'string',
  quote: 'string',
  contract: 'string',
  po: 'string',
  subscriptionType: 'string',
  subscriptionStatus: 'string',
  tier: 'string',
  startTime: 'timestamp',
  endTime: 'timestamp',
  createdAt: 'timestamp',
  updatedAt: 'timestamp',
} as const;

const listQuery = createListQuery({ filter: schema, sort: schema });

function subscriptionFrom(rng: Rng, key: string, record: RecordFields): Subscription {
  const subscriptionType = rng.pick(SUBSCRIPTION_TYPES);
  const product = PRODUCTS[subscriptionType];
  const tier = rng.pick(product.tiers);
  const quantity = rng.pick([5, 10, 25, 50, 100]);
  const start = Date.parse(record.createdAt);
  const evaluation = rng.next() < 0.2;
  const endTime = new Date(start + (evaluation ? 90 : rng.pick([365, 730, 1095])) * DAY_MS).toISOString();
  return {
    ...record,
    resourceUri: `/subscriptions/v1/subscriptions/${record.id}`,
    key,
    quantity,
    availableQuantity: quantity,
    isEval: evaluation,
    sku: `S${rng.int(1000, 9999)}-${tier.slice(0, 3)}`,
    skuDescription: `${product.label} subscription, ${quantity} units, ${evaluation ? '90 days evaluation' : 'term licence'}`,
    tierDescription: `${tier.split('_')[0]!.charAt(0)}${tier.split('_')[0]!.slice(1).toLowerCase()} ${product.label}`,
    productType: 'DEVICE',
    quote: String(rng.int(10_000_000, 99_999_999)),
    contract: `C-${rng.int(100_000, 999_999)}`,
    po: `PO-${rng.int(10_000, 99_999)}`,
    resellerPo: `RPO-${rng.int(10_000, 99_999)}`,
    subscriptionType,
    subscriptionStatus: Date.parse(endTime) < WORLD_EPOCH_MS ? 'ENDED' : 'STARTED',
    tier,
    startTime: record.createdAt,
    endTime,
    tags: {},
  };
}

function generateKey(rng: Rng): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  let key = '';
  for (let i = 0; i < 14; i += 1) key += alphabet[rng.int(0, alphabet.length - 1)];
  return key;
}

function createState(ctx: SimContext): SubscriptionsState {
  const config = ctx.config as SubscriptionsConfig;
  const rng = ctx.rng.fork('subscriptions');
  const subscriptions = Array.from({ length: config.subscriptions ?? 12 }, () =>
    subscriptionFrom(rng, generateKey(rng), generatedRecord(rng, 'subscription', 500)),
  );
  const settingsRng = ctx.rng.fork('auto-subscription-settings');
  const autoSettings: AutoSubscriptionSettings = {
    ...generatedRecord(settingsRng, 'auto-subscription-settings', 900),
    resourceUri: '',
    // Defaults from workspace creation.
    autoSubscriptionSettings: [
      { deviceType: 'COMPUTE', tier: 'STANDARD_COMPUTE' },
      { deviceType: 'AP', tier: 'FOUNDATION_AP' },
    ],
  };
  autoSettings.resourceUri = `/subscriptions/v1/auto-subscription-settings/${autoSettings.id}`;
  return { subscriptions, byId: new Map(subscriptions.map((s) => [s.id, s])), autoSettings: [autoSettings] };
}

function bodyOf(req: SimRequest): Record<string, unknown> {
  if (req.body === null || typeof req.body !== 'object' || Array.isArray(req.body)) {
    throw badRequest('The request body must be a JSON object', [
      { source: 'field', subject: 'body', description: 'expected an object' },
    ]);
  }
  return req.body as Record<string, unknown>;
}

function handlers(state: SubscriptionsState, ctx: SimContext) {
  const find = (id: string): Subscription => {
    const subscription = state.byId.get(id);
    if (!subscription) throw notFound('Subscription', id);
    return subscription;
  };
  const workspaceId = () => ctx.stateOf<WorkspacesState>('workspaces').workspace.id;
  const findSettings = (id: string): AutoSubscriptionSettings => {
    const settings = state.autoSettings.find((s) => s.id === id);
    if (!settings) throw notFound('Auto-subscription settings', id);
    return settings;
  };

  return {
    'subscriptions.listSubscriptions': (req: SimRequest) => {
      const page = listQuery.page(state.subscriptions, req);
      return { status: 200, body: { ...page, items: page.items.map(subscriptionView) } };
    },

    'subscriptions.getSubscription': (req: SimRequest) => ({
      status: 200,
      body: subscriptionView(find(req.params.id ?? '')),
    }),

    'subscriptions.addSubscriptions': (req: SimRequest) => {
      const entries = bodyOf(req).subscriptions;
      if (!Array.isArray(entries) || entries.length === 0 || entries.length > MAX_BATCH) {
        throw badRequest(`Give 1 to ${MAX_BATCH} subscription keys`, [
          { source: 'field', subject: 'subscriptions', description: `1 to ${MAX_BATCH} items of {key}` },
        ]);
      }
      const keys = entries.map((entry: unknown, index) => {
        const key = (entry as { key?: unknown } | null)?.key;
        const subject = `subscriptions[${index}].key`;
        if (typeof key !== 'string' || !KEY_PATTERN.test(key)) {
          throw badRequest(`'${String(key)}' is not a subscription key`, [
            { source: 'field', subject, description: 'a key is 8 to 32 upper-case letters and digits' },
          ]);
        }
        if (entries.slice(0, index).some((other: unknown) => (other as { key?: unknown }).key === key)) {
          throw badRequest(`Subscription key '${key}' is given twice`, [
            { source: 'field', subject, description: 'duplicate key in the request' },
          ]);
        }
        if (state.subscriptions.some((s) => s.key === key)) {
          throw badRequest(`Subscription key '${key}' is already in the workspace`, [
            { source: 'field', subject, description: 'key already added' },
          ]);
        }
        return key;
      });
      return acceptWrite(ctx.asyncOps, req, {
        flavour: 'subscriptions',
        type: 'subscriptions-add',
        durationMs: WRITE_DURATION_MS,
        complete: (injectedFailure) => {
          if (injectedFailure) return { status: 'FAILED', error: injectedFailure };
          const nowIso = ctx.clock.nowIso();
          for (const key of keys) {
            // Concurrent adds of one key: the first to complete wins.
            if (state.subscriptions.some((s) => s.key === key)) continue;
            const rng = ctx.rng.fork(`subscription-key:${key}`);
            const added = subscriptionFrom(rng, key, {
              id: rng.uuid(),
              type: 'subscription',
              generation: 1,
              createdAt: nowIso,
              updatedAt: nowIso,
            });
            state.subscriptions.push(added);
            state.byId.set(added.id, added);
          }
          return { status: 'SUCCEEDED', result: { addedKeys: keys }, resultType: 'SUBSCRIPTIONS_ADD' };
        },
      });
    },

    'subscriptions.updateSubscriptions': (req: SimRequest) => {
      const ids = batchIds(req);
      const targets = ids.map(find);
      const tags = bodyOf(req).tags;
      if (tags === null || typeof tags !== 'object' || Array.isArray(tags)) {
        throw badRequest('The body must carry tags: {name: value | null}', [
          { source: 'field', subject: 'tags', description: 'expected an object' },
        ]);
      }
      const patch = tags as Record<string, string | null>;
      for (const subscription of targets) checkTags(subscription.tags, patch, 'tags');
      return acceptWrite(ctx.asyncOps, req, {
        flavour: 'subscriptions',
        type: 'subscriptions-update',
        durationMs: WRITE_DURATION_MS,
        complete: (injectedFailure) => {
          if (injectedFailure) return { status: 'FAILED', error: injectedFailure };
          const nowIso = ctx.clock.nowIso();
          for (const subscription of targets) {
            subscription.tags = checkTags(subscription.tags, patch, 'tags');
            touch(subscription, nowIso);
          }
          return { status: 'SUCCEEDED', result: { updatedSubscriptions: ids }, resultType: 'SUBSCRIPTIONS_UPDATE' };
        },
      });
    },

    'subscriptions.listAutoSubscriptionSettings': (req: SimRequest) => {
      const page = settingsQuery.page(state.autoSettings, req);
      return {
        status: 200,
        body: { ...page, items: page.items.map((settings) => ({ ...settings, tenantWorkspaceId: workspaceId() })) },
      };
    },

    'subscriptions.getAutoSubscriptionSettings': (req: SimRequest) => ({
      status: 200,
      body: findSettings(req.params.id ?? ''),
    }),

    'subscriptions.updateAutoSubscriptionSettings': (req: SimRequest) => {
      const settings = findSettings(req.params.id ?? '');
      // The description (published enums, required pair fields) has checked the body.
      const pairs = bodyOf(req).autoSubscriptionSettings as Array<{ deviceType: string; tier: string | null }>;
      if (pairs.length === 0) {
        throw badRequest('autoSubscriptionSettings must list {deviceType, tier} pairs', [
          { source: 'field', subject: 'autoSubscriptionSettings', description: 'a non-empty array' },
        ]);
      }
      const next = settings.autoSubscriptionSettings.map((pair) => ({ ...pair }));
      pairs.forEach(({ deviceType, tier }) => {
        const at = next.findIndex((existing) => existing.deviceType === deviceType);
        if (tier === null) {
          if (at >= 0) next.splice(at, 1);
        } else if (at >= 0) {
          next[at] = { deviceType, tier };
        } else {
          next.push({ deviceType, tier });
        }
      });
      settings.autoSubscriptionSettings = next;
      touch(settings, ctx.clock.nowIso());
      return { status: 200, body: settings };
    },
  };
}

// The settings list supports no filtering (reference).
const settingsQuery = createListQuery({});

export const subscriptionsArea: AreaModule<SubscriptionsState> = {
  key: 'subscriptions',
  configSchema,
  createState,
  handlers,
  summary: (state) => ({
    subscriptions: state.subscriptions.length,
    autoSubscriptionSettings: state.autoSettings.length,
  }),
};
