/**
 * Device management: devices added in batches of five (async), listed with filter and sort,
 * and updated (application assignment, subscriptions) in batches of five (async). Device
 * updates consume and release subscription quantity in the subscriptions area's state.
 */
import type { AreaModule, AsyncOutcome, Rng, SimContext, SimRequest } from '../../context.js';
import { badRequest, notFound, type SimHttpError } from '../../errors.js';
import { createListQuery } from '../../filter/index.js';
import { acceptWrite, batchIds, checkTags, MAX_BATCH } from '../subscriptions/batch-writes.js';
import type { Subscription, SubscriptionsState } from '../subscriptions/subscriptions-area.js';
import type { WorkspacesState } from '../workspaces/workspaces-area.js';
import { generatedRecord, touch, type RecordFields } from '../workspaces/world-time.js';
import {
  DEVICE_TYPES,
  deviceDetails,
  drawDeviceFacts,
  type DeviceCategory,
  type DeviceFacts,
} from './device-details.js';

export type AssignedState = 'ASSIGNED_TO_SERVICE' | 'UNASSIGNED';

export interface Device extends RecordFields {
  resourceUri: string;
  serialNumber: string;
  macAddress?: string;
  partNumber: string;
  /** What the device was added as (`network`, `compute`, `storage`): the published `category`. */
  category: DeviceCategory;
  /** One of the published device types of its category. */
  deviceType: string;
  model: string;
  /** Absent when unassigned (the published `region` is a string). */
  region?: string;
  /** Absent when unassigned. */
  application?: { id: string; resourceUri: string };
  assignedState: AssignedState;
  /** Ids of the applied subscriptions; rendered with their key, tier and term. */
  subscription: Array<{ id: string }>;
  tags: Record<string, string>;
  /** What its inventory facts are built from when read (`deviceDetails`). */
  facts: DeviceFacts;
}

/** An application devices can be assigned to, with the regions it runs in. */
export interface Application {
  id: string;
  name: string;
  regions: string[];
}

export interface DevicesState {
  devices: Device[];
  byId: Map<string, Device>;
  bySerial: Map<string, Device>;
  applications: Application[];
  /** Serial numbers whose addition always fails (world file `failSerialNumbers`). */
  failSerialNumbers: ReadonlySet<string>;
}

/** World-file settings of the devices area. */
export interface DevicesConfig {
  /** @default 40 */
  devices?: number;
  /** Applications devices can be assigned to (ids a playbook can name). @default three generated ones */
  applications?: Application[];
  /** Serial numbers whose addition fails (listed in the operation's `failedDevicesSerial`). @default [] */
  failSerialNumbers?: string[];
}

/** JSON Schema of the world-file section `devices`. */
const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    devices: { type: 'integer', minimum: 0, maximum: 1_000_000 },
    applications: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'name', 'regions'],
        properties: {
          id: { type: 'string', minLength: 1 },
          name: { type: 'string', minLength: 1 },
          regions: {
            type: 'array',
            minItems: 1,
            uniqueItems: true,
            items: { enum: ['us-west', 'eu-west', 'eu-central', 'ap-northeast'] },
          },
        },
      },
    },
    failSerialNumbers: { type: 'array', items: { type: 'string', minLength: 1 } },
  },
} as const;

const ADD_DURATION_MS = 12_000;
const UPDATE_DURATION_MS = 6_000;
const REGIONS = ['us-west', 'eu-west', 'eu-central', 'ap-northeast'];
const MODELS: Record<DeviceCategory, readonly string[]> = {
  COMPUTE: ['CS-2200 G11', 'CS-3400 G11', 'CS-1100 G10'],
  STORAGE: ['SA-6000', 'SA-5200'],
  NETWORK: ['NS-2930F', 'NS-6300M'],
};
const GROUPS = { network: 'NETWORK', compute: 'COMPUTE', storage: 'STORAGE' } as const;

const schema = {
  id: 'string',
  serialNumber: 'string',
  macAddress: 'string',
  partNumber: 'string',
  category: 'string',
  deviceType: 'string',
  model: 'string',
  region: 'string',
  assignedState: 'string',
  'application/id': 'string',
  type: 'string',
  createdAt: 'timestamp',
  updatedAt: 'timestamp',
} as const;

