import type jsonata from 'jsonata';
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
      const ms = parseDuration(value);
      if (ms === undefined) throw new Error(`$duration: '${String(value)}' is not a duration such as 500ms, 30s, 5m, 2h or 1h30m`);
      return ms;
    },
  },
] as const;

/** Registers `extraFunctions` on a compiled expression. */
export function registerExtraFunctions(expression: jsonata.Expression): void {
  for (const fn of extraFunctions) expression.registerFunction(fn.name, fn.implementation, fn.signature);
}
