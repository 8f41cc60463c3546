import { describe, expect, it } from 'vitest';
import { SimHttpError } from '../errors.js';
import { compileSort } from './compile-sort.js';

const schema = { name: 'string', count: 'integer', createdAt: 'timestamp', 'a/b': 'string' } as const;
const items = [
  { name: 'b', count: 2, createdAt: '2024-01-02T00:00:00Z', a: { b: 'y' } },
  { name: 'a', count: 2, createdAt: '2024-01-01T00:00:00Z', a: { b: 'x' } },
  { name: null, count: 1, createdAt: '2023-01-01T00:00:00+05:00' },
  { name: 'c', count: 3, createdAt: '2023-01-01T00:00:00Z', a: { b: 'z' } },
];

function order(text: string): unknown[] {
  return [...items].sort(compileSort(text, schema)).map((item) => item.name);
}

describe('compileSort', () => {
  it('sorts ascending by default and descending on request, missing values last', () => {
    expect(order('name')).toEqual(['a', 'b', 'c', null]);
    expect(order('name asc')).toEqual(['a', 'b', 'c', null]);
    expect(order('name desc')).toEqual(['c', 'b', 'a', null]);
  });

  it('applies comma-separated keys in order', () => {
    expect(order('count desc, name asc')).toEqual(['c', 'a', 'b', null]);
    expect(order('count,name desc')).toEqual([null, 'b', 'a', 'c']);
  });

  it('orders timestamps by instant and reads nested paths', () => {
    expect(order('createdAt')).toEqual([null, 'c', 'a', 'b']);
    expect(order('a/b desc')).toEqual(['c', 'b', 'a', null]);
  });

  it.each([
    ['colour', "unknown property 'colour' (sortable: name, count, createdAt, a/b) at position 1"],
    ['name up', "unknown direction 'up' (asc or desc) at position 6"],
    ['name,', 'expected a property name but found the end of the text at position 6'],
    ['name asc desc', "expected ',' or the end but found 'desc' at position 10"],
  ])('refuses %j with a 400', (text, problem) => {
    let caught: unknown;
    try {
      compileSort(text, schema);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(SimHttpError);
    expect((caught as SimHttpError).status).toBe(400);
    expect((caught as SimHttpError).message).toBe(`Invalid sort: ${problem}`);
  });
});
