/**
 * Inputs given to a playbook from inside a playbook (a schedule's `inputs`, a `uses` step's
 * `with`) checked against the inputs it declares, when the playbook loads: names it takes,
 * values its declarations accept, required ones given.
 */
import { closestMatches, didYouMean } from '../errors/index.js';
import { isRawObject, type RawObject } from './raw-steps.js';
import type { Finding } from './rules.js';
import { compileValueSchema, describePointer, type ValueValidator } from './schema-validation.js';

export interface DeclaredInput {
  name: string;
  /** The JSON Schema type, for messages. */
  type?: string;
  hasDefault: boolean;
  secret: boolean;
  /** Undefined when the declaration is not a valid schema (reported on its own). */
  validate?: ValueValidator;
}

/** `key` as a token of a JSON pointer. */
export function pointerToken(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** A validator of an input's declaration; undefined when it is no valid JSON Schema. */
export function inputValidator(schema: RawObject): ValueValidator | undefined {
  try {
    return compileValueSchema(schema);
  } catch {
    return undefined;
  }
}

export interface GivenInputs {
  code: string;
  declared: readonly DeclaredInput[];
  /** The given mapping; undefined when nothing is given. */
  given: RawObject | undefined;
  /** Where the giver is (a schedule, a step), and the key of the mapping under it. */
  pointer: string;
  key: string;
  /** Who takes the inputs: `the playbook`, `the playbook 'child'`. */
  taker: string;
  /** Names the taker in the message of a missing input too (when it is not the playbook being read). */
  nameTakerWhenMissing?: boolean;
  /** What happens when a required input is not given: `every run it starts would be refused`. */
  consequence: string;
  /** Values computed at run time: only their presence is checked. */
  isComputed?: (value: unknown) => boolean;
}

export function givenInputsFindings({
  code,
  declared,
  given,
  pointer,
  key,
  taker,
  nameTakerWhenMissing,
  consequence,
  isComputed,
}: GivenInputs): Finding[] {
  const names = declared.map(({ name }) => name);
  const takes = names.length > 0 ? `${taker} takes ${names.join(', ')}` : `${taker} takes no inputs`;
  const mapPointer = `${pointer}/${key}`;
  const values = given ?? {};
  const findings: Finding[] = [];
  // A misspelt input is one mistake: said as unknown, with its right name, not also as missing.
  const meant = new Set<string>();
  for (const name of Object.keys(values)) {
    if (names.includes(name)) continue;
    for (const match of closestMatches(name, names)) meant.add(match);
    findings.push({
      code,
      message: `unknown input '${name}' in ${describePointer(mapPointer)}: ${takes}.${didYouMean(name, names)}`,
      pointer: `${mapPointer}/${pointerToken(name)}`,
      atKey: true,
    });
  }
  for (const input of declared) {
    const value = Object.hasOwn(values, input.name) ? values[input.name] : undefined;
    if (value === undefined) {
      if (input.hasDefault || meant.has(input.name)) continue;
      const type = input.type === undefined ? '' : ` (${input.type})`;
      const of = nameTakerWhenMissing === true ? ` of ${taker}` : '';
      findings.push({
        code,
        message: `${describePointer(pointer)} does not give the input '${input.name}'${type}${of}, which has no default: ${consequence}`,
        ...(given === undefined ? { pointer } : { pointer: mapPointer, atKey: true }),
      });
      continue;
    }
    if (isComputed?.(value)) continue;
    const problems =
      input.validate?.(value, `${mapPointer}/${pointerToken(input.name)}`, { hideValues: input.secret }) ?? [];
    findings.push(...problems.map((problem): Finding => ({ ...problem, code })));
  }
  return findings;
}

/** True when the value holds a `${{ }}` anywhere: it is known only when the step runs. */
export function holdsExpression(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('${{');
  if (Array.isArray(value)) return value.some(holdsExpression);
  if (isRawObject(value)) return Object.values(value).some(holdsExpression);
  return false;
}
