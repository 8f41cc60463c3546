/**
 * A playbook file parsed with positions: YAML problems as they are found, the plain data,
 * and a way back from a JSON pointer to `line:column`.
 */
import {
  isAlias,
  isCollection,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  type Document,
  type Node,
} from 'yaml';
import type { Problem } from './problem.js';

/** Aliases beyond this are refused (a "billion laughs" document expands without bound). */
export const MAX_ALIAS_COUNT = 100;

/**
 * Most mappings and lists one inside another (aliases expanded). The checks that follow
 * (schema validation, rules) recurse once per level; a deeper document is refused before any
 * of them runs, so nesting cannot overflow the stack.
 */
export const MAX_NESTING_DEPTH = 32;

export interface Position {
  line: number;
  column: number;
}

/** A place in the file: 1-based line and column, and the 0-based offset in the text. */
export interface Place extends Position {
  offset: number;
}

/** Where to point in a value: the key instead, or a span of a string value (a name inside an expression). */
export interface LocateOptions {
  key?: boolean;
  offsetInValue?: number;
  lengthInValue?: number;
}

export interface SourceDocument {
  file: string;
  text: string;
  /**
   * The document as plain data; undefined when it could not be built. Built despite
   * recoverable errors (a duplicate key, a bad escape...), so the rest is checked too.
   */
  data: unknown;
  problems: Problem[];
  /** Where the value at `pointer` starts; `key: true` points at the key of a mapping entry instead. */
  locate(pointer: string, options?: LocateOptions): Position;
  /** The span of the value at `pointer` (or of the part of it the options name), for editors to underline. */
  span(pointer: string, options?: LocateOptions): { start: Place; end: Place };
}

