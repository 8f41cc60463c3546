import { describe, expect, it } from 'vitest';
import { closedObject, fieldOf, itemOf, typeOfLiteral } from './value-types.js';

const system = closedObject({ id: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } });

describe('fieldOf: what a path may read, the JSONata way', () => {
  it('finds a listed field, and says which fields there are when it is not one', () => {
    expect(fieldOf(system, 'id')).toEqual({ found: true, type: { type: 'string' } });
    expect(fieldOf(system, 'idd')).toEqual({ found: false, known: true, fields: ['id', 'tags'], what: 'an object' });
  });

  it('reads a field of a list as the list of its items’ fields', () => {
    expect(fieldOf({ type: 'array', items: system }, 'id')).toEqual({
      found: true,
      type: { type: 'array', items: { type: 'string' } },
    });
    // A list of lists read through a path is flattened.
    expect(fieldOf({ type: 'array', items: system }, 'tags')).toEqual({
      found: true,
      type: { type: 'array', items: { type: 'string' } },
    });
    expect(fieldOf({ type: 'array', items: system }, 'nope')).toMatchObject({ found: false, known: true });
  });

  it('accepts any field of an open or untyped value', () => {
    for (const open of [
      {},
      { type: 'object' },
      { type: 'object', properties: { a: {} }, additionalProperties: true },
      { type: 'object', properties: {}, patternProperties: { '^x': {} } },
    ])
      expect(fieldOf(open, 'anything')).toEqual({ found: false, known: false });
    expect(fieldOf({ type: 'object', additionalProperties: { type: 'integer' } }, 'any')).toEqual({
      found: true,
      type: { type: 'integer' },
    });
  });

  it('refuses a field of a scalar, nullable or not', () => {
    expect(fieldOf({ type: 'integer' }, 'x')).toEqual({ found: false, known: true, fields: [], what: 'an integer' });
    expect(fieldOf({ type: ['string', 'null'] }, 'x')).toMatchObject({ found: false, known: true });
    expect(fieldOf({ type: ['object', 'null'], properties: { a: {} } }, 'a')).toEqual({ found: true, type: {} });
  });

  it('takes a field any branch of oneOf/anyOf has, every part of allOf together; unknown when a branch is open', () => {
    const either = { oneOf: [closedObject({ a: { type: 'string' } }), closedObject({ b: { type: 'integer' } })] };
    expect(fieldOf(either, 'a')).toEqual({ found: true, type: { type: 'string' } });
    expect(fieldOf(either, 'c')).toEqual({ found: false, known: true, fields: ['a', 'b'], what: 'an object' });
    expect(fieldOf({ anyOf: [closedObject({ a: {} }), { type: 'object' }] }, 'c')).toEqual({
      found: false,
      known: false,
    });
    const both = { allOf: [closedObject({ a: { type: 'string' } }), { type: 'object', properties: { b: {} } }] };
    expect(fieldOf(both, 'b')).toEqual({ found: true, type: {} });
    expect(fieldOf(both, 'c')).toMatchObject({ found: false, known: true, fields: ['a', 'b'] });
  });
});

describe('literals and items', () => {
  it('types a literal as written, and an item of a list', () => {
    expect(typeOfLiteral({ n: 1, s: 'x', l: [true] })).toEqual(
      closedObject({ n: { type: 'integer' }, s: { type: 'string' }, l: { type: 'array', items: { type: 'boolean' } } }),
    );
    expect(itemOf({ type: 'array', items: system })).toBe(system);
    expect(itemOf(system)).toBe(system);
  });
});
