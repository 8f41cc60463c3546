/**
 * A playbook file parsed with positions: YAML problems as they are found, the plain data,
 * and a way back from a JSON pointer to `line:column`.
 */
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import type { Problem } from './problem.js';
import { errorMessage } from '../errors/index.js';

/** Aliases beyond this are refused (a "billion laughs" document expands without bound). */
export const MAX_ALIAS_COUNT = 100;

export interface Position {
  line: number;
  column: number;
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
  locate(pointer: string, options?: { key?: boolean; offsetInValue?: number }): Position;
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
  if (code === 'MULTIPLE_DOCS') return 'a playbook file holds one YAML document: this `---` starts a second one, which is not read';
  if (code === 'BAD_DQ_ESCAPE') return `${first}: in a double-quoted string a backslash starts an escape; write \\\\ for a backslash, or use single quotes`;
  return first;
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

export function parseSourceDocument(file: string, text: string): SourceDocument {
  const lineCounter = new LineCounter();
  // Duplicate keys are found by duplicateKeys, which says where the first one is.
  const document: Document = parseDocument(text, { lineCounter, uniqueKeys: false, prettyErrors: false, strict: true });
  const position = (offset: number): Position => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  const problems: Problem[] = duplicateKeys(document, file, position);
  for (const [severity, list] of [
    ['error', document.errors],
    ['warning', document.warnings],
  ] as const) {
    for (const issue of list) {
      const at = position(issue.pos[0]);
      const message = yamlMessage(issue.code, issue.message);
      problems.push({ code: `YAML_${issue.code}`, message, severity, file, ...at, pointer: '' });
    }
  }
  let data: unknown;
  if (document.errors.every((error) => RECOVERABLE_YAML_ERRORS.has(error.code))) {
    try {
      data = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (error) {
      problems.push({
        code: 'YAML_ALIAS_LIMIT',
        message: `${errorMessage(error)}: a document may expand at most ${MAX_ALIAS_COUNT} aliases`,
        severity: 'error',
        file,
        line: 1,
        column: 1,
        pointer: '',
      });
    }
  }

  function locate(pointer: string, options: { key?: boolean; offsetInValue?: number } = {}): Position {
    let node: unknown = document.contents;
    let keyNode: Node | undefined;
    for (const token of splitPointer(pointer)) {
      if (isMap(node)) {
        // The last of duplicate keys: its value is the one the data holds.
        const pair = node.items.findLast((item) => isPair(item) && isScalar(item.key) && String(item.key.value) === token);
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
    if (!range) return { line: 1, column: 1 };
    const start = position(range[0]);
    if (options.offsetInValue !== undefined && isScalar(target) && typeof target.value === 'string') {
      // Exact only when the value is written on one line without escapes; else the scalar's start.
      const written = text.slice(range[0], range[1]);
      const quote = target.type === 'QUOTE_DOUBLE' || target.type === 'QUOTE_SINGLE' ? 1 : 0;
      if (written.slice(quote, quote + target.value.length) === target.value) {
        return { line: start.line, column: start.column + quote + options.offsetInValue };
      }
    }
    return start;
  }

  return { file, text, data, problems, locate };
}
