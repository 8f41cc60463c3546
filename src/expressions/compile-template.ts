import jsonata from 'jsonata';
import { ExpressionError, ExpressionErrorCode, type ExpressionWhere } from './expression-error.js';
import {
  ALLOCATION_LIMITS,
  AllocationLimitError,
  checkDirectResult,
  guardAllocations,
  JSONATA_LIMIT_CODES,
} from './allocation-limits.js';
import { directEvaluator, NEEDS_JSONATA, type DirectEvaluator } from './direct-evaluation.js';
import { isTableValue, registerExtraFunctions, tableText } from './functions.js';
import { plainPathAst } from './plain-path.js';
import { parseDetached } from './detached-ast.js';
import { normaliseValue, UnsafeValueError } from './normalise.js';
import { findReferences } from './references.js';
import { taintTrackerOf } from './taint.js';
import type { ExpressionContext, ReferenceSite, Template, TemplateShape } from '../model/index.js';

/**
 * Guardrails of one evaluation: JSONata stops an expression that recurses deeper than this, the
 * allocation limits one that evaluates too many parts (a runaway `$eval` or recursive lambda must
 * not hang a run) or builds a value too large (an expression must not exhaust memory).
 */
export const EXPRESSION_LIMITS = { stackDepth: 500, ...ALLOCATION_LIMITS } as const;

const OPEN = '${{';
const CLOSE = '}}';

interface CompiledExpression {
  /** Text between `${{` and `}}`. */
  text: string;
  /** Offset of `text` in the string value. */
  offset: number;
  /** Its syntax tree, as JSONata's parser makes it. */
  ast: jsonata.ExprNode;
  /** Its JSONata expression, made once (on first use for a plain path: see `plainPathAst`). */
  jsonata(): jsonata.Expression;
  /** Top-level names it reads (with the member under `inputs`/`steps`): what taint tracking looks at. */
  reads?: Array<{ root: string; member?: string }>;
  /** Evaluates it without JSONata when it is one of the simple forms (`system.region`, `n * 2`): see `directEvaluator`. */
  direct?: DirectEvaluator;
}

type Node =
  | { kind: 'static'; value: unknown }
  | { kind: 'whole'; where: ExpressionWhere; compiled: CompiledExpression }
  | { kind: 'interpolation'; where: ExpressionWhere; parts: Array<string | CompiledExpression> }
  | { kind: 'array'; items: Node[] }
  | { kind: 'object'; entries: Array<[string, Node]> };

interface Segment {
  text: string;
  offset: number;
}

/** Outcome of `tryCompileTemplate`: a template when every expression parsed, and every error found. */
export interface TemplateCompilation {
  template?: Template;
  errors: ExpressionError[];
}

function escapePointerToken(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

function jsonataPosition(error: unknown, textLength: number): { position: number; code?: string; message: string } {
  const details = (typeof error === 'object' && error !== null ? error : {}) as {
    position?: unknown;
    code?: unknown;
    message?: unknown;
  };
  const rawPosition = typeof details.position === 'number' ? details.position : 1;
  return {
    // JSONata counts from 1 to the end of the offending token.
    position: Math.min(Math.max(rawPosition - 1, 0), Math.max(textLength - 1, 0)),
    ...(typeof details.code === 'string' ? { code: details.code } : {}),
    message: typeof details.message === 'string' ? details.message : String(error),
  };
}

/** Characters that end an operand (a name, number, string, call or group). */
const OPERAND_END = /[\w$)\]}"'`.]/;

/**
 * Splits a string at its `${{ }}` markers. The end of an expression is the first `}}` outside
 * string literals, back-quoted names and JSONata's own braces, so `${{ {"a": {"b": 1}} }}` works.
 */
function splitTemplate(value: string, where: ExpressionWhere, errors: ExpressionError[]): Array<string | Segment> {
  const parts: Array<string | Segment> = [];
  let cursor = 0;
  while (cursor < value.length) {
    const open = value.indexOf(OPEN, cursor);
    if (open === -1) break;
    if (open > cursor) parts.push(value.slice(cursor, open));
    const start = open + OPEN.length;
    let depth = 0;
    let quote: string | undefined;
    let end = -1;
    // The last character that is not white space: a `/` after an operand divides, anywhere
    // else it opens a regex literal, whose quotes are not strings.
    let previous = '';
    for (let index = start; index < value.length; index += 1) {
      const char = value[index] ?? '';
      if (quote !== undefined) {
        if (char === '\\') index += 1;
        else if (char === quote) {
          quote = undefined;
          previous = char;
        }
        continue;
      }
      if (char === '/' && !OPERAND_END.test(previous)) quote = '/';
      else if (char === '"' || char === "'" || char === '`') quote = char;
      else if (char === '{') depth += 1;
      else if (char === '}' && depth > 0) depth -= 1;
      else if (char === '}' && value.startsWith(CLOSE, index)) {
        end = index;
        break;
      }
      if (!/\s/.test(char)) previous = char;
    }
    if (end === -1) {
      const text = value.slice(start);
      errors.push(
        new ExpressionError("'${{' has no closing '}}'", {
          code: ExpressionErrorCode.parse,
          where,
          expression: text,
          position: 0,
          offsetInValue: open,
        }),
      );
      return parts;
    }
    parts.push({ text: value.slice(start, end), offset: start });
    cursor = end + CLOSE.length;
  }
  if (cursor < value.length) parts.push(value.slice(cursor));
  return parts;
}

