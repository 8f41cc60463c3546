import jsonata from 'jsonata';

/**
 * What one evaluation may allocate. JSONata's own time and depth guardrails do not stop a single
 * call that builds a huge value (`$pad('x', 2e8)` ends the process with a V8 fatal error before
 * any timer fires), so the functions that build strings check the size of their result before
 * building it, and every value a node produces is measured when the node ends.
 */
export const ALLOCATION_LIMITS = {
  /** Largest value one expression node may produce, measured as its JSON text (characters). */
  maxValueChars: 32 * 1024 * 1024,
  /** Most items an array or sequence may hold (JSONata's range operator alone allows 1e7). */
  maxItems: 1_000_000,
  /** Characters all the string-building calls of one evaluation may produce together. */
  maxBuiltChars: 128 * 1024 * 1024,
  /**
   * Expression parts one evaluation may evaluate: what stops a recursion that never ends (JSONata
   * runs a call in tail position in a loop, so its depth never grows). A count, not a time: an
   * evaluation interleaves with every other one a busy run has in flight, so a wall-clock limit
   * failed sound expressions on a loaded machine. About 2 s of one core on the benchmark machine.
   */
  maxEvaluatedParts: 3_000_000,
} as const;

/** An expression went past `ALLOCATION_LIMITS`: the step fails with `EXPRESSION_LIMIT`. */
export class AllocationLimitError extends Error {
  /** Where JSONata was in the expression when the limit was hit; JSONata fills it in for calls. */
  position?: number;

  constructor(message: string) {
    super(message);
    this.name = 'AllocationLimitError';
  }
}

/** JSONata's own size guards, reported like ours. */
export const JSONATA_LIMIT_CODES: ReadonlySet<string> = new Set(['D2014', 'D2015']);

interface EvaluationBudget {
  builtChars: number;
  evaluatedParts: number;
}

const budgets = new WeakMap<object, EvaluationBudget>();

/**
 * The JSON sizes of the objects measured so far, for every evaluation. A value an expression
 * reads (a step's answer, a loop's item) is the same object in each evaluation that reads it and
 * nothing changes it once made, so it is measured once in its life, not once per expression: a
 * playbook reading five fields of a 10 KB answer walked the answer five times.
 */
const measuredSizes = new WeakMap<object, number>();

interface JsonataEnvironment {
  base: object;
}

function budgetOf(environment: JsonataEnvironment): EvaluationBudget {
  let budget = budgets.get(environment.base);
  if (budget === undefined) {
    budget = { builtChars: 0, evaluatedParts: 0 };
    budgets.set(environment.base, budget);
  }
  return budget;
}

const formatChars = (chars: number): string => `${Math.round(chars).toLocaleString('en-US')} characters`;

function refuseLength(what: string, chars: number): never {
  throw new AllocationLimitError(
    `${what} would be ${formatChars(chars)}, over the limit of ${formatChars(ALLOCATION_LIMITS.maxValueChars)} for one value`,
  );
}

/** Counts characters a call is about to build against the evaluation's budget. */
function spend(environment: JsonataEnvironment, what: string, chars: number): void {
  if (chars > ALLOCATION_LIMITS.maxValueChars) refuseLength(what, chars);
  const budget = budgetOf(environment);
  budget.builtChars += chars;
  if (budget.builtChars > ALLOCATION_LIMITS.maxBuiltChars) {
    throw new AllocationLimitError(
      `${what} brings the text built by this expression to ${formatChars(budget.builtChars)}, ` +
        `over the limit of ${formatChars(ALLOCATION_LIMITS.maxBuiltChars)}`,
    );
  }
}

/**
 * The JSON size of a value, counting a shared object once per place it appears (what
 * serialising it would write), stopping as soon as it passes `cap`. Sizes of objects are kept,
 * so measuring every node's result costs about the size of what is new.
 */
export function measureValue(value: unknown, sizes: WeakMap<object, number>, cap: number): number {
  switch (typeof value) {
    case 'string':
      return value.length + 2;
    case 'number':
    case 'boolean':
      return 8;
    case 'object':
      break;
    default:
      return 4;
  }
  if (value === null) return 4;
  const known = sizes.get(value);
  if (known !== undefined) return known;
  // A value that holds itself (a context object linked back) is counted once, not followed round.
  sizes.set(value, 0);
  let total = 2;
  if (Array.isArray(value)) {
    if (value.length > ALLOCATION_LIMITS.maxItems) return cap + 1;
    for (const item of value) {
      total += measureValue(item, sizes, cap) + 1;
      if (total > cap) break;
    }
  } else {
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      total += key.length + 4 + measureValue((value as Record<string, unknown>)[key], sizes, cap);
      if (total > cap) break;
    }
  }
  const size = Math.min(total, cap + 1);
  sizes.set(value, size);
  return size;
}

