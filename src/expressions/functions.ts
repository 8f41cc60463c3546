import type jsonata from 'jsonata';
import { defineFunctions } from './allocation-limits.js';
import { parseDuration } from './duration.js';

/**
 * Functions Fleetbook adds to JSONata's library. None of them reaches the process, the file
 * system or the network: expressions stay pure functions of their context.
 */
export const extraFunctions = [
  {
    name: 'duration',
    signature: '<(sn):n>',
    description: "Milliseconds of a duration: `$duration('1h30m')` is 5400000.",
    implementation(value: unknown): number {
      // Not bounded by what a timer can wait: `$millis() - $duration('90d')` is date arithmetic.
      // A `sleep` of the result is still refused when it is too long.
      const ms = parseDuration(value, { maxMs: Number.MAX_SAFE_INTEGER });
      if (ms === undefined)
        throw new Error(`$duration: '${String(value)}' is not a duration such as 500ms, 30s, 5m, 2h or 1h30m`);
      return ms;
    },
  },
  {
    name: 'chunk',
    signature: '<an:a>',
    description: 'The array cut into arrays of at most `size` items: `$chunk([1,2,3,4,5], 2)` is `[[1,2],[3,4],[5]]`.',
    implementation(items: unknown[] | undefined, size: number): unknown[][] {
      if (!Number.isInteger(size) || size < 1)
        throw new Error(`$chunk: the size must be a whole number from 1, got ${String(size)}`);
      const list = items ?? [];
      const chunks: unknown[][] = [];
      for (let start = 0; start < list.length; start += size) chunks.push(list.slice(start, start + size));
      return chunks;
    },
  },
] as const;

const defined = await defineFunctions(extraFunctions as unknown as Parameters<typeof defineFunctions>[0]);

/** Registers `extraFunctions` on a compiled expression. */
export function registerExtraFunctions(expression: jsonata.Expression): void {
  for (const [name, fn] of defined) expression.assign(name, fn);
}