/** JSONata's expression of `text`, with Fleetbook's functions and guardrails. Throws when it does not parse. */
function jsonataExpression(text: string): jsonata.Expression {
  const expression = jsonata(text, { stack: EXPRESSION_LIMITS.stackDepth, sequence: EXPRESSION_LIMITS.maxItems });
  registerExtraFunctions(expression);
  guardAllocations(expression);
  return expression;
}

function compileExpression(
  segment: Segment,
  where: ExpressionWhere,
  errors: ExpressionError[],
): CompiledExpression | undefined {
  if (segment.text.trim() === '') {
    errors.push(
      new ExpressionError('the expression is empty', {
        code: ExpressionErrorCode.parse,
        where,
        expression: segment.text,
        position: 0,
        offsetInValue: segment.offset,
      }),
    );
    return undefined;
  }
  // A plain path needs no parse by JSONata, which always succeeds on one. Any expression's
  // JSONata expression is made when an evaluation first needs it: validate never does, and the
  // parse kept here is a copy that holds nothing of JSONata's parser (see detachedAst).
  const pathAst = plainPathAst(segment.text);
  try {
    const ast = pathAst ?? parseDetached(segment.text);
    let expression: jsonata.Expression | undefined;
    const direct = directEvaluator(ast);
    return {
      text: segment.text,
      offset: segment.offset,
      ast,
      jsonata: () => (expression ??= jsonataExpression(segment.text)),
      ...(direct ? { direct } : {}),
    };
  } catch (error) {
    const { position, code, message } = jsonataPosition(error, segment.text.length);
    errors.push(
      new ExpressionError(message, {
        code: ExpressionErrorCode.parse,
        where,
        expression: segment.text,
        position,
        offsetInValue: segment.offset + position,
        ...(code === undefined ? {} : { jsonataCode: code }),
        cause: error,
      }),
    );
    return undefined;
  }
}

function compileString(value: string, where: ExpressionWhere, errors: ExpressionError[]): Node {
  if (!value.includes(OPEN)) return { kind: 'static', value };
  const before = errors.length;
  const parts = splitTemplate(value, where, errors).map((part) =>
    typeof part === 'string' ? part : compileExpression(part, where, errors),
  );
  if (errors.length > before) return { kind: 'static', value };
  const compiled = parts as Array<string | CompiledExpression>;
  const expressions = compiled.filter((part): part is CompiledExpression => typeof part !== 'string');
  const onlyWhitespaceAround = compiled.every((part) => typeof part !== 'string' || part.trim() === '');
  const [single] = expressions;
  if (expressions.length === 1 && single !== undefined && onlyWhitespaceAround)
    return { kind: 'whole', where, compiled: single };
  return { kind: 'interpolation', where, parts: compiled };
}

function compileNode(value: unknown, where: ExpressionWhere, errors: ExpressionError[]): Node {
  if (typeof value === 'string') return compileString(value, where, errors);
  if (Array.isArray(value)) {
    const items = value.map((item: unknown, index) =>
      compileNode(item, { ...where, pointer: `${where.pointer}/${index}` }, errors),
    );
    return items.every((item) => item.kind === 'static') ? { kind: 'static', value } : { kind: 'array', items };
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>).map(([key, item]): [string, Node] => [
      key,
      compileNode(item, { ...where, pointer: `${where.pointer}/${escapePointerToken(key)}` }, errors),
    ]);
    return entries.every(([, item]) => item.kind === 'static')
      ? { kind: 'static', value }
      : { kind: 'object', entries };
  }
  return { kind: 'static', value };
}

function collectExpressions(node: Node, into: Array<{ compiled: CompiledExpression; where: ExpressionWhere }>): void {
  switch (node.kind) {
    case 'static':
      return;
    case 'whole':
      into.push({ compiled: node.compiled, where: node.where });
      return;
    case 'interpolation':
      for (const part of node.parts) if (typeof part !== 'string') into.push({ compiled: part, where: node.where });
      return;
    case 'array':
      for (const item of node.items) collectExpressions(item, into);
      return;
    case 'object':
      for (const [, item] of node.entries) collectExpressions(item, into);
      return;
  }
}