const listQuery = createListQuery({ filter: schema, sort: schema });

function hex(rng: Rng, bytes: number): string[] {
  return Array.from({ length: bytes }, () => rng.int(0, 255).toString(16).padStart(2, '0'));
}

function newDevice(
  rng: Rng,
  record: RecordFields,
  fields: Pick<Device, 'serialNumber' | 'category' | 'partNumber'> & Partial<Device>,
): Device {
  return {
    ...record,
    resourceUri: `/devices/v1/devices/${record.id}`,
    deviceType: rng.pick(DEVICE_TYPES[fields.category]),
    model: rng.pick(MODELS[fields.category]),
    assignedState: 'UNASSIGNED',
    subscription: [],
    tags: {},
    facts: drawDeviceFacts(rng),
    ...fields,
  };
}

const applicationRef = (id: string) => ({ id, resourceUri: `/service-catalog/v1/applications/${id}` });

/** The published device record: subscriptions with their key, tier and term, the inventory facts flat. */
export function deviceView(
  device: Device,
  subscriptions: SubscriptionsState,
  workspaceId: string,
): Record<string, unknown> {
  const { facts, category, subscription, ...own } = device;
  return {
    ...own,
    ...deviceDetails(facts, category, own.serialNumber, own.createdAt),
    category,
    tenantWorkspaceId: workspaceId,
    subscription: subscription.map(({ id }) => {
      const found = subscriptions.byId.get(id);
      const ref = { id, resourceUri: `/subscriptions/v1/subscriptions/${id}` };
      return found
        ? { ...ref, key: found.key, tier: found.tier, startTime: found.startTime, endTime: found.endTime }
        : ref;
    }),
  };
}

function createState(ctx: SimContext): DevicesState {
  const config = ctx.config as DevicesConfig;
  const rng = ctx.rng.fork('devices');
  const subscriptions = ctx.stateOf<SubscriptionsState>('subscriptions');
  const applications: Application[] =
    config.applications?.map((a) => ({ ...a, regions: [...a.regions] })) ??
    ['Fleet Insights', 'Compute Ops', 'Storage Central'].map((name) => {
      const regions = REGIONS.filter(() => rng.next() < 0.7);
      return { id: rng.uuid(), name, regions: regions.length > 0 ? regions : [rng.pick(REGIONS)] };
    });
  const devices: Device[] = [];
  for (let i = 0; i < (config.devices ?? 40); i += 1) {
    const category = rng.pick(['COMPUTE', 'COMPUTE', 'STORAGE', 'NETWORK'] as const);
    const serialNumber = `${category.charAt(0)}Z${String(100_000 + i * 37 + rng.int(0, 36)).padStart(8, '0')}`;
    const device = newDevice(rng.fork(`device-serial:${serialNumber}`), generatedRecord(rng, 'devices/device', 600), {
      serialNumber,
      category,
      partNumber: `${category === 'NETWORK' ? 'JL' : category === 'STORAGE' ? 'R' : 'P'}${rng.int(10_000, 99_999)}-B21`,
      ...(category === 'NETWORK' ? { macAddress: hex(rng, 6).join(':') } : {}),
    });
    if (rng.next() < 0.6) {
      const application = rng.pick(applications);
      device.application = applicationRef(application.id);
      device.region = rng.pick(application.regions);
      device.assignedState = 'ASSIGNED_TO_SERVICE';
      const usable = subscriptions.subscriptions.filter(
        (s) => s.subscriptionStatus === 'STARTED' && s.availableQuantity > 0,
      );
      if (usable.length > 0 && rng.next() < 0.7) {
        const subscription = rng.pick(usable);
        subscription.availableQuantity -= 1;
        device.subscription = [{ id: subscription.id }];
      }
    }
    devices.push(device);
  }
  return {
    devices,
    byId: new Map(devices.map((d) => [d.id, d])),
    bySerial: new Map(devices.map((d) => [d.serialNumber, d])),
    applications,
    failSerialNumbers: new Set(config.failSerialNumbers ?? []),
  };
}