/** Throws when a value is over the limits. */
function checkValue(value: unknown, what: string): void {
  if (typeof value === 'string') {
    if (value.length > ALLOCATION_LIMITS.maxValueChars) refuseLength(what, value.length);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (Array.isArray(value) && value.length > ALLOCATION_LIMITS.maxItems) {
    throw new AllocationLimitError(
      `${what} has ${value.length.toLocaleString('en-US')} items, over the limit of ${ALLOCATION_LIMITS.maxItems.toLocaleString('en-US')}`,
    );
  }
  const size =
    (Array.isArray(value) ? smallPrimitivesSize(value) : undefined) ??
    measureValue(value, measuredSizes, ALLOCATION_LIMITS.maxValueChars);
  if (size > ALLOCATION_LIMITS.maxValueChars) refuseLength(`${what} as JSON`, size);
}

/** Throws when a value an expression gave without JSONata (`directEvaluator`) is over the limits, as JSONata's check of each node would. */
export function checkDirectResult(value: unknown): void {
  checkValue(value, 'the value');
}

/** Longest array `smallPrimitivesSize` measures. */
const SMALL_ARRAY = 16;

/**
 * The JSON size of a short array of strings, numbers and booleans, as `measureValue` counts it,
 * without the cache of sizes; undefined for a longer one or one holding objects. A path's result
 * is such a sequence (`n` gives `[3]`), a new array per node of every evaluation: measured through
 * the cache, each entered it (a per-evaluation WeakMap at first, a few per cent of a loop's CPU).
 */
function smallPrimitivesSize(items: readonly unknown[]): number | undefined {
  if (items.length > SMALL_ARRAY) return undefined;
  let total = 2;
  for (const item of items) {
    if (typeof item === 'object' && item !== null) return undefined;
    total += measureValue(item, NO_SIZES, ALLOCATION_LIMITS.maxValueChars) + 1;
  }
  return total;
}

/** `measureValue` of a primitive never reads or writes its cache. */
const NO_SIZES = new WeakMap<object, number>();

/** Node types that only look a value up: what they return was measured when it was made or given. */
const LOOKUPS: ReadonlySet<string> = new Set([
  'name',
  'variable',
  'string',
  'number',
  'value',
  'wildcard',
  'descendant',
  'parent',
  'regex',
  'lambda',
]);

interface AstNode {
  type: string;
  value?: unknown;
  position?: number;
}

/** Counts a node against its evaluation's work budget. */
function spendPart(environment: JsonataEnvironment): void {
  const budget = budgetOf(environment);
  if (++budget.evaluatedParts > ALLOCATION_LIMITS.maxEvaluatedParts) {
    throw new AllocationLimitError(
      `the expression evaluated more than ${ALLOCATION_LIMITS.maxEvaluatedParts.toLocaleString('en-US')} parts ` +
        '(a recursion that never ends?), over the limit for one evaluation',
    );
  }
}

/** Counts and measures every value a node produced. */
async function checkNodeResult(
  node: AstNode,
  _input: unknown,
  environment: JsonataEnvironment,
  result: unknown,
): Promise<void> {
  try {
    spendPart(environment);
    if (LOOKUPS.has(node.type)) return;
    checkValue(result, 'the value');
  } catch (error) {
    if (error instanceof AllocationLimitError && error.position === undefined && typeof node.position === 'number')
      error.position = node.position;
    throw error;
  }
}

type Implementation = (this: { environment: JsonataEnvironment }, ...args: never[]) => unknown;

interface BuiltIn {
  implementation: Implementation;
  signature: { definition: string };
}

async function builtIn(name: string): Promise<BuiltIn> {
  return (await jsonata(`$${name}`).evaluate({})) as BuiltIn;
}

/** JSONata's own functions, wrapped: each checks the size of what it would build first. */
const [pad, join, string, replace, split] = (await Promise.all(
  ['pad', 'join', 'string', 'replace', 'split'].map(builtIn),
)) as [BuiltIn, BuiltIn, BuiltIn, BuiltIn, BuiltIn];

const callOriginal = (fn: BuiltIn, self: unknown, args: unknown[]): unknown =>
  (fn.implementation as (...a: unknown[]) => unknown).apply(self, args);

const codePoints = (text: string): number => (/[\uD800-\uDFFF]/.test(text) ? Array.from(text).length : text.length);

/**
 * JSONata's `$pad` (widths and lengths in code points, a longer padding text cut to fit), built
 * with `repeat`: JSONata joins an array as long as the width, which takes seconds for a width
 * the limits allow.
 */
function padText(text: string | undefined, width: number, char?: string): string | undefined {
  if (text === undefined) return undefined;
  const filler = char === undefined || char.length === 0 ? ' ' : char;
  const padLength = Math.abs(Math.trunc(width)) - codePoints(text);
  if (padLength <= 0) return text;
  const fillerLength = codePoints(filler);
  let padding = filler.repeat(Math.ceil(padLength / fillerLength));
  if (padLength % fillerLength !== 0) padding = Array.from(padding).slice(0, padLength).join('');
  return width > 0 ? text + padding : padding + text;
}

function countOccurrences(text: string, pattern: string, limit: number): number {
  if (pattern === '') return text.length + 1;
  let count = 0;
  for (let at = text.indexOf(pattern); at !== -1 && count < limit; at = text.indexOf(pattern, at + pattern.length))
    count += 1;
  return count;
}

const guardedFunctions = [
  {
    name: 'pad',
    signature: pad.signature.definition,
    implementation(
      this: { environment: JsonataEnvironment },
      text: string | undefined,
      width: number,
      char?: string,
    ): unknown {
      if (text !== undefined && Number.isFinite(width))
        spend(this.environment, '$pad', Math.max(Math.abs(Math.trunc(width)), text.length));
      if (!Number.isFinite(width) && width !== undefined)
        throw new AllocationLimitError(`$pad: the width must be a finite number, got ${String(width)}`);
      return padText(text, width, char);
    },
  },
  {
    name: 'join',
    signature: join.signature.definition,
    implementation(
      this: { environment: JsonataEnvironment },
      strings: string[] | string | undefined,
      separator?: string,
    ): unknown {
      if (Array.isArray(strings)) {
        let chars = (separator ?? '').length * Math.max(strings.length - 1, 0);
        for (const item of strings) chars += typeof item === 'string' ? item.length : 0;
        spend(this.environment, '$join', chars);
      }
      return callOriginal(join, this, [strings, separator]);
    },
  },
  {
    name: 'string',
    signature: string.signature.definition,
    implementation(this: { environment: JsonataEnvironment }, value: unknown, prettify?: boolean): unknown {
      if (typeof value === 'object' && value !== null) {
        const size = measureValue(value, measuredSizes, ALLOCATION_LIMITS.maxValueChars);
        // Pretty printing adds indentation to every line: count it generously.
        spend(this.environment, '$string', prettify === true ? size * 4 : size);
      }
      return callOriginal(string, this, [value, prettify]);
    },
  },
  {
    name: 'replace',
    signature: replace.signature.definition,
    implementation(
      this: { environment: JsonataEnvironment },
      text: string | undefined,
      pattern: unknown,
      replacement: unknown,
      limit?: number,
    ): unknown {
      if (typeof text === 'string' && typeof replacement === 'string' && replacement.length > 0) {
        // A regex may match anywhere, even between characters: assume the worst.
        const matches =
          typeof pattern === 'string'
            ? countOccurrences(text, pattern, limit ?? Number.POSITIVE_INFINITY)
            : Math.min(text.length + 1, limit ?? Number.POSITIVE_INFINITY);
        spend(this.environment, '$replace', text.length + matches * replacement.length);
      }
      return callOriginal(replace, this, [text, pattern, replacement, limit]);
    },
  },
  {
    name: 'split',
    signature: split.signature.definition,
    implementation(
      this: { environment: JsonataEnvironment },
      text: string | undefined,
      separator: unknown,
      limit?: number,
    ): unknown {
      const bounded = Math.min(limit ?? Number.POSITIVE_INFINITY, ALLOCATION_LIMITS.maxItems + 1);
      const result = callOriginal(split, this, [text, separator, bounded]);
      if (
        Array.isArray(result) &&
        result.length > ALLOCATION_LIMITS.maxItems &&
        (limit === undefined || limit > ALLOCATION_LIMITS.maxItems)
      ) {
        throw new AllocationLimitError(
          `$split would make more than ${ALLOCATION_LIMITS.maxItems.toLocaleString('en-US')} items`,
        );
      }
      return result;
    },
  },
] as const;

export interface FunctionDefinition {
  name: string;
  signature: string;
  implementation: (this: jsonata.Focus, ...args: never[]) => unknown;
}

/**
 * Functions as JSONata holds them once defined, signature parsed: defined once here and bound
 * to each expression as they are (registering them per expression parses every signature again,
 * a third of the time it takes to load a large playbook).
 */
export async function defineFunctions(functions: readonly FunctionDefinition[]): Promise<Array<[string, unknown]>> {
  return Promise.all(
    functions.map(async (fn): Promise<[string, unknown]> => {
      // A compiled expression's bindings are reachable only by evaluating it: `$name` yields the function.
      const holder = jsonata(`$${fn.name}`);
      holder.registerFunction(
        fn.name,
        fn.implementation as (this: jsonata.Focus, ...args: unknown[]) => unknown,
        fn.signature,
      );
      return [fn.name, await holder.evaluate({})];
    }),
  );
}

const guards = await defineFunctions(guardedFunctions as unknown as FunctionDefinition[]);

/** Installs the allocation guards on a compiled expression. */
export function guardAllocations(expression: jsonata.Expression): void {
  for (const [name, defined] of guards) expression.assign(name, defined);
  // JSONata calls this binding, when present, after every node it evaluates.
  expression.assign(Symbol.for('jsonata.__evaluate_exit') as unknown as string, checkNodeResult);
}
