import type { OperationDescriptor } from '../openapi/index.js';
import { SimHttpError } from './errors.js';

/** Header naming the region when the path has no `/regions/<region>` prefix. */
export const REGION_HEADER = 'x-fleetbook-region';

/**
 * The region a regional request names: the path's `/regions/<region>` prefix, else the
 * region header, else `''` (region-agnostic). A region the operation does not serve is a 404.
 */
export function regionOf(
  op: OperationDescriptor,
  headers: Record<string, string | string[] | undefined>,
  fromPath: string | undefined,
): string {
  const header = headers[REGION_HEADER];
  const region = fromPath ?? (typeof header === 'string' ? header : undefined);
  if (region === undefined || region === '') return '';
  const valid = op.regions ?? [];
  if (!valid.includes(region)) {
    throw new SimHttpError(
      404,
      'UNKNOWN_REGION',
      `Region '${region}' is not served by ${op.area}; valid regions: ${valid.join(', ')}`,
    );
  }
  return region;
}
