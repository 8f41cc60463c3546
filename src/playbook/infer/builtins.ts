/**
 * The types JSONata's built-in functions and Fleetbook's own (`extraFunctions`) return, and the
 * types the higher-order ones give their function's parameters. A function not listed returns
 * a value of unknown type: every read through it is accepted.
 */
import { closedObject, itemOf, UNKNOWN, type JsonSchema } from '../../steps/index.js';
import { joinTypes, listOf, UNKNOWN_VALUE, type Value } from './values.js';

/** Calls a function argument (a lambda) with parameters of these types; unknown when it is not one. */
export type CallFunction = (fn: Value | undefined, params: readonly Value[]) => Value;

type Returns = (args: readonly Value[], call: CallFunction) => JsonSchema;

const STRING: JsonSchema = { type: 'string' };
const NUMBER: JsonSchema = { type: 'number' };
const INTEGER: JsonSchema = { type: 'integer' };
const BOOLEAN: JsonSchema = { type: 'boolean' };

const typeOf = (args: readonly Value[], index: number): JsonSchema => args[index]?.type ?? UNKNOWN;
const itemValue = (args: readonly Value[], index: number): Value => {
  const list = args[index];
  return list === undefined ? UNKNOWN_VALUE : { ...list, type: itemOf(list.type), lambda: undefined };
};
const always =
  (type: JsonSchema): Returns =>
  () =>
    type;

/** The values of an object read by `$each`/`$sift`: the type of a map's values, else unknown. */
function valuesOf(type: JsonSchema): JsonSchema {
  const values = type.additionalProperties;
  return typeof values === 'object' && values !== null ? (values as JsonSchema) : UNKNOWN;
}

/** `$map`, `$filter`, `$single`: the function gets an item, its index and the list. */
const perItem = (args: readonly Value[], call: CallFunction): Value =>
  call(args[1], [itemValue(args, 0), { type: INTEGER }, args[0] ?? UNKNOWN_VALUE]);

/** `$each`, `$sift`: the function gets a value, its key and the object. */
const perEntry = (args: readonly Value[], call: CallFunction): Value =>
  call(args[1], [{ type: valuesOf(typeOf(args, 0)) }, { type: STRING }, args[0] ?? UNKNOWN_VALUE]);

const STRINGS = [
  'string',
  'substring',
  'substringBefore',
  'substringAfter',
  'lowercase',
  'uppercase',
  'trim',
  'pad',
  'join',
  'replace',
  'formatNumber',
  'formatBase',
  'formatInteger',
  'base64encode',
  'base64decode',
  'encodeUrlComponent',
  'encodeUrl',
  'decodeUrlComponent',
  'decodeUrl',
  'fromMillis',
  'now',
  'type',
];
const NUMBERS = ['number', 'abs', 'floor', 'ceil', 'round', 'power', 'sqrt', 'random', 'sum', 'max', 'min', 'average'];
const INTEGERS = ['length', 'count', 'millis', 'toMillis', 'parseInteger'];
const BOOLEANS = ['boolean', 'not', 'exists', 'contains'];

const RETURNS: ReadonlyMap<string, Returns> = new Map<string, Returns>([
  ...STRINGS.map((name): [string, Returns] => [name, always(STRING)]),
  ...NUMBERS.map((name): [string, Returns] => [name, always(NUMBER)]),
  ...INTEGERS.map((name): [string, Returns] => [name, always(INTEGER)]),
  ...BOOLEANS.map((name): [string, Returns] => [name, always(BOOLEAN)]),
  ['split', always(listOf(STRING))],
  ['keys', always(listOf(STRING))],
  ['match', always(listOf(closedObject({ match: STRING, index: INTEGER, groups: listOf(STRING) })))],
  ['distinct', (args) => typeOf(args, 0)],
  ['reverse', (args) => typeOf(args, 0)],
  ['shuffle', (args) => typeOf(args, 0)],
  ['append', (args) => listOf(joinTypes([itemOf(typeOf(args, 0)), itemOf(typeOf(args, 1))]))],
  [
    'sort',
    (args, call) => {
      call(args[1], [itemValue(args, 0), itemValue(args, 0)]);
      return typeOf(args, 0);
    },
  ],
  ['map', (args, call) => listOf(perItem(args, call).type)],
  [
    'filter',
    (args, call) => {
      perItem(args, call);
      return listOf(itemOf(typeOf(args, 0)));
    },
  ],
  [
    'single',
    (args, call) => {
      perItem(args, call);
      return itemOf(typeOf(args, 0));
    },
  ],
  [
    'reduce',
    (args, call) => {
      // The accumulator's type changes from one call to the next: it is not followed.
      call(args[1], [UNKNOWN_VALUE, itemValue(args, 0), { type: INTEGER }, args[0] ?? UNKNOWN_VALUE]);
      return UNKNOWN;
    },
  ],
  ['each', (args, call) => listOf(perEntry(args, call).type)],
  [
    'sift',
    (args, call) => {
      perEntry(args, call);
      return typeOf(args, 0);
    },
  ],
  // Fleetbook's own (src/expressions/functions.ts).
  ['duration', always(INTEGER)],
  ['chunk', (args) => listOf(listOf(itemOf(typeOf(args, 0))))],
  ['whereIn', (args) => listOf(itemOf(typeOf(args, 0)))],
  ['without', (args) => listOf(itemOf(typeOf(args, 0)))],
  // A table for an e-mail body: rendered as HTML or aligned text where it is written, never read into.
  ['table', always(UNKNOWN)],
]);

/** The names of the functions typed here (a test checks that Fleetbook's own are among them). */
export const TYPED_FUNCTIONS: ReadonlySet<string> = new Set(RETURNS.keys());

/** What calling the built-in `name` with `args` returns; unknown for a function not typed here. */
export function builtinReturn(name: string, args: readonly Value[], call: CallFunction): JsonSchema {
  return RETURNS.get(name)?.(args, call) ?? UNKNOWN;
}
