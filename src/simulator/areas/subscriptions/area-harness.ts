/**
 * Unit-test harness for an area: its state and handlers on a test context, with `call`
 * and `rejection` helpers. (Generic; it lives here because the areas of this folder's
 * owner share it. It could move beside `testing.ts`.)
 */
import type { AreaModule, SimRequest, SimResponse } from '../../context.js';
import { SimHttpError } from '../../errors.js';
import { createTestContext, type TestContext, type TestContextOptions } from '../../testing.js';

export interface AreaHarness<S> {
  ctx: TestContext;
  state: S;
  call(operationId: string, init?: Partial<Omit<SimRequest, 'operationId'>>): Promise<SimResponse>;
  /** The `SimHttpError` the call throws (fails when it does not throw one). */
  rejection(operationId: string, init?: Partial<Omit<SimRequest, 'operationId'>>): Promise<SimHttpError>;
}

export function createAreaHarness<S>(area: AreaModule<S>, options: TestContextOptions = {}): AreaHarness<S> {
  const ctx = createTestContext({ areaKey: area.key, ...options });
  const state = area.createState(ctx);
  const handlers = area.handlers(state, ctx);
  const call: AreaHarness<S>['call'] = async (operationId, init = {}) => {
    const handler = handlers[operationId];
    if (!handler) throw new Error(`Area '${area.key}' has no handler for ${operationId}`);
    ctx.asyncOps.settle();
    return handler(ctx.request(operationId, init));
  };
  return {
    ctx,
    state,
    call,
    async rejection(operationId, init) {
      try {
        await call(operationId, init);
      } catch (error) {
        if (error instanceof SimHttpError) return error;
        throw error;
      }
      throw new Error(`${operationId} did not fail`);
    },
  };
}
