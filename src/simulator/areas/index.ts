import type { AreaModule } from '../context.js';
import { consumptionAnalyticsArea } from './consumption-analytics/consumption-analytics-area.js';
import { devicesArea } from './devices/devices-area.js';
import { privateCloudArea } from './private-cloud/private-cloud-area.js';
import { reportingArea } from './reporting/reporting-area.js';
import { subscriptionsArea } from './subscriptions/subscriptions-area.js';
import { usersArea } from './users/users-area.js';
import { workspacesArea } from './workspaces/workspaces-area.js';

/**
 * Every area the server mounts, in world-building order (an area whose `createState`
 * reads another's state comes after it). Append new areas here.
 */
export const areaModules: readonly AreaModule[] = [
  privateCloudArea as AreaModule,
  workspacesArea as AreaModule,
  usersArea as AreaModule,
  subscriptionsArea as AreaModule,
  // Devices consume subscription quantity when the world is built.
  devicesArea as AreaModule,
  consumptionAnalyticsArea as AreaModule,
  // Reports read subscriptions, devices and users when they are generated.
  reportingArea as AreaModule,
];