export function splitPointer(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/**
 * YAML errors after which the document is still the one meant: its structure is intact, one
 * value is off. The playbook is then checked as well, so one mistake does not hide the others.
 */
const RECOVERABLE_YAML_ERRORS: ReadonlySet<string> = new Set(['BAD_DQ_ESCAPE', 'MULTIPLE_DOCS', 'TAG_RESOLVE_FAILED']);

/** yaml's message, or one a playbook's author reads better where yaml's speaks to a programmer. */
function yamlMessage(code: string, message: string): string {
  const first = message.split('\n')[0] ?? message;
  if (code === 'MULTIPLE_DOCS')
    return 'a playbook file holds one YAML document: this `---` starts a second one, which is not read';
  if (code === 'BAD_DQ_ESCAPE')
    return `${first}: in a double-quoted string a backslash starts an escape; write \\\\ for a backslash, or use single quotes`;
  return first;
}

/** yaml's codes for a structure broken by indentation (a line further in or out than it belongs). */
const INDENTATION_ERRORS: ReadonlySet<string> = new Set([
  'BAD_INDENT',
  'MISSING_CHAR',
  'MULTILINE_IMPLICIT_KEY',
  'BLOCK_AS_IMPLICIT_KEY',
  'UNEXPECTED_TOKEN',
]);

/** A value that starts `${{` unquoted: YAML reads its `: ` and `{` as structure, not text. */
const UNQUOTED_EXPRESSION = /^(\s*(?:-\s+)?(?:[^\s'"#][^:#]*:\s+|-\s+))(\$\{\{.*\}\})\s*(?:#.*)?$/;

const indentOf = (line: string): number => line.length - line.trimStart().length;

/**
 * yaml's errors as an author can act on them. One mistake often gives several errors (an
 * unquoted `${{ a ? b : c }}` gives three on its line; one line indented wrong gives an error
 * on each line after it): each mistake is reported once, with the fix it needs.
 */
function explainYamlErrors(
  errors: readonly { code: string; message: string; line: number; column: number }[],
  text: string,
): Array<{ code: string; message: string; line: number; column: number }> {
  const lines = text.split('\n');
  const explained: Array<{ code: string; message: string; line: number; column: number }> = [];
  let indentationReported = false;
  const quotedLines = new Set<number>();
  for (const error of errors) {
    const source = lines[error.line - 1] ?? '';
    const unquoted = UNQUOTED_EXPRESSION.exec(source);
    if (unquoted && unquoted[1] !== undefined && unquoted[2] !== undefined) {
      if (quotedLines.has(error.line)) continue;
      quotedLines.add(error.line);
      const expression = unquoted[2];
      const quote = expression.includes('"') ? "'" : '"';
      explained.push({
        code: 'YAML_UNQUOTED_EXPRESSION',
        message: `this \${{ }} is not quoted, so YAML reads its ': ', '{' and '}' as structure rather than text: quote the whole value, e.g. ${quote}${expression}${quote}`,
        line: error.line,
        column: unquoted[1].length + 1,
      });
      continue;
    }
    if (INDENTATION_ERRORS.has(error.code)) {
      // The errors after the first indentation slip mostly follow from it: one message, the fix in it.
      if (indentationReported) continue;
      indentationReported = true;
      explained.push({
        ...error,
        message: `${error.message.replace(/\.$/, '')}. ${indentationHint(lines, error.line)}`,
      });
      continue;
    }
    explained.push(error);
  }
  return explained;
}

/**
 * Which lines to compare: a list item with the item before it in the list, any other line
 * with the line above it. Named with both columns, so the fix is to move one of them.
 */
function indentationHint(lines: readonly string[], lineNumber: number): string {
  const source = lines[lineNumber - 1] ?? '';
  const isItem = (text: string): boolean => /^\s*- /.test(text) || /^\s*-$/.test(text);
  let above = lineNumber - 2;
  while (
    above >= 0 &&
    ((lines[above] ?? '').trim() === '' ||
      (lines[above] ?? '').trimStart().startsWith('#') ||
      (isItem(source) && !isItem(lines[above] ?? '') && indentOf(lines[above] ?? '') >= indentOf(source)))
  )
    above -= 1;
  if (above < 0) return 'Check the indentation of this line.';
  const what = isItem(source) && isItem(lines[above] ?? '') ? 'the list item on line' : 'line';
  return `Check the indentation: this line starts at column ${indentOf(source) + 1}, ${what} ${above + 1} at column ${indentOf(lines[above] ?? '') + 1}; items of one list, and keys of one mapping, start at the same column.`;
}

function pointerToken(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * Keys written twice in one mapping, each named with where it first appeared (yaml's own
 * "Map keys must be unique" names neither). The later value is the one the data holds.
 */
function duplicateKeys(document: Document, file: string, position: (offset: number) => Position): Problem[] {
  const problems: Problem[] = [];
  const walk = (node: unknown, pointer: string): void => {
    if (isSeq(node)) {
      node.items.forEach((item, index) => walk(item, `${pointer}/${index}`));
      return;
    }
    if (!isMap(node)) return;
    const first = new Map<string, Position>();
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const key = pair.key;
      if (isScalar(key) && key.range) {
        const name = String(key.value);
        const at = position(key.range[0]);
        const earlier = first.get(name);
        if (earlier === undefined) first.set(name, at);
        else {
          problems.push({
            code: 'YAML_DUPLICATE_KEY',
            message: `the key '${name}' is written twice in this mapping, first at line ${earlier.line}, column ${earlier.column}: keep one (the later value would silently replace the earlier)`,
            severity: 'error',
            file,
            ...at,
            pointer: `${pointer}/${pointerToken(name)}`,
          });
        }
        walk(pair.value, `${pointer}/${pointerToken(name)}`);
      }
    }
  };
  walk(document.contents, '');
  return problems;
}

/** `__proto__`, `constructor`, `toString`, `hasOwnProperty`... and `prototype`: names plain objects answer without holding them. */
function isInheritedName(key: unknown): boolean {
  return typeof key === 'string' && (key in Object.prototype || key === 'prototype');
}

/**
 * Shapes the data cannot be built from, found without recursion: nesting deeper than
 * `MAX_NESTING_DEPTH`, an alias inside the node it names (the data would contain itself), a
 * mapping key that is a list or a mapping (JavaScript object keys are text), and a key that
 * names what every JavaScript object inherits (checks by `in` or schema validators would take
 * it for known, and `__proto__` would be dropped from a value).
 */
function structureProblems(document: Document, file: string, position: (offset: number) => Position): Problem[] {
  const problems: Problem[] = [];
  const at = (node: { range?: [number, number, number] | null | undefined }): Position =>
    node.range ? position(node.range[0]) : { line: 1, column: 1 };
  const problem = (
    code: string,
    message: string,
    node: { range?: [number, number, number] | null | undefined },
  ): void => {
    problems.push({ code, message, severity: 'error', file, ...at(node), pointer: '' });
  };
  // Depth-first with an explicit stack; `exit` entries take a node off the path of ancestors.
  // A node reached again (through an alias) is walked again only when reached deeper than before.
  const deepest = new Map<unknown, number>();
  const ancestors = new Set<unknown>();
  const stack: Array<{ node: unknown; depth: number; exit?: boolean }> = [{ node: document.contents, depth: 0 }];
  let tooDeep = false;
  while (stack.length > 0) {
    const { node, depth, exit } = stack.pop() as { node: unknown; depth: number; exit?: boolean };
    if (exit) {
      ancestors.delete(node);
      continue;
    }
    if (isAlias(node)) {
      const target = node.resolve(document);
      if (target !== undefined && ancestors.has(target)) {
        problem(
          'YAML_ALIAS_CYCLE',
          `the alias *${node.source} is inside the node &${node.source} it names: the value would contain itself without end`,
          node,
        );
        continue;
      }
      if (target !== undefined) stack.push({ node: target, depth });
      continue;
    }
    if (!isCollection(node)) continue;
    if (depth >= MAX_NESTING_DEPTH) {
      if (!tooDeep)
        problem(
          'NESTING_TOO_DEEP',
          `mappings and lists are nested more than ${MAX_NESTING_DEPTH} deep here; a playbook may nest at most ${MAX_NESTING_DEPTH}`,
          node,
        );
      tooDeep = true;
      continue;
    }
    if ((deepest.get(node) ?? -1) >= depth) continue;
    deepest.set(node, depth);
    ancestors.add(node);
    stack.push({ node, depth, exit: true });
    for (const item of node.items as unknown[]) {
      if (isPair(item)) {
        if (isCollection(item.key))
          problem(
            'YAML_COLLECTION_KEY',
            'a mapping key is a list or a mapping; keys are plain text such as `name`',
            item.key,
          );
        else if (isScalar(item.key) && isInheritedName(item.key.value)) {
          problem(
            'RESERVED_KEY',
            `the key '${String(item.key.value)}' is a name every JavaScript object has built in: it could be taken for the built-in one (a field, an input, a key of a value), so it is refused; use another name`,
            item.key,
          );
        } else stack.push({ node: item.key, depth: depth + 1 });
        stack.push({ node: item.value, depth: depth + 1 });
      } else stack.push({ node: item, depth: depth + 1 });
    }
  }
  return problems;
}

/**
 * Where an alias limit was passed: the anchored node whose aliases are most used (yaml's own
 * error names no place).
 */
function mostUsedAnchor(
  document: Document,
): { name: string; uses: number; node: { range?: [number, number, number] | null | undefined } } | undefined {
  const uses = new Map<string, { count: number; first: Node }>();
  const anchored = new Map<string, Node>();
  const stack: unknown[] = [document.contents];
  while (stack.length > 0) {
    const node = stack.pop();
    if (isAlias(node)) {
      const entry = uses.get(node.source);
      if (entry) entry.count += 1;
      else uses.set(node.source, { count: 1, first: node });
      continue;
    }
    if (isScalar(node) || isCollection(node)) {
      if (node.anchor !== undefined && !anchored.has(node.anchor)) anchored.set(node.anchor, node);
    }
    if (isCollection(node))
      for (const item of node.items as unknown[]) stack.push(...(isPair(item) ? [item.key, item.value] : [item]));
  }
  let best: [string, { count: number; first: Node }] | undefined;
  for (const entry of uses) if (best === undefined || entry[1].count > best[1].count) best = entry;
  if (best === undefined) return undefined;
  return { name: best[0], uses: best[1].count, node: anchored.get(best[0]) ?? best[1].first };
}

/**
 * Where `[`/`{` flow collections, counted through the text, first nest more than
 * `MAX_NESTING_DEPTH` deep. The YAML parser recurses once per flow level, so this is checked on
 * the text, before parsing: thousands of `[` would overflow its stack. Quoted scalars and
 * comments are skipped; brackets inside plain text (an expression's) are counted, which can
 * only err towards refusing text nested that deep anyway.
 */
function tooDeepFlowOffset(text: string): number | undefined {
  let depth = 0;
  let quote: string | undefined;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (quote !== undefined) {
      if (quote === '"' && char === '\\') index += 1;
      else if (char === quote) {
        if (quote === "'" && text[index + 1] === "'") index += 1;
        else quote = undefined;
      }
      continue;
    }
    const previous = index === 0 ? '\n' : (text[index - 1] ?? '\n');
    if (char === '#' && /\s/.test(previous)) {
      const end = text.indexOf('\n', index);
      index = end === -1 ? text.length : end;
    } else if ((char === '"' || char === "'") && /[\s[{,:]/.test(previous)) quote = char;
    else if (char === '[' || char === '{') {
      depth += 1;
      if (depth > MAX_NESTING_DEPTH) return index;
    } else if ((char === ']' || char === '}') && depth > 0) depth -= 1;
  }
  return undefined;
}

export function parseSourceDocument(file: string, text: string): SourceDocument {
  const tooDeepAt = tooDeepFlowOffset(text);
  if (tooDeepAt !== undefined) return tooDeepDocument(file, text, tooDeepAt);
  const lineCounter = new LineCounter();
  // Duplicate keys are found by duplicateKeys, which says where the first one is.
  const document: Document = parseDocument(text, { lineCounter, uniqueKeys: false, prettyErrors: false, strict: true });
  const position = (offset: number): Position => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  const problems: Problem[] = [
    ...duplicateKeys(document, file, position),
    ...yamlProblems(document, file, text, position),
  ];
  let data: unknown;
  if (document.errors.every((error) => RECOVERABLE_YAML_ERRORS.has(error.code))) {
    const structural = structureProblems(document, file, position);
    problems.push(...structural);
    if (structural.length === 0) {
      try {
        data = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
      } catch {
        // yaml's alias-count error: the only one toJS throws once the structure is checked.
        problems.push(aliasLimitProblem(document, file, position));
      }
    }
  }
  const span = (pointer: string, options: LocateOptions = {}): { start: Place; end: Place } =>
    spanOf(document, text, position, pointer, options);
  const locate = (pointer: string, options: LocateOptions = {}): Position => {
    const { line, column } = span(pointer, options).start;
    return { line, column };
  };
  return { file, text, data, problems, locate, span };
}

/** A text nested too deep to parse: one problem where the nesting goes over, and no data. */
function tooDeepDocument(file: string, text: string, tooDeepAt: number): SourceDocument {
  const lines = text.slice(0, tooDeepAt).split('\n');
  const problem: Problem = {
    code: 'NESTING_TOO_DEEP',
    message: `lists and mappings written in brackets are nested more than ${MAX_NESTING_DEPTH} deep here; a playbook may nest at most ${MAX_NESTING_DEPTH}`,
    severity: 'error',
    file,
    line: lines.length,
    column: (lines.at(-1)?.length ?? 0) + 1,
    pointer: '',
  };
  return {
    file,
    text,
    data: undefined,
    problems: [problem],
    locate: () => ({ line: problem.line, column: problem.column }),
    span: () => ({ start: { line: 1, column: 1, offset: 0 }, end: { line: 1, column: 1, offset: 0 } }),
  };
}

/** The YAML parser's errors (explained) and warnings, as problems. */
function yamlProblems(
  document: Document,
  file: string,
  text: string,
  position: (offset: number) => Position,
): Problem[] {
  const problems: Problem[] = [];
  for (const [severity, list] of [
    ['error', document.errors],
    ['warning', document.warnings],
  ] as const) {
    const located = list.map((issue) => ({
      code: issue.code,
      message: yamlMessage(issue.code, issue.message),
      ...position(issue.pos[0]),
    }));
    for (const issue of severity === 'error' ? explainYamlErrors(located, text) : located) {
      problems.push({
        code: issue.code.startsWith('YAML_') ? issue.code : `YAML_${issue.code}`,
        message: issue.message,
        severity,
        file,
        line: issue.line,
        column: issue.column,
        pointer: '',
      });
    }
  }
  return problems;
}

/** Aliases that expand too far, located at the anchor used most. */
function aliasLimitProblem(document: Document, file: string, position: (offset: number) => Position): Problem {
  const anchor = mostUsedAnchor(document);
  const named = anchor === undefined ? '' : `: the anchor &${anchor.name} is used ${anchor.uses} times`;
  return {
    code: 'YAML_ALIAS_LIMIT',
    message: `aliases expand too far${named}; a document may expand at most ${MAX_ALIAS_COUNT} aliases (a document that grows without bound is refused)`,
    severity: 'error',
    file,
    ...(anchor?.node.range ? position(anchor.node.range[0]) : { line: 1, column: 1 }),
    pointer: '',
  };
}

/** Where the value (or key) at `pointer` is written; the document's start when it is not there. */
function spanOf(
  document: Document,
  text: string,
  position: (offset: number) => Position,
  pointer: string,
  options: LocateOptions,
): { start: Place; end: Place } {
  const place = (offset: number): Place => ({ ...position(offset), offset });
  let node: unknown = document.contents;
  let keyNode: Node | undefined;
  for (const token of splitPointer(pointer)) {
    if (isMap(node)) {
      // The last of duplicate keys: its value is the one the data holds.
      const pair = node.items.findLast(
        (item) => isPair(item) && isScalar(item.key) && String(item.key.value) === token,
      );
      if (pair === undefined) break;
      keyNode = pair.key as Node;
      node = pair.value;
    } else if (isSeq(node)) {
      const item = node.items[Number(token)];
      if (item === undefined) break;
      keyNode = undefined;
      node = item;
    } else break;
  }
  const target = (options.key && keyNode ? keyNode : node) as Node | null | undefined;
  const range = target?.range;
  if (!range) return { start: { line: 1, column: 1, offset: 0 }, end: { line: 1, column: 1, offset: 0 } };
  if (options.offsetInValue !== undefined && isScalar(target) && typeof target.value === 'string') {
    const written = text.slice(range[0], range[1]);
    const at = writtenOffset(written, target.value, options.offsetInValue, options.lengthInValue ?? 0);
    if (at !== undefined) {
      const start = range[0] + at;
      return { start: place(start), end: place(start + (options.lengthInValue ?? 0)) };
    }
  }
  return { start: place(range[0]), end: place(range[1]) };
}

const isSpace = (char: string | undefined): boolean => char === ' ' || char === '\t' || char === '\n' || char === '\r';

/**
 * Where the characters `offset`..`offset + length` of a string scalar's value are written in
 * its source `written`: the value and the source are walked together, the source's line breaks
 * and indentation standing for the value's white space (folded and literal blocks, quoted
 * strings on several lines). Undefined where they part (an escape): the scalar's start is
 * shown then.
 */
function writtenOffset(written: string, value: string, offset: number, length: number): number | undefined {
  const block = written.startsWith('|') || written.startsWith('>');
  let index = block ? written.indexOf('\n') + 1 : written.startsWith('"') || written.startsWith("'") ? 1 : 0;
  if (block && index === 0) return undefined;
  for (let at = 0; at < offset; at += 1) {
    const char = value[at];
    while (written[index] !== char && isSpace(written[index])) index += 1;
    if (written[index] !== char && !(isSpace(char) && isSpace(written[index - 1]))) return undefined;
    if (written[index] === char) index += 1;
  }
  while (index < written.length && written[index] !== value[offset] && isSpace(written[index])) index += 1;
  return written.slice(index, index + length) === value.slice(offset, offset + length) ? index : undefined;
}
