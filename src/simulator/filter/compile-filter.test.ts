import { describe, expect, it } from 'vitest';
import { SimHttpError } from '../errors.js';
import { compileFilter } from './compile-filter.js';
import type { PropertySchema } from './property-schema.js';

const schema: PropertySchema = {
  name: 'string',
  count: 'integer',
  price: 'decimal',
  createdAt: 'timestamp',
  enabled: 'boolean',
  'application/id': 'string',
};

const items = [
  {
    name: 'alpha',
    count: 1,
    price: 1.5,
    createdAt: '2024-01-01T00:00:00Z',
    enabled: true,
    application: { id: 'app-1' },
  },
  {
    name: 'beta',
    count: 2,
    price: 2.5,
    createdAt: '2024-06-01T12:00:00.000Z',
    enabled: false,
    application: { id: 'app-2' },
  },
  { name: "o'brien/x", count: 3, price: 3, createdAt: '2025-01-01T00:00:00+02:00', enabled: true, application: null },
  { name: null, count: null, price: 4.25, createdAt: null, enabled: null },
];

function names(text: string, options?: Parameters<typeof compileFilter>[2]): unknown[] {
  const predicate = compileFilter(text, schema, options);
  return items.filter(predicate).map((item) => item.name);
}

function errorOf(text: string, options?: Parameters<typeof compileFilter>[2]): SimHttpError {
  try {
    compileFilter(text, schema, options);
  } catch (error) {
    expect(error).toBeInstanceOf(SimHttpError);
    return error as SimHttpError;
  }
  throw new Error(`filter ${text} compiled`);
}

describe('compileFilter comparisons', () => {
  it('eq and ne on strings, integers, decimals, booleans', () => {
    expect(names("name eq 'beta'")).toEqual(['beta']);
    expect(names("name ne 'beta'")).toEqual(['alpha', "o'brien/x", null]);
    expect(names('count eq 2')).toEqual(['beta']);
    expect(names('price eq 3')).toEqual(["o'brien/x"]);
    expect(names('price eq 2.5')).toEqual(['beta']);
    expect(names('enabled eq true')).toEqual(['alpha', "o'brien/x"]);
    expect(names('enabled ne true')).toEqual(['beta', null]);
  });

  it('gt ge lt le on integers, decimals and timestamps', () => {
    expect(names('count gt 1')).toEqual(['beta', "o'brien/x"]);
    expect(names('count ge 2')).toEqual(['beta', "o'brien/x"]);
    expect(names('count lt 2')).toEqual(['alpha']);
    expect(names('count le 2')).toEqual(['alpha', 'beta']);
    expect(names('price gt 2.75')).toEqual(["o'brien/x", null]);
    expect(names('createdAt ge 2024-06-01T12:00:00Z')).toEqual(['beta', "o'brien/x"]);
    // +02:00 is 2024-12-31T22:00Z: before 2024-12-31T23:00Z.
    expect(names('createdAt lt 2024-12-31T23:00:00Z')).toEqual(['alpha', 'beta', "o'brien/x"]);
  });

  it('null equals only itself and is never ordered', () => {
    expect(names('name eq null')).toEqual([null]);
    expect(names('name ne null')).toEqual(['alpha', 'beta', "o'brien/x"]);
    expect(names('count gt null')).toEqual([]);
    expect(names('count lt null')).toEqual([]);
    expect(names('count lt 100')).toEqual(['alpha', 'beta', "o'brien/x"]);
    expect(names('application/id eq null')).toEqual(["o'brien/x", null]);
  });

  it('reads nested paths', () => {
    expect(names("application/id eq 'app-2'")).toEqual(['beta']);
  });

  it("decodes '' escapes and percent-encoded reserved characters in strings", () => {
    expect(names("name eq 'o''brien%2Fx'")).toEqual(["o'brien/x"]);
    expect(names("name eq 'o''brien/x'")).toEqual(["o'brien/x"]);
  });
});

describe('compileFilter in', () => {
  it('matches one of a bracketed list with the property on either side', () => {
    expect(names("name in ['alpha', 'beta']")).toEqual(['alpha', 'beta']);
    expect(names("['alpha', 'beta'] in name")).toEqual(['alpha', 'beta']);
    expect(names('count in [1, 3]')).toEqual(['alpha', "o'brien/x"]);
    expect(names('name in [null]')).toEqual([null]);
    expect(names('name in []')).toEqual([]);
  });

  it("accepts the user area's substring form only with functions", () => {
    expect(names("'et' in name", { functions: true })).toEqual(['beta']);
    expect(errorOf("'et' in name").message).toContain('substring form');
  });

  it('negates a match against several values with not', () => {
    expect(names("not name in ['alpha', 'beta']")).toEqual(["o'brien/x", null]);
    expect(names("not (name in ['alpha', 'beta'])")).toEqual(["o'brien/x", null]);
  });
});

describe('compileFilter logic and precedence', () => {
  it('and binds tighter than or', () => {
    expect(names("name eq 'alpha' or name eq 'beta' and count eq 3")).toEqual(['alpha']);
    expect(names("(name eq 'alpha' or name eq 'beta') and count eq 2")).toEqual(['beta']);
  });

  it('not applies to the next primary only', () => {
    expect(names("not name eq 'alpha' and count lt 3")).toEqual(['beta']);
    expect(names("not (name eq 'alpha' and count lt 3)")).toEqual(['beta', "o'brien/x", null]);
    expect(names("not not name eq 'alpha'")).toEqual(['alpha']);
  });

  it('accepts extra spaces and nested parentheses', () => {
    expect(names("  ((name   eq 'alpha'))  ")).toEqual(['alpha']);
  });
});