interface AddEntry {
  group: keyof typeof GROUPS;
  serialNumber: string;
  macAddress?: string;
  /** Absent for network devices: the platform knows their part number from the serial. */
  partNumber?: string;
  tags: Record<string, string>;
}

function fieldError(subject: string, message: string, description: string): SimHttpError {
  return badRequest(message, [{ source: 'field', subject, description }]);
}

function objectBody(req: SimRequest): Record<string, unknown> {
  if (req.body === null || typeof req.body !== 'object' || Array.isArray(req.body)) {
    throw fieldError('body', 'The request body must be a JSON object', 'expected an object');
  }
  return req.body as Record<string, unknown>;
}

/** The add body: the three arrays (all required, empty allowed), at most 5 devices in all. */
function parseAddBody(req: SimRequest, state: DevicesState): AddEntry[] {
  const body = objectBody(req);
  const entries: AddEntry[] = [];
  for (const group of Object.keys(GROUPS) as Array<keyof typeof GROUPS>) {
    const items = body[group];
    if (!Array.isArray(items)) throw fieldError(group, `'${group}' must be an array (empty allowed)`, 'required array');
    items.forEach((item: unknown, index) => {
      const subject = `${group}[${index}]`;
      const fields = (item ?? {}) as Record<string, unknown>;
      const serialNumber = fields.serialNumber;
      if (typeof serialNumber !== 'string' || serialNumber.length === 0) {
        throw fieldError(`${subject}.serialNumber`, `${subject} needs a serialNumber`, 'required non-empty string');
      }
      // The published body: a network device names its MAC address, the others their part number.
      const required = group === 'network' ? ['macAddress'] : ['partNumber'];
      for (const name of required) {
        const value = fields[name];
        if (typeof value !== 'string' || value.length === 0)
          throw fieldError(`${subject}.${name}`, `${subject} needs ${name}`, 'required non-empty string');
      }
      const tags = checkTags({}, (fields.tags ?? {}) as Record<string, string>, `${subject}.tags`);
      const macAddress = fields.macAddress as string | undefined;
      const partNumber = fields.partNumber as string | undefined;
      entries.push({
        group,
        serialNumber,
        ...(partNumber === undefined ? {} : { partNumber }),
        ...(macAddress === undefined ? {} : { macAddress }),
        tags,
      });
    });
  }
  if (entries.length === 0 || entries.length > MAX_BATCH) {
    throw fieldError(
      'body',
      `Add 1 to ${MAX_BATCH} devices per request in all, got ${entries.length}`,
      `1 to ${MAX_BATCH} devices across network, compute and storage`,
    );
  }
  const seen = new Set<string>();
  for (const entry of entries) {
    if (seen.has(entry.serialNumber)) {
      throw fieldError(
        'serialNumber',
        `Serial number '${entry.serialNumber}' appears twice in the request`,
        `duplicate serial number ${entry.serialNumber}`,
      );
    }
    seen.add(entry.serialNumber);
    if (state.bySerial.has(entry.serialNumber)) {
      throw fieldError(
        'serialNumber',
        `Serial number '${entry.serialNumber}' is already in the workspace`,
        `existing serial number ${entry.serialNumber}`,
      );
    }
  }
  return entries;
}

type UpdateChange =
  | { kind: 'assign'; applicationId: string; region: string }
  | { kind: 'unassign' }
  | { kind: 'subscribe'; subscriptionId: string }
  | { kind: 'unsubscribe' };

