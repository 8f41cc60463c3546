import { readFileSync } from 'node:fs';
import { LineCounter, parseDocument, isCollection, type Node } from 'yaml';
import { UsageError } from '../errors/index.js';
import { createSchemaValidator, describeSchemaError, pointerOf } from './schema-validator.js';

/** Where in a file a JSON pointer's node starts, as `file:line:col`. */
function locate(file: string, root: Node | null, lines: LineCounter, pointer: string): string {
  let node: unknown = root;
  for (const segment of pointer.split('/').slice(1)) {
    if (!isCollection(node)) break;
    const next: unknown =
      node.get(segment.replace(/~1/g, '/').replace(/~0/g, '~'), true) ?? node.get(Number(segment), true);
    if (next === undefined) break;
    node = next;
  }
  const offset = (node as { range?: [number] } | null)?.range?.[0] ?? 0;
  const { line, col } = lines.linePos(offset);
  return `${file}:${line}:${col}`;
}

/**
 * Reads a YAML (or JSON) settings file, or takes an object as is, and checks it against
 * `schema`. Every problem is reported at once, each located (`file:line:col` and the
 * property path), as a `UsageError` with code `errorCode`.
 */
export function loadConfigFile<T>(source: string | object, schema: object, errorCode: string, what: string): T {
  const validate = createSchemaValidator().compile(schema);
  let data: unknown = source;
  let locateAt = (pointer: string): string => `${what}${pointer || '/'}`;
  if (typeof source === 'string') {
    let text: string;
    try {
      text = readFileSync(source, 'utf8');
    } catch (error) {
      throw new UsageError(`Cannot read the ${what} ${source}: ${(error as Error).message}`, errorCode);
    }
    const lines = new LineCounter();
    const doc = parseDocument(text, { lineCounter: lines, prettyErrors: true });
    if (doc.errors.length > 0) {
      throw new UsageError(
        `The ${what} ${source} is not valid YAML:\n${doc.errors.map((e) => `  ${e.message}`).join('\n')}`,
        errorCode,
      );
    }
    data = doc.toJS() ?? {};
    locateAt = (pointer) => `${locate(source, doc.contents, lines, pointer)} (${pointer || '/'})`;
  }
  if (!validate(data)) {
    // ajv follows a bad key's own error with a generic `propertyNames` one: keep the first only.
    const problems = (validate.errors ?? [])
      .filter((error) => error.keyword !== 'propertyNames')
      .map((error) => `  ${locateAt(pointerOf(error))}: ${describeSchemaError(error)}`);
    throw new UsageError(`The ${what} has ${problems.length} problem(s):\n${problems.join('\n')}`, errorCode);
  }
  return data as T;
}
