import { describe, expect, it } from 'vitest';
import type { SimRequest } from '../context.js';
import { createListQuery } from './create-list-query.js';

function request(query: Record<string, string>): SimRequest {
  return {
    operationId: 'x.list',
    method: 'GET',
    params: {},
    query,
    body: undefined,
    headers: {},
    region: '',
    clientId: 'sim-admin',
    origin: 'http://127.0.0.1',
    paging: { default: 2, min: 1, max: 10, envelope: true },
  };
}

const items = [{ n: 3 }, { n: 1 }, { n: 2 }, { n: 5 }];

describe('createListQuery', () => {
  const query = createListQuery({ filter: { n: 'integer' }, sort: { n: 'integer' } });

  it('filters, then sorts, then pages with the default limit', () => {
    expect(query.page(items, request({ filter: 'n gt 1', sort: 'n desc' }))).toEqual({
      items: [{ n: 5 }, { n: 3 }],
      count: 2,
      offset: 0,
      total: 3,
    });
    expect(query.page(items, request({ sort: 'n', offset: '1', limit: '3' }))).toEqual({
      items: [{ n: 2 }, { n: 3 }, { n: 5 }],
      count: 3,
      offset: 1,
      total: 4,
    });
  });

  it('leaves the world array in its order', () => {
    query.select(items, request({ sort: 'n' }));
    expect(items.map((item) => item.n)).toEqual([3, 1, 2, 5]);
  });

  it('refuses filter or sort on a list that has none', () => {
    const bare = createListQuery({});
    expect(() => bare.select(items, request({ filter: 'n eq 1' }))).toThrow('This list does not support filter');
    expect(() => bare.select(items, request({ sort: 'n' }))).toThrow('This list does not support sort');
  });
});
