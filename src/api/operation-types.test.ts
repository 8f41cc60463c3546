// The typecheck (`tsc`, part of `npm test`) is this test: every `@ts-expect-error` below must
// meet an error, and every other line must compile. Vitest only runs the calls against mocks.
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { OperationId, OperationInput } from './operation-types.js';
import { createMockPlatform } from './testing.js';

const json = { headers: { 'content-type': 'application/json' } };

describe('typed operations', () => {
  it('type-checks ids, inputs and bodies of calls and area methods', async () => {
    const platform = createMockPlatform();
    platform.agent
      .get('https://eu-central.api.test')
      .intercept({ path: () => true, method: () => true })
      .reply(200, { id: 's1', name: 'system one' }, json)
      .persist();
    const client = platform.client();

    const system = await client.call('privateCloud.getSystem', { id: 's1' });
    expectTypeOf(system.body.name).toEqualTypeOf<string | undefined>();
    expect(system.body.name).toBe('system one');
    await client.privateCloud.runSoftwarePrechecks({ id: 's1', body: { catalogVersion: '2.4.0' } });
    await client.privateCloud.listSystems();

    // @ts-expect-error the path parameter `id` is required
    await client.call('privateCloud.getSystem', {}).catch(() => undefined);
    // @ts-expect-error no such operation
    await client.call('privateCloud.getSytem', { id: 's1' }).catch(() => undefined);
    // @ts-expect-error catalogVersion is a string
    await client.privateCloud.runSoftwarePrechecks({ id: 's1', body: { catalogVersion: 2 } });
    // @ts-expect-error the token endpoint is not callable
    await client.call('auth.createToken', {}).catch(() => undefined);

    expectTypeOf<'devices.updateDevices'>().toExtend<OperationId>();
    expectTypeOf<OperationInput<'devices.updateDevices'>['id']>().toEqualTypeOf<string[]>();
  });
});