/** An evaluation's failure as an `ExpressionError` (a function of its own: no closure made per evaluation). */
function evaluationError(
  compiled: CompiledExpression,
  where: ExpressionWhere,
  message: string,
  position: number,
  error: unknown,
  code?: string,
): ExpressionError {
  return new ExpressionError(message, {
    code:
      error instanceof AllocationLimitError || (code !== undefined && JSONATA_LIMIT_CODES.has(code))
        ? ExpressionErrorCode.limit
        : ExpressionErrorCode.evaluation,
    where,
    expression: compiled.text,
    position,
    offsetInValue: compiled.offset + position,
    ...(code === undefined ? {} : { jsonataCode: code }),
    cause: error,
  });
}

async function evaluateExpression(
  compiled: CompiledExpression,
  where: ExpressionWhere,
  context: ExpressionContext,
): Promise<unknown> {
  let raw: unknown = compiled.direct ? compiled.direct(context) : NEEDS_JSONATA;
  try {
    if (raw === NEEDS_JSONATA) raw = await compiled.jsonata().evaluate(context);
    else checkDirectResult(raw);
  } catch (error) {
    const { position, code, message } = jsonataPosition(error, compiled.text.length);
    throw evaluationError(compiled, where, message, position, error, code);
  }
  let value: unknown;
  try {
    value = normaliseValue(raw);
  } catch (error) {
    if (error instanceof UnsafeValueError) throw evaluationError(compiled, where, error.message, 0, error);
    throw error;
  }
  const tracker = taintTrackerOf(context);
  if (tracker !== undefined && tracker.readsSecret(compiled.reads ?? [])) tracker.taint(value, where.stepId);
  return value;
}

/** The secret registry redacts no value shorter than this (logging's `SecretRegistry.add`): such parts are spelled out. */
const SHORTEST_REDACTED = 4;

/**
 * The span of a text from its first part computed from a secret to its last is secret whole
 * when one of those parts is too short to be redacted by value:
 * `${{ $substring(inputs.token, 0, 1) }} ${{ $substring(inputs.token, 1, 1) }} ...` spelled the
 * secret out one character a part, joined with spaces. Parts long enough are redacted each
 * (`b64 [REDACTED], upper [REDACTED]` keeps its words).
 */
function taintInterpolation(
  parts: ReadonlyArray<string | CompiledExpression>,
  texts: readonly string[],
  where: ExpressionWhere,
  context: ExpressionContext,
): void {
  const tracker = taintTrackerOf(context);
  if (tracker === undefined) return;
  const tainted = parts.flatMap((part, index) =>
    typeof part !== 'string' && tracker.readsSecret(part.reads ?? []) ? [index] : [],
  );
  const short = tainted.some((index) => {
    const length = texts[index]?.length ?? 0;
    return length > 0 && length < SHORTEST_REDACTED;
  });
  const [first] = tainted;
  const last = tainted.at(-1);
  if (short && first !== undefined && last !== undefined)
    tracker.taint(texts.slice(first, last + 1).join(''), where.stepId);
}

/** How a value sits inside a string: text as is, nothing for null/undefined, JSON for the rest. */
export function stringify(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  // `$table()` inside text reads as aligned columns, not as the JSON that marks it.
  if (isTableValue(value)) return tableText(value);
  return JSON.stringify(value);
}

/**
 * A string template as text, each expression's value written by `format` (the `email` step
 * escapes values for Markdown, and renders a `$table()` once per part of the message).
 */
async function renderNode(node: Node, context: ExpressionContext, format: (value: unknown) => string): Promise<string> {
  switch (node.kind) {
    case 'static':
      return typeof node.value === 'string' ? node.value : format(node.value);
    case 'whole':
      return format(await evaluateExpression(node.compiled, node.where, context));
    case 'interpolation': {
      const texts = await Promise.all(
        node.parts.map(async (part) =>
          typeof part === 'string' ? part : format(await evaluateExpression(part, node.where, context)),
        ),
      );
      return texts.join('');
    }
    default:
      return format(await evaluateNode(node, context));
  }
}

async function evaluateNode(node: Node, context: ExpressionContext): Promise<unknown> {
  switch (node.kind) {
    case 'static':
      return node.value;
    case 'whole':
      return evaluateExpression(node.compiled, node.where, context);
    case 'interpolation': {
      const texts = await Promise.all(
        node.parts.map(async (part) =>
          typeof part === 'string' ? part : stringify(await evaluateExpression(part, node.where, context)),
        ),
      );
      taintInterpolation(node.parts, texts, node.where, context);
      return texts.join('');
    }
    case 'array': {
      const items = await Promise.all(node.items.map((item) => evaluateNode(item, context)));
      return items.map((item) => item ?? null);
    }
    case 'object': {
      const result: Record<string, unknown> = {};
      for (const [key, item] of node.entries) {
        // A static member, or one expression, needs no call of its own (and no promise) around it.
        const value =
          item.kind === 'static'
            ? item.value
            : item.kind === 'whole'
              ? await evaluateExpression(item.compiled, item.where, context)
              : await evaluateNode(item, context);
        if (value !== undefined) result[key] = value;
      }
      return result;
    }
  }
}

