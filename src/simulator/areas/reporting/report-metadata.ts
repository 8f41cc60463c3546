/**
 * The report types of the reporting area: their metadata entries (as listed) and how each
 * column and filter reads the world when a report is generated.
 */
import type { SimContext } from '../../context.js';
import type { Device, DevicesState } from '../devices/devices-area.js';
import type { Subscription, SubscriptionsState } from '../subscriptions/subscriptions-area.js';
import type { User, UsersState } from '../users/users-area.js';

export interface MetadataEntry {
  /** A fixed uuid per report type, as the published record has. */
  id: string;
  kind: 'REPORT.EXPORTS.METADATA';
  /** The report type an export names in its `type`. */
  type: string;
  name: string;
  columns: Array<{ displayName: string; name: string; dataType: 'string' | 'integer' }>;
  filterCriteria: Array<{ name: string; dataType: 'string' | 'boolean'; supportedOperators: string[] }>;
}

type Row = Record<string, string | number>;

/** A report type: its metadata, the rows of the world it reports on, and its filters. */
export interface ReportType {
  metadata: MetadataEntry;
  rows(ctx: SimContext): Row[];
  /** Keeps a row when the filter criterion (other than sort_by/direction) holds. */
  filters: Record<string, (row: Row, value: string) => boolean>;
}

const column = (name: string, dataType: 'string' | 'integer' = 'string') => ({
  name,
  dataType,
  displayName: name.charAt(0) + name.slice(1).toLowerCase().replace(/_/g, ' '),
});
const SORT_AND_DIRECTION = [
  { name: 'sort_by', dataType: 'string' as const, supportedOperators: ['EQ'] },
  { name: 'direction', dataType: 'string' as const, supportedOperators: ['EQ'] },
];

function subscriptionRow(s: Subscription): Row {
  return {
    SUBSCRIPTION_KEY: s.key,
    SUBSCRIPTION_TYPE: s.subscriptionType,
    SUBSCRIPTION_TIER_DESCRIPTION: s.tierDescription,
    AVAILABLE_QUANTITY: s.availableQuantity,
    QUANTITY: s.quantity,
    SUBSCRIPTION_STATUS: s.subscriptionStatus,
    END_DATE: s.endTime.slice(0, 10),
  };
}

function deviceRow(d: Device): Row {
  return {
    SERIAL_NUMBER: d.serialNumber,
    DEVICE_MODEL: d.model,
    MAC_ADDRESS: d.macAddress ?? '',
    PART_NUMBER: d.partNumber ?? '',
    DEVICE_TYPE: d.deviceType,
    ASSIGNED_STATE: d.assignedState,
    REGION: d.region ?? '',
  };
}

function userRow(u: User): Row {
  return { USERNAME: u.username, USER_STATUS: u.userStatus, LAST_LOGIN: u.lastLogin ?? '' };
}

export const REPORT_TYPES: readonly ReportType[] = [
  {
    metadata: {
      id: '5b0f8a52-3c1d-4e6f-9a7b-1c2d3e4f5a60',
      kind: 'REPORT.EXPORTS.METADATA',
      type: 'SUBSCRIPTION',
      name: 'Subscriptions',
      columns: [
        column('SUBSCRIPTION_KEY'),
        column('SUBSCRIPTION_TYPE'),
        column('SUBSCRIPTION_TIER_DESCRIPTION'),
        column('AVAILABLE_QUANTITY', 'integer'),
        column('QUANTITY', 'integer'),
        column('SUBSCRIPTION_STATUS'),
        column('END_DATE'),
      ],
      filterCriteria: [
        { name: 'product_type', dataType: 'string', supportedOperators: ['EQ'] },
        { name: 'archive_visibility', dataType: 'boolean', supportedOperators: ['EQ'] },
        ...SORT_AND_DIRECTION,
      ],
    },
    rows: (ctx) => ctx.stateOf<SubscriptionsState>('subscriptions').subscriptions.map(subscriptionRow),
    filters: {
      product_type: (row, value) => row.SUBSCRIPTION_TYPE === value,
      // Archived subscriptions are the ended ones; visible unless asked to hide them.
      archive_visibility: (row, value) => value === 'true' || row.SUBSCRIPTION_STATUS !== 'ENDED',
    },
  },
  {
    metadata: {
      id: '6c1a9b63-4d2e-4f70-8b8c-2d3e4f5a6b71',
      kind: 'REPORT.EXPORTS.METADATA',
      type: 'UID_DEVICE_INVENTORY',
      name: 'Device inventory',
      columns: [
        column('SERIAL_NUMBER'),
        column('DEVICE_MODEL'),
        column('MAC_ADDRESS'),
        column('PART_NUMBER'),
        column('DEVICE_TYPE'),
        column('ASSIGNED_STATE'),
        column('REGION'),
      ],
      filterCriteria: [
        { name: 'product_type', dataType: 'string', supportedOperators: ['EQ'] },
        { name: 'unassigned_only', dataType: 'boolean', supportedOperators: ['EQ'] },
        ...SORT_AND_DIRECTION,
      ],
    },
    rows: (ctx) => ctx.stateOf<DevicesState>('devices').devices.map(deviceRow),
    filters: {
      product_type: (row, value) => row.DEVICE_TYPE === value,
      unassigned_only: (row, value) => value !== 'true' || row.ASSIGNED_STATE === 'UNASSIGNED',
    },
  },
  {
    metadata: {
      id: '7d2bac74-5e3f-4081-9c9d-3e4f5a6b7c82',
      kind: 'REPORT.EXPORTS.METADATA',
      type: 'USER_INVENTORY',
      name: 'User inventory',
      columns: [column('USERNAME'), column('USER_STATUS'), column('LAST_LOGIN')],
      filterCriteria: [{ name: 'user_status', dataType: 'string', supportedOperators: ['EQ'] }, ...SORT_AND_DIRECTION],
    },
    rows: (ctx) => ctx.stateOf<UsersState>('users').users.map(userRow),
    filters: { user_status: (row, value) => row.USER_STATUS === value },
  },
];
