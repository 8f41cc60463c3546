/** Keys that would reach an object's prototype if the value were merged into another object. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** A value that cannot leave the expression layer: a function, or a prototype-polluting key. */
export class UnsafeValueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsafeValueError';
  }
}

function isJsonataFunction(value: object): boolean {
  return '_jsonata_lambda' in value || '_jsonata_function' in value;
}

function normaliseAt(value: unknown, path: string): unknown {
  switch (typeof value) {
    case 'undefined':
    case 'boolean':
    case 'string':
      return value;
    case 'number':
      if (!Number.isFinite(value))
        throw new UnsafeValueError(`${path || 'the result'} is ${value}, which JSON cannot hold`);
      return value;
    case 'function':
      throw new UnsafeValueError(`${path || 'the result'} is a function; call it to get a value`);
    case 'bigint':
    case 'symbol':
      throw new UnsafeValueError(`${path || 'the result'} is a ${typeof value}, which JSON cannot hold`);
    default:
      break;
  }
  if (value === null) return null;
  if (Array.isArray(value)) {
    // A fresh array drops JSONata's `sequence`/`keepSingleton` flags; a hole (undefined) becomes null
    // so positions are kept.
    return value.map((item: unknown, index) => normaliseAt(item, `${path}[${index}]`) ?? null);
  }
  if (isJsonataFunction(value as object))
    throw new UnsafeValueError(`${path || 'the result'} is a function; call it to get a value`);
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    if (FORBIDDEN_KEYS.has(key))
      throw new UnsafeValueError(`${path || 'the result'} has the key '${key}', which is refused`);
    const normalised = normaliseAt(item, path === '' ? key : `${path}.${key}`);
    if (normalised !== undefined) result[key] = normalised;
  }
  return result;
}

/**
 * A value as plain JSON: arrays without JSONata's extra properties, objects with the
 * ordinary prototype, `undefined` dropped from objects and turned to `null` inside arrays
 * (top level `undefined` stays: "no value"). Throws `UnsafeValueError` for functions,
 * non-finite numbers and the keys `__proto__`, `constructor`, `prototype`.
 */
export function normaliseValue(value: unknown): unknown {
  return normaliseAt(value, '');
}
