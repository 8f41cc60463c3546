/**
 * `forEach`: its steps once per item, `concurrency` at a time, in rolling batches, no new item
 * starting once failures exceed the tolerance (in-flight items finish). See the engine's
 * ARCHITECTURE.md, "forEach".
 */
import type { ForEachStep } from '../definitions/for-each.js';
// Statuses as the journal names them (the type only: steps never load the store).
import type { StepStatus } from '../../store/index.js';
import type { ContainerContext, StepOutcome } from '../definitions/step-definition.js';
import { StepErrorCode } from '../error-codes.js';
import { StepError, StepFailureKind } from '../executors/step-error.js';
import { batchSizes, concurrencyOf, toleratedFailures } from './loop-plan.js';

interface ItemResult {
  index: number;
  item: unknown;
  status: StepStatus;
  steps: Record<string, unknown>;
}

interface LoopPlan {
  items: unknown[];
  concurrency: number;
  allowed: number;
  sizes: number[];
}

async function planOf({ step, context }: ContainerContext<ForEachStep>): Promise<LoopPlan> {
  const expressions = context();
  const items = await step.items.evaluate(expressions);
  if (!Array.isArray(items)) {
    throw new StepError(
      `forEach '${step.id}': \`forEach\` must give an array, got ${items === null ? 'null' : typeof items}. (A one-item JSONata result needs \`[]\` at the end of the path.)`,
      {
        kind: StepFailureKind.invalidInput,
        code: 'FOREACH_NOT_ARRAY',
      },
    );
  }
  const concurrency = concurrencyOf(await step.concurrency.evaluate(expressions));
  const allowed = toleratedFailures(
    step.tolerate ? await step.tolerate.failures.evaluate(expressions) : undefined,
    items.length,
  );
  return { items, concurrency, allowed, sizes: batchSizes(step.batches, items.length) };
}

export async function runForEach(context: ContainerContext<ForEachStep>): Promise<StepOutcome> {
  const { step, path, signal } = context;
  const plan = await planOf(context);
  const { items, concurrency, allowed, sizes } = plan;
  const total = items.length;
  await context.start({ items: total, concurrency, batches: sizes, toleratedFailures: allowed });

  const results: ItemResult[] = items.map((item, index) => ({ index, item, status: 'notStarted', steps: {} }));
  let failures = 0;
  // Set when the run's maintenance window closed (or a freeze began) before an item: no new item starts.
  let closed: ReturnType<ContainerContext['newWorkRefusal']>;
  const mayStart = (): boolean => {
    if (signal.aborted || failures > allowed || closed) return false;
    closed = context.newWorkRefusal();
    if (closed) context.log().warn({ reason: closed.reason }, `forEach ${path}: ${closed.reason}; no new item starts`);
    return !closed;
  };
  const kept = context.itemStepReads();
  /** What the playbook may read of an ended item's steps: the other views are released with the item's scope. */
  const keptSteps = (steps: Record<string, unknown>): Record<string, unknown> => {
    if (kept === 'all') return steps;
    // Once per item: no arrays made on the way.
    const views: Record<string, unknown> = {};
    for (const id of kept) if (id in steps) views[id] = steps[id];
    return views;
  };
  const ended = (index: number, status: StepStatus, steps: Record<string, unknown>): void => {
    if (status === 'failed') failures += 1;
    results[index] = { index, item: items[index], status, steps: keptSteps(steps) };
    if (status === 'failed' && failures > allowed) {
      context
        .log()
        .warn(
          { failures, toleratedFailures: allowed },
          `forEach ${path}: ${failures} failed ${failures === 1 ? 'item exceeds' : 'items exceed'} the tolerance of ${allowed}; no new item starts`,
        );
    }
  };
  // Not an async function: a suspended frame per item in flight (thousands, each waiting on an
  // operation) costs more memory than the one reaction its end needs.
  const runItem = (index: number): Promise<void> => {
    const names = { [step.as]: items[index], loop: { index, first: index === 0, last: index === total - 1 } };
    return context
      .runItem(index, step.steps, names, itemLabel(items[index]))
      .then(({ status, steps }) => ended(index, status, steps));
  };

  // Items in flight are counted, and a loop waiting for a free slot is woken by the next item to
  // end: a `Promise.race` over the items in flight made a promise and a reaction on each of them
  // at every start (the hottest line of a loop of quiet steps).
  let inFlight = 0;
  let wake: (() => void) | undefined;
  // An item fails only by a throw of the run's machinery (the store gone): the first one is
  // reported by the next wait for a slot or for the batch, as soon as it happens.
  let broken: { error: unknown } | undefined;
  const settled = (): void => {
    inFlight -= 1;
    const waiting = wake;
    wake = undefined;
    waiting?.();
  };
  const itemEnded = async (): Promise<void> => {
    await new Promise<void>((resolve) => (wake = resolve));
    if (broken) throw broken.error;
  };
  let next = 0;
  for (const size of sizes) {
    const end = next + size;
    while (next < end && mayStart()) {
      if (inFlight >= concurrency) {
        await itemEnded();
        continue;
      }
      inFlight += 1;
      runItem(next).then(settled, (error: unknown) => {
        broken ??= { error };
        settled();
      });
      next += 1;
    }
    while (inFlight > 0) await itemEnded();
    if (!mayStart()) break;
  }
  return loopOutcome(context, results, failures, allowed, closed);
}