/** The public shape of a compiled node: what the loader's type inference reads. */
function shapeOf(node: Node): TemplateShape {
  switch (node.kind) {
    case 'static':
      return node;
    case 'whole':
      return { kind: 'whole', pointer: node.where.pointer, expression: node.compiled };
    case 'interpolation':
      return {
        kind: 'interpolation',
        pointer: node.where.pointer,
        expressions: node.parts.filter((part): part is CompiledExpression => typeof part !== 'string'),
      };
    case 'array':
      return { kind: 'array', items: node.items.map(shapeOf) };
    case 'object':
      return { kind: 'object', entries: node.entries.map(([key, item]) => [key, shapeOf(item)] as const) };
  }
}

/**
 * What an expression reads; undefined, with a located error, for one nested deeper than the
 * walk's stack (JSONata parsed it, thousands of operators deep): refused, never a crash.
 */
function referencesOrError(
  compiled: CompiledExpression,
  where: ExpressionWhere,
  errors: ExpressionError[],
): ReturnType<typeof findReferences> | undefined {
  try {
    return findReferences(compiled.ast, compiled.text);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    errors.push(
      new ExpressionError('the expression nests too deeply to be checked: split it into `set` values or steps', {
        code: ExpressionErrorCode.parse,
        where,
        expression: compiled.text,
        position: 0,
        offsetInValue: compiled.offset,
      }),
    );
    return undefined;
  }
}

/**
 * Compiles every `${{ }}` in a playbook value, collecting every expression that does not
 * parse instead of stopping at the first (the loader reports all problems in one pass).
 */
export function tryCompileTemplate(value: unknown, where: ExpressionWhere): TemplateCompilation {
  const errors: ExpressionError[] = [];
  const root = compileNode(value, where, errors);
  if (errors.length > 0) return { errors };
  const expressions: Array<{ compiled: CompiledExpression; where: ExpressionWhere }> = [];
  collectExpressions(root, expressions);
  const roots = new Set<string>();
  const steps = new Set<string>();
  const references: ReferenceSite[] = [];
  const single = root.kind === 'whole';
  let readsWholeContext = false;
  for (const { compiled, where: at } of expressions) {
    const found = referencesOrError(compiled, at, errors);
    if (found === undefined) continue;
    compiled.reads = found.occurrences.map((occurrence) => ({
      root: occurrence.root,
      ...(occurrence.member === undefined ? {} : { member: occurrence.member }),
    }));
    readsWholeContext ||= found.readsWholeContext;
    for (const name of found.roots) roots.add(name);
    for (const id of found.steps) steps.add(id);
    for (const occurrence of found.occurrences) {
      references.push({
        root: occurrence.root,
        pointer: at.pointer,
        rootOffset: compiled.offset + occurrence.rootOffset,
        ...(occurrence.member === undefined
          ? {}
          : { member: occurrence.member, memberOffset: compiled.offset + (occurrence.memberOffset ?? 0) }),
        path: occurrence.path.map((segment) => ({ ...segment, offset: compiled.offset + segment.offset })),
        entire: single && occurrence.entire,
      });
    }
  }
  if (errors.length > 0) return { errors };
  let shape: TemplateShape | undefined;
  const template: Template = {
    source: value,
    pointer: where.pointer,
    isStatic: root.kind === 'static',
    stepReferences: [...steps],
    rootReferences: [...roots],
    references,
    ...(readsWholeContext ? { readsWholeContext } : {}),
    evaluate: (context) => evaluateNode(root, context),
    render: (context, format) => renderNode(root, context, format),
    shape: () => (shape ??= shapeOf(root)),
  };
  return { template, errors };
}

/**
 * Compiles a playbook value into a `Template`, once per playbook load. Strings hold
 * `${{ expr }}` (JSONata); a string that is one expression (whitespace around it allowed)
 * keeps the value's type, others are strings. Throws the first `ExpressionError`
 * (`EXPRESSION_PARSE`) when an expression does not parse.
 */
export function compileTemplate(value: unknown, where: ExpressionWhere): Template {
  const { template, errors } = tryCompileTemplate(value, where);
  const [first] = errors;
  if (first !== undefined || template === undefined) throw first;
  return template;
}