function parseUpdateBody(req: SimRequest, state: DevicesState): UpdateChange {
  const body = objectBody(req);
  const touchesApplication = 'application' in body || 'region' in body;
  const touchesSubscription = 'subscription' in body;
  if (touchesApplication === touchesSubscription) {
    throw fieldError(
      'body',
      touchesApplication
        ? 'One kind of change per call: application or subscription, not both'
        : 'Nothing to change: give application and region, or subscription',
      'exactly one of application (with region) or subscription',
    );
  }
  if (touchesSubscription) {
    const list = body.subscription;
    if (!Array.isArray(list) || list.length > 1)
      throw fieldError(
        'subscription',
        'subscription must be [] (remove) or [{id}] (apply)',
        'an array of at most one {id}',
      );
    if (list.length === 0) return { kind: 'unsubscribe' };
    const id = (list[0] as { id?: unknown } | null)?.id;
    if (typeof id !== 'string')
      throw fieldError('subscription[0].id', 'subscription[0].id must be a string', 'subscription id');
    return { kind: 'subscribe', subscriptionId: id };
  }
  const application = body.application as { id?: unknown } | null | undefined;
  const applicationId = application?.id ?? null;
  const region = body.region ?? null;
  if (applicationId === null && region === null) return { kind: 'unassign' };
  if (typeof applicationId !== 'string')
    throw fieldError(
      'application.id',
      'application.id is required to assign (null with region null removes)',
      'application id',
    );
  if (typeof region !== 'string')
    throw fieldError('region', 'region is required to assign an application', 'a region of the application');
  const known = state.applications.find((a) => a.id === applicationId);
  if (!known)
    throw fieldError('application.id', `Application '${applicationId}' does not exist`, 'unknown application');
  if (!known.regions.includes(region)) {
    throw fieldError(
      'region',
      `Application '${known.name}' is not available in region '${region}' (available: ${known.regions.join(', ')})`,
      'region of the application',
    );
  }
  return { kind: 'assign', applicationId, region };
}

function releaseSubscriptions(device: Device, subscriptions: SubscriptionsState): void {
  for (const { id } of device.subscription) {
    const subscription = subscriptions.byId.get(id);
    if (subscription)
      subscription.availableQuantity = Math.min(subscription.quantity, subscription.availableQuantity + 1);
  }
  device.subscription = [];
}

/** Devices that still need a unit of `subscription` (those not already on it). */
function unitsNeeded(devices: readonly Device[], subscription: Subscription): number {
  return devices.filter((d) => !d.subscription.some((s) => s.id === subscription.id)).length;
}

