import { describe, expect, it } from 'vitest';
import { createMockPlatform } from './testing.js';

const json = { headers: { 'content-type': 'application/json' } };

describe('paginate', () => {
  it('walks offset and limit across three pages and stops at total', async () => {
    const platform = createMockPlatform();
    const requested: string[] = [];
    platform.global
      .intercept({ path: (path) => path.startsWith('/identity/v1/users?'), method: 'GET' })
      .reply((request) => {
        requested.push(request.path);
        const query = new URLSearchParams(request.path.split('?')[1]);
        const offset = Number(query.get('offset'));
        const limit = Number(query.get('limit'));
        const items = Array.from({ length: Math.max(0, Math.min(limit, 5 - offset)) }, (_, index) => ({
          id: `u${offset + index}`,
        }));
        return { statusCode: 200, data: { items, count: items.length, offset, total: 5 }, responseOptions: json };
      })
      .persist();
    const ids: string[] = [];
    for await (const user of platform
      .client()
      .paginate('users.listUsers', { limit: 2, filter: "userStatus eq 'VERIFIED'" })) {
      ids.push((user as { id: string }).id);
    }
    expect(ids).toEqual(['u0', 'u1', 'u2', 'u3', 'u4']);
    const queries = requested.map((path) => Object.fromEntries(new URLSearchParams(path.split('?')[1])));
    expect(queries).toEqual(
      [0, 2, 4].map((offset) => ({ filter: "userStatus eq 'VERIFIED'", offset: String(offset), limit: '2' })),
    );
  });

  it("uses the operation's largest page when no limit is given, and fetches a page only when needed", async () => {
    const platform = createMockPlatform();
    const requested: string[] = [];
    platform.global
      .intercept({ path: (path) => path.startsWith('/subscriptions/v1/subscriptions?'), method: 'GET' })
      .reply((request) => {
        requested.push(request.path);
        return {
          statusCode: 200,
          data: { items: [{ key: 'a' }, { key: 'b' }], count: 2, offset: 0, total: 400 },
          responseOptions: json,
        };
      })
      .persist();
    const iterator = platform.client().paginate('subscriptions.listSubscriptions');
    await iterator.next();
    await iterator.next();
    expect(requested).toEqual(['/subscriptions/v1/subscriptions?limit=200&offset=0']);
    await iterator.return();
  });

  it('yields a bare-array list once', async () => {
    const platform = createMockPlatform();
    platform
      .regional('eu-central')
      .intercept({ path: '/consumption-analytics/v1/reports', method: 'GET' })
      .reply(200, [{ id: 'r1' }, { id: 'r2' }], json);
    const reports: unknown[] = [];
    for await (const report of platform.client().paginate('consumptionAnalytics.listReports')) reports.push(report);
    expect(reports).toEqual([{ id: 'r1' }, { id: 'r2' }]);
    platform.agent.assertNoPendingInterceptors();
  });

  it('stops at an empty page when the list gives no total', async () => {
    const platform = createMockPlatform();
    const pool = platform.regional('eu-central');
    const page = (items: unknown[]) => ({ items, count: items.length, offset: 0 });
    pool
      .intercept({ path: (path) => path.includes('offset=0'), method: 'GET' })
      .reply(200, page(Array.from({ length: 100 }, (_, i) => i)), json);
    pool.intercept({ path: (path) => path.includes('offset=100'), method: 'GET' }).reply(200, page([]), json);
    let count = 0;
    for await (const _ of platform.client().paginate('privateCloud.listSystems')) count += 1;
    expect(count).toBe(100);
    platform.agent.assertNoPendingInterceptors();
  });
});