describe('compileFilter functions', () => {
  it('contains, startswith, endswith on strings', () => {
    expect(names("contains(name, 'et')", { functions: true })).toEqual(['beta']);
    expect(names("startswith(name, 'al')", { functions: true })).toEqual(['alpha']);
    expect(names("endswith(name, 'a')", { functions: true })).toEqual(['alpha', 'beta']);
    expect(names("startswith(name, 'a') or endswith(name, '%2Fx')", { functions: true })).toEqual([
      'alpha',
      "o'brien/x",
    ]);
  });

  it('are refused where the list does not offer them', () => {
    const error = errorOf("contains(name, 'et')");
    expect(error.status).toBe(400);
    expect(error.message).toBe("Invalid filter: function 'contains' is not supported here at position 1");
  });

  it('need a string property and a string literal', () => {
    expect(errorOf("contains(count, 'x')", { functions: true }).message).toContain(
      "needs a string property, 'count' is integer",
    );
    expect(errorOf('contains(name, 1)', { functions: true }).message).toContain('does not match string property');
    expect(errorOf("lower(name, 'x')", { functions: true }).message).toContain("unknown function 'lower'");
  });
});

describe('compileFilter errors', () => {
  it('names an unknown property and its position, with a bad-request issue', () => {
    const error = errorOf("name eq 'a' and colour eq 'red'");
    expect(error.status).toBe(400);
    expect(error.errorCode).toBe('BAD_REQUEST');
    expect(error.message).toContain("unknown property 'colour'");
    expect(error.message).toContain('position 17');
    expect(error.toBody().errorDetails).toEqual([
      {
        type: 'bad request',
        issues: [
          {
            source: 'query.parameter',
            subject: 'filter',
            description: expect.stringContaining("unknown property 'colour'") as unknown,
          },
        ],
      },
    ]);
  });

  it('refuses literals whose type does not match the property', () => {
    expect(errorOf('name eq 1').message).toContain('integer literal 1 does not match string property');
    expect(errorOf("count eq '1'").message).toContain("string literal '1' does not match integer property 'count'");
    expect(errorOf('count eq 1.5').message).toContain('decimal literal 1.5 does not match integer');
    expect(errorOf("createdAt gt '2024-01-01T00:00:00Z'").message).toContain('does not match timestamp');
    expect(errorOf("enabled eq 'true'").message).toContain('does not match boolean');
    expect(errorOf("count in [1, 'x']").message).toContain('position 14');
  });

  it('refuses ordering operators on strings and booleans', () => {
    expect(errorOf("name gt 'a'").message).toContain("operator 'gt' does not apply to string property 'name'");
    expect(errorOf('enabled lt true').message).toContain('does not apply to boolean');
  });

  it('refuses operators the list does not accept', () => {
    const operators = ['eq', 'ne', 'gt', 'ge', 'lt'];
    expect(names('count lt 2', { operators })).toEqual(['alpha']);
    const error = errorOf('count le 2', { operators });
    expect(error.message).toBe(
      "Invalid filter: operator 'le' is not supported here (supported: eq, ne, gt, ge, lt) at position 7",
    );
    expect(errorOf('count in [1]', { operators }).message).toContain("operator 'in' is not supported");
  });

  it.each([
    ['', 'empty filter at position 1'],
    ["name eq 'abc", 'unterminated string literal at position 9'],
    ['name eq', 'expected a literal but found the end of the text at position 8'],
    [
      "name 'a'",
      "expected an operator (eq, ne, gt, ge, lt, le, in) after 'name' but found string literal 'a' at position 6",
    ],
    ["name like 'a'", "expected an operator (eq, ne, gt, ge, lt, le, in) after 'name' but found 'like' at position 6"],
    ["(name eq 'a'", "expected ')' but found the end of the text at position 13"],
    ["name eq 'a')", "unexpected ')' at position 12"],
    ["name eq 'a' and", 'expected a property name but found the end of the text at position 16'],
    ["name eq 'a' xor count eq 1", "unexpected 'xor' at position 13"],
    ["name in ['a' 'b']", "expected ',' or ']' but found string literal 'b' at position 14"],
    ["name eq 'a' & count eq 1", "unexpected character '&' at position 13"],
    ["'a' eq name", "a filter starts with a property name, found string literal 'a' at position 1"],
    ["['a'] eq name", "expected 'in' after a list but found 'eq' at position 7"],
    ['count eq 2024-13-45T99:00:00Z', 'invalid timestamp 2024-13-45T99:00:00Z at position 10'],
  ])('reports %j as malformed', (text, problem) => {
    const error = errorOf(text);
    expect(error.status).toBe(400);
    expect(error.message).toBe(`Invalid filter: ${problem}`);
  });
});

describe('compileFilter speed', () => {
  it('evaluates a compiled filter over 100,000 items quickly', () => {
    const many = Array.from({ length: 100_000 }, (_, i) => ({
      name: `n${i}`,
      count: i,
      createdAt: new Date(i * 1000).toISOString(),
    }));
    const predicate = compileFilter(
      "count ge 50000 and (name in ['n50001', 'n60000'] or createdAt lt 1970-01-01T13:53:21Z)",
      schema,
    );
    const started = performance.now();
    const matched = many.filter(predicate);
    expect(matched.map((item) => item.count)).toEqual([50000, 50001, 60000]);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
