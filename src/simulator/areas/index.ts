import type { AreaModule } from '../context.js';
import { privateCloudArea } from './private-cloud/private-cloud-area.js';

/**
 * Every area the server mounts, in world-building order (an area whose `createState`
 * reads another's state comes after it). Append new areas here.
 */
export const areaModules: readonly AreaModule[] = [privateCloudArea as AreaModule];
