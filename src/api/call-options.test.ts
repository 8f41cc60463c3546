import { describe, expect, it } from 'vitest';
import { ServerError } from './errors.js';
import { createMockPlatform, testUrls } from './testing.js';

const json = { headers: { 'content-type': 'application/json' } };
const systemPath = '/private-cloud-business/v1beta1/systems/s1';

describe('retries: false', () => {
  it('makes one attempt where the client would otherwise retry a 503', async () => {
    const platform = createMockPlatform();
    let answered = 0;
    platform
      .regional('us-west')
      .intercept({ path: systemPath, method: 'GET' })
      .reply(() => {
        answered += 1;
        return {
          statusCode: 503,
          data: { httpStatusCode: 503, errorCode: 'UNAVAILABLE', message: 'busy' },
          responseOptions: json,
        };
      })
      .persist();
    const client = platform.client();
    const error = await client
      .invoke('privateCloud.getSystem', { id: 's1' }, { region: 'us-west', retries: false })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServerError);
    expect(answered).toBe(1);
    await client.invoke('privateCloud.getSystem', { id: 's1' }, { region: 'us-west' }).catch(() => undefined);
    expect(answered).toBe(1 + 5);
  });
});

describe('describeRequest', () => {
  it('builds the request a write would send, without sending it or adding credentials', () => {
    const platform = createMockPlatform();
    const described = platform
      .client()
      .describeRequest(
        'privateCloud.runSoftwareUpdate',
        { id: 's1', body: { catalogVersion: '2.4.0' } },
        { region: 'us-west' },
      );
    expect(described).toEqual({
      operationId: 'privateCloud.runSoftwareUpdate',
      method: 'POST',
      url: `${testUrls.regionalUrl.replace('{region}', 'us-west')}${systemPath}/software-update`,
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: { catalogVersion: '2.4.0' },
      region: 'us-west',
    });
    expect(platform.tokenRequests()).toBe(0);
  });

  it('refuses input the operation does not take, as a call would', () => {
    const platform = createMockPlatform();
    expect(() =>
      platform.client().describeRequest('privateCloud.getSystem', { idd: 's1' }, { region: 'us-west' }),
    ).toThrow(/has no input 'idd'/);
  });
});
