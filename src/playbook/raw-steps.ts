/** The steps of a playbook document as written, found by the registry's `nested` declarations. */
import type { StepRegistry } from '../steps/index.js';

export type RawObject = Record<string, unknown>;

export interface RawStep {
  pointer: string;
  data: RawObject;
  /** The kind keys the step carries (exactly one when well formed). */
  kinds: string[];
}

/** Step-list fields every step may have, whatever its kind. */
export const COMMON_STEP_LISTS = ['rescue', 'always'] as const;

export function isRawObject(value: unknown): value is RawObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Nested step lists of a step as `[pointer, items]`, in the order they are written. */
export function nestedStepLists(
  step: RawStep,
  registry: StepRegistry,
): Array<{ field: string; pointer: string; items: unknown[] }> {
  const lists: Array<{ field: string; pointer: string; items: unknown[] }> = [];
  const [kind] = step.kinds;
  const nested = kind !== undefined && step.kinds.length === 1 ? (registry.get(kind).nested ?? {}) : {};
  for (const [field, shape] of Object.entries(nested)) {
    const value = step.data[field];
    if (!Array.isArray(value)) continue;
    if (shape === 'steps') lists.push({ field, pointer: `${step.pointer}/${field}`, items: value });
    else {
      value.forEach((branch: unknown, index) => {
        if (isRawObject(branch) && Array.isArray(branch.steps)) {
          lists.push({ field, pointer: `${step.pointer}/${field}/${index}/steps`, items: branch.steps });
        }
      });
    }
  }
  for (const field of COMMON_STEP_LISTS) {
    const value = step.data[field];
    if (Array.isArray(value)) lists.push({ field, pointer: `${step.pointer}/${field}`, items: value });
  }
  return lists;
}

export function rawStepsOf(items: unknown[], pointer: string, registry: StepRegistry): RawStep[] {
  return items.flatMap((item, index): RawStep[] =>
    isRawObject(item)
      ? [{ pointer: `${pointer}/${index}`, data: item, kinds: Object.keys(item).filter((key) => registry.has(key)) }]
      : [],
  );
}

/** Every step of the document, depth first, in the order written. */
export function allRawSteps(data: unknown, registry: StepRegistry): RawStep[] {
  const found: RawStep[] = [];
  const visit = (items: unknown[], pointer: string): void => {
    for (const step of rawStepsOf(items, pointer, registry)) {
      found.push(step);
      for (const list of nestedStepLists(step, registry)) visit(list.items, list.pointer);
    }
  };
  if (isRawObject(data) && Array.isArray(data.steps)) visit(data.steps, '/steps');
  return found;
}
