/**
 * A `call`'s `with` against its operation's request schema at load, where a value is computed:
 * the playbook schema already checks what is written as it is (a literal, a literal object's
 * keys), and leaves every `${{ }}` position to the run. Here each such position whose type is
 * known (`valueTypeOf`) is held to the part of the request schema it fills, so a body built by
 * an expression without a field the platform requires is refused before the first write
 * (`INVALID_CALL_INPUT`, as the run would), at the constructor that builds it.
 */
import { inputSchemaOf, type OperationDescriptor, type PlatformDescription } from '../openapi/index.js';
import type { JsonSchema, StepRegistry } from '../steps/index.js';
import { PathTypes } from './path-types.js';
import type { ReferenceFinding } from './reference-rule.js';
import { fitProblems } from './request-fit.js';
import { describePointer } from './schema-validation.js';
import type { Playbook } from '../model/index.js';
import type { CallStep } from '../steps/index.js';
import { valueTypeOf, type ValueScope } from './value-type.js';

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function escapeToken(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** The part of `schema` a field `name` of its object fills, when the schema says so plainly. */
function fieldSchema(schema: JsonSchema, name: string): JsonSchema | undefined {
  const own = isSchema(schema.properties) ? schema.properties[name] : undefined;
  if (isSchema(own)) return own;
  return isSchema(schema.additionalProperties) ? schema.additionalProperties : undefined;
}

/** One call step's check: the step, its operation and where its expressions are typed. */
interface CallCheck {
  step: CallStep;
  op: OperationDescriptor;
  scope: ValueScope;
  findings: ReferenceFinding[];
}

/** Walks the `with` as written down to each computed value, with the schema of its place. */
function checkValue(check: CallCheck, value: unknown, pointer: string, schema: JsonSchema): void {
  if (typeof value === 'string') {
    if (value.includes('${{')) checkComputed(check, pointer, schema);
    return;
  }
  if (Array.isArray(value)) {
    if (isSchema(schema.items))
      value.forEach((item, index) => checkValue(check, item, `${pointer}/${index}`, schema.items as JsonSchema));
    return;
  }
  if (!isSchema(value)) return;
  for (const [key, item] of Object.entries(value)) {
    const inner = fieldSchema(schema, key);
    if (inner !== undefined) checkValue(check, item, `${pointer}/${escapeToken(key)}`, inner);
  }
}

function checkComputed(check: CallCheck, pointer: string, schema: JsonSchema): void {
  const { step, op, scope } = check;
  const type = valueTypeOf(step.with, scope, pointer);
  if (Object.keys(type).length === 0) return;
  const where = describePointer(pointer.slice(step.location.pointer.length));
  for (const problem of fitProblems(type, schema)) {
    check.findings.push({
      code: 'INVALID_CALL_INPUT',
      message:
        `${where}${problem.at} ${problem.message}: ${op.id} refuses this request, so the step would fail when it runs ` +
        `(\`fleetbook actions ${op.id}\` describes its input)`,
      pointer,
      ...(problem.builtAt === undefined ? {} : { offsetInValue: problem.builtAt, lengthInValue: 1 }),
    });
  }
}

/** `INVALID_CALL_INPUT` findings of every `call` step whose computed `with` values certainly do not fit its operation. */
export function callInputRule(
  playbook: Playbook,
  registry: StepRegistry,
  description: PlatformDescription,
): ReferenceFinding[] {
  const types = PathTypes.of(playbook, registry, description);
  const findings: ReferenceFinding[] = [];
  for (const [step, loops] of types.loopsAt) {
    if (step.kind !== 'call') continue;
    const call = step as CallStep;
    const op = description.byId.get(call.operationId);
    if (op === undefined || call.with.isStatic) continue;
    const check: CallCheck = { step: call, op, scope: { types, loops }, findings };
    checkValue(check, call.with.source, call.with.pointer, inputSchemaOf(op));
  }
  return findings;
}
