/**
 * Taint tracking: a value an expression computes from a secret is itself secret. The engine
 * attaches a tracker to the contexts it evaluates templates with; an expression that reads a
 * secret (a `secret: true` input, or a step whose outputs were computed from one) hands its
 * result to the tracker, which registers every string in it for redaction. So
 * `${{ $base64encode(inputs.token) }}` or `${{ $substring(inputs.token, 2) }}` is scrubbed from
 * logs, the store and the CLI's output like the token itself.
 */
import type { ReferenceSite } from '../model/index.js';

export interface TaintTracker {
  /** Whether an expression with these reads computes from a secret. */
  readsSecret(references: ReadonlyArray<Pick<ReferenceSite, 'root' | 'member'>>): boolean;
  /** A value computed from a secret in the step `stepId` (when in a step): register it. */
  taint(value: unknown, stepId: string | undefined): void;
}

const trackers = new WeakMap<object, TaintTracker>();

/** `context`, whose evaluations report secret-derived values to `tracker`. */
export function trackTaint<T extends object>(context: T, tracker: TaintTracker | undefined): T {
  if (tracker !== undefined) trackers.set(context, tracker);
  return context;
}

export function taintTrackerOf(context: object): TaintTracker | undefined {
  return trackers.get(context);
}