function handlers(state: DevicesState, ctx: SimContext) {
  const subscriptions = (): SubscriptionsState => ctx.stateOf<SubscriptionsState>('subscriptions');
  const view = (device: Device) =>
    deviceView(device, subscriptions(), ctx.stateOf<WorkspacesState>('workspaces').workspace.id);
  const find = (id: string): Device => {
    const device = state.byId.get(id);
    if (!device) throw notFound('Device', id);
    return device;
  };

  const checkSubscription = (subscriptionId: string, devices: readonly Device[]): Subscription => {
    const subscription = subscriptions().byId.get(subscriptionId);
    if (!subscription)
      throw fieldError('subscription[0].id', `Subscription '${subscriptionId}' does not exist`, 'unknown subscription');
    if (subscription.subscriptionStatus !== 'STARTED') {
      throw fieldError(
        'subscription[0].id',
        `Subscription '${subscription.key}' is ${subscription.subscriptionStatus}, not STARTED`,
        'subscription not active',
      );
    }
    const needed = unitsNeeded(devices, subscription);
    if (subscription.availableQuantity < needed) {
      throw fieldError(
        'subscription[0].id',
        `Subscription '${subscription.key}' has ${subscription.availableQuantity} units left, ${needed} needed`,
        'not enough quantity left',
      );
    }
    return subscription;
  };

  const applyUpdate = (devices: readonly Device[], change: UpdateChange): AsyncOutcome => {
    const nowIso = ctx.clock.nowIso();
    if (change.kind === 'subscribe') {
      // Another update may have used the quantity since this one was accepted.
      let subscription: Subscription;
      try {
        subscription = checkSubscription(change.subscriptionId, devices);
      } catch (error) {
        return {
          status: 'FAILED',
          error: { errorCode: 'SUBSCRIPTION_UNAVAILABLE', message: (error as Error).message },
        };
      }
      for (const device of devices) {
        if (device.subscription.some((s) => s.id === subscription.id)) continue;
        releaseSubscriptions(device, subscriptions());
        subscription.availableQuantity -= 1;
        device.subscription = [{ id: subscription.id }];
        touch(device, nowIso);
      }
      touch(subscription, nowIso);
    } else {
      for (const device of devices) {
        if (change.kind === 'unsubscribe') releaseSubscriptions(device, subscriptions());
        if (change.kind === 'assign') {
          device.application = applicationRef(change.applicationId);
          device.region = change.region;
          device.assignedState = 'ASSIGNED_TO_SERVICE';
        }
        if (change.kind === 'unassign') {
          delete device.application;
          delete device.region;
          device.assignedState = 'UNASSIGNED';
        }
        touch(device, nowIso);
      }
    }
    return { status: 'SUCCEEDED', result: { updatedDevices: devices.map((d) => d.id) }, resultType: 'DEVICES_UPDATE' };
  };

  return {
    'devices.listDevices': (req: SimRequest) => {
      const page = listQuery.page(state.devices, req);
      return { status: 200, body: { ...page, items: page.items.map(view) } };
    },

    'devices.getDevice': (req: SimRequest) => ({ status: 200, body: view(find(req.params.id ?? '')) }),

    'devices.addDevices': (req: SimRequest) => {
      const entries = parseAddBody(req, state);
      return acceptWrite(ctx.asyncOps, req, {
        flavour: 'devices',
        type: 'devices-add',
        durationMs: ADD_DURATION_MS,
        complete: (injectedFailure) => {
          if (injectedFailure) {
            return {
              status: 'FAILED',
              error: injectedFailure,
              result: { failedDevicesSerial: entries.map((e) => e.serialNumber) },
              resultType: 'DEVICES_ADD',
            };
          }
          const nowIso = ctx.clock.nowIso();
          const failed: string[] = [];
          for (const entry of entries) {
            if (state.failSerialNumbers.has(entry.serialNumber) || state.bySerial.has(entry.serialNumber)) {
              failed.push(entry.serialNumber);
              continue;
            }
            const rng = ctx.rng.fork(`device-serial:${entry.serialNumber}`);
            const device = newDevice(
              rng,
              { id: rng.uuid(), type: 'devices/device', generation: 1, createdAt: nowIso, updatedAt: nowIso },
              {
                serialNumber: entry.serialNumber,
                category: GROUPS[entry.group],
                partNumber: entry.partNumber ?? `JL${rng.int(100, 999)}A`,
                ...(entry.macAddress === undefined ? {} : { macAddress: entry.macAddress }),
                tags: entry.tags,
              },
            );
            state.devices.push(device);
            state.byId.set(device.id, device);
            state.bySerial.set(device.serialNumber, device);
          }
          if (failed.length === 0)
            return { status: 'SUCCEEDED', result: { failedDevicesSerial: [] }, resultType: 'DEVICES_ADD' };
          return {
            status: 'FAILED',
            result: { failedDevicesSerial: failed },
            resultType: 'DEVICES_ADD',
            error: {
              errorCode: 'DEVICES_NOT_ADDED',
              message: `${failed.length} of ${entries.length} devices could not be added: ${failed.join(', ')}`,
            },
          };
        },
      });
    },

    'devices.updateDevices': (req: SimRequest) => {
      const contentType = req.headers['content-type'];
      if (contentType !== undefined && !contentType.startsWith('application/merge-patch+json')) {
        throw badRequest(`Device updates take application/merge-patch+json, got ${contentType}`, [
          { source: 'header', subject: 'Content-Type', description: 'application/merge-patch+json' },
        ]);
      }
      const devices = batchIds(req).map(find);
      const change = parseUpdateBody(req, state);
      if (change.kind === 'subscribe') checkSubscription(change.subscriptionId, devices);
      return acceptWrite(ctx.asyncOps, req, {
        flavour: 'devices',
        type: 'devices-update',
        durationMs: UPDATE_DURATION_MS,
        complete: (injectedFailure) =>
          injectedFailure ? { status: 'FAILED', error: injectedFailure } : applyUpdate(devices, change),
      });
    },
  };
}

export const devicesArea: AreaModule<DevicesState> = {
  key: 'devices',
  configSchema,
  createState,
  handlers,
  summary: (state) => ({ devices: state.devices.length, applications: state.applications.length }),
};
