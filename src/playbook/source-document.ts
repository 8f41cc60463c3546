/**
 * A playbook file parsed with positions: YAML problems as they are found, the plain data,
 * and a way back from a JSON pointer to `line:column`.
 */
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import type { Problem } from './problem.js';

/** Aliases beyond this are refused (a "billion laughs" document expands without bound). */
export const MAX_ALIAS_COUNT = 100;

export interface Position {
  line: number;
  column: number;
}

export interface SourceDocument {
  file: string;
  text: string;
  /** The document as plain data; undefined when it could not be built. */
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

export function parseSourceDocument(file: string, text: string): SourceDocument {
  const lineCounter = new LineCounter();
  const document: Document = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false, strict: true });
  const position = (offset: number): Position => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  const problems: Problem[] = [];
  for (const [severity, list] of [
    ['error', document.errors],
    ['warning', document.warnings],
  ] as const) {
    for (const issue of list) {
      const at = position(issue.pos[0]);
      const message = issue.message.split('\n')[0] ?? issue.message;
      problems.push({ code: `YAML_${issue.code}`, message, severity, file, ...at, pointer: '' });
    }
  }
  let data: unknown;
  if (document.errors.length === 0) {
    try {
      data = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (error) {
      problems.push({
        code: 'YAML_ALIAS_LIMIT',
        message: `${error instanceof Error ? error.message : String(error)}: a document may expand at most ${MAX_ALIAS_COUNT} aliases`,
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
        const pair = node.items.find((item) => isPair(item) && isScalar(item.key) && String(item.key.value) === token);
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
