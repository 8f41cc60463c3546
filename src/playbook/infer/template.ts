/**
 * Inference over a whole template (a playbook value that may hold `${{ }}`): the type of its
 * value, and every field read of its expressions that cannot exist, located in its string value.
 */
import type { Template, TemplateExpression, TemplateShape } from '../../expressions/index.js';
import { closedObject, typeOfLiteral, UNKNOWN, type JsonSchema } from '../../steps/index.js';
import { Inferrer } from './inferrer.js';
import { joinTypes, listOf, type AstNode, type FieldMiss, type InferScope } from './values.js';

/** A field read that cannot exist, in a template: the string value holding it and the name's place in it. */
export interface TemplateMiss {
  pointer: string;
  offsetInValue: number;
  lengthInValue: number;
  message: string;
}

/**
 * One expression's inference: its type and its misses. An expression nested deeper than the
 * stack allows (JSONata parsed it, the walk of inference runs out) is of unknown type with no
 * miss: silent, never a crash of validate.
 */
function inferExpression(expression: TemplateExpression, scope: InferScope): { type: JsonSchema; misses: FieldMiss[] } {
  const inferrer = new Inferrer(scope, expression.text);
  try {
    const type = inferrer.run(expression.ast as unknown as AstNode);
    return { type, misses: [...inferrer.misses.values()] };
  } catch (error) {
    if (error instanceof RangeError) return { type: UNKNOWN, misses: [] };
    throw error;
  }
}

function typeOfShape(shape: TemplateShape, scope: InferScope): JsonSchema {
  switch (shape.kind) {
    case 'static':
      return typeOfLiteral(shape.value);
    case 'whole':
      return inferExpression(shape.expression, scope).type;
    case 'interpolation':
      return { type: 'string' };
    case 'array':
      return listOf(
        shape.items.length === 0 ? UNKNOWN : joinTypes(shape.items.map((item) => typeOfShape(item, scope))),
      );
    case 'object':
      return closedObject(Object.fromEntries(shape.entries.map(([key, item]) => [key, typeOfShape(item, scope)])));
  }
}

/** The part of `shape` at `tokens` (object keys, array indexes), or undefined where it has none. */
function shapeAt(shape: TemplateShape, tokens: readonly string[]): TemplateShape | undefined {
  let current: TemplateShape | undefined = shape;
  for (const token of tokens) {
    if (current?.kind === 'object') current = current.entries.find(([key]) => key === token)?.[1];
    else if (current?.kind === 'array') current = current.items[Number(token)];
    else return undefined;
  }
  return current;
}

/**
 * The type of the part of a template's value at `tokens` (JSON pointer tokens under the
 * template's own pointer): a `call`'s `with.body.storage`, say. Unknown where it has no such part.
 */
export function inferPartType(template: Template, tokens: readonly string[], scope: InferScope): JsonSchema {
  if (tokens.length === 0) return inferTemplateType(template, scope);
  if (template.isStatic) return UNKNOWN;
  const part = shapeAt(template.shape(), tokens);
  return part === undefined ? UNKNOWN : typeOfShape(part, scope);
}

/**
 * The type of a template's value, from the types of the names its expressions read: literals as
 * written, text a string, an expression's value its inferred type; unknown (`{}`) where it cannot
 * be told. What request typing checks a computed value against.
 */
export function inferTemplateType(template: Template | undefined, scope: InferScope): JsonSchema {
  if (template === undefined) return UNKNOWN;
  if (template.isStatic) return typeOfLiteral(template.source);
  return typeOfShape(template.shape(), scope);
}

function expressionsOf(shape: TemplateShape, into: Array<{ pointer: string; expression: TemplateExpression }>): void {
  switch (shape.kind) {
    case 'static':
      return;
    case 'whole':
      into.push({ pointer: shape.pointer, expression: shape.expression });
      return;
    case 'interpolation':
      for (const expression of shape.expressions) into.push({ pointer: shape.pointer, expression });
      return;
    case 'array':
      for (const item of shape.items) expressionsOf(item, into);
      return;
    case 'object':
      for (const [, item] of shape.entries) expressionsOf(item, into);
      return;
  }
}

/** Every field read of the template's expressions that cannot exist, in the order written. */
export function fieldMisses(template: Template | undefined, scope: InferScope): TemplateMiss[] {
  if (template === undefined || template.isStatic) return [];
  const found: Array<{ pointer: string; expression: TemplateExpression }> = [];
  expressionsOf(template.shape(), found);
  return found.flatMap(({ pointer, expression }) =>
    inferExpression(expression, scope)
      .misses.sort((a, b) => a.offset - b.offset)
      .map((miss) => ({
        pointer,
        offsetInValue: expression.offset + miss.offset,
        lengthInValue: miss.length,
        message: miss.message,
      })),
  );
}