function loopOutcome(
  context: ContainerContext<ForEachStep>,
  results: ItemResult[],
  failures: number,
  allowed: number,
  closed: ReturnType<ContainerContext['newWorkRefusal']>,
): StepOutcome {
  context.itemsNotStarted(results.filter((result) => result.status === 'notStarted').map((result) => result.index));
  const count = (status: StepStatus): number => results.filter((result) => result.status === status).length;
  const outputs = {
    items: results,
    succeeded: count('succeeded'),
    failed: count('failed'),
    notStarted: count('notStarted'),
  };
  // Each item's steps are journaled by their own entries: the loop's end lists the items without them.
  const journalOutputs = {
    ...outputs,
    items: results.map(({ index, item, status }) => ({ index, item, status })),
  };
  if (failures > allowed) {
    const message = `${failures} of ${results.length} items failed (tolerated: ${allowed}); ${outputs.notStarted} never started`;
    return { status: 'failed', outputs, journalOutputs, error: { message, code: 'TOLERANCE_EXCEEDED' } };
  }
  if (closed && outputs.notStarted > 0 && !context.signal.aborted) {
    const notStarted = results.filter((result) => result.status === 'notStarted');
    const listed = notStarted.map((result) => `${context.path}[${result.index}]`).join(', ');
    const message =
      closed.onClose === 'fail'
        ? `${closed.reason}; window onClose is fail, so the run fails; ${notStarted.length} of ${results.length} items never started: ${listed}`
        : `${closed.reason}; ${notStarted.length} of ${results.length} items wait for it: ${listed}`;
    const error = {
      message,
      code: StepErrorCode.windowClosed,
      details: {
        onClose: closed.onClose,
        notStarted: notStarted.map((result) => result.index),
        ...(closed.opensAtMs === undefined ? {} : { until: new Date(closed.opensAtMs).toISOString() }),
      },
    };
    return { status: closed.onClose === 'fail' ? 'failed' : 'interrupted', outputs, journalOutputs, error };
  }
  if (context.signal.aborted || count('interrupted') > 0) return { status: 'interrupted', outputs, journalOutputs };
  return { status: 'succeeded', outputs, journalOutputs };
}

/** Fields that name an item, in the order a reader would pick: a system's name before its id. */
const LABEL_FIELDS = ['name', 'displayName', 'hostname', 'serialNumber', 'email', 'id'] as const;
/** A label is for a grid cell and a title: longer ones are cut. */
const LABEL_MAX = 80;

/** What a reader knows an item by: a string or number itself, else its first naming field. */
export function itemLabel(item: unknown): string | undefined {
  let label: unknown = item;
  if (typeof item === 'object' && item !== null && !Array.isArray(item)) {
    const fields = item as Record<string, unknown>;
    label = LABEL_FIELDS.map((field) => fields[field]).find(
      (value) => typeof value === 'string' || typeof value === 'number',
    );
  }
  if (typeof label === 'number') return String(label);
  if (typeof label !== 'string' || label === '') return undefined;
  return label.length > LABEL_MAX ? `${label.slice(0, LABEL_MAX - 1)}…` : label;
}
