import jsonata from 'jsonata';

/**
 * A copy of a JSONata syntax tree in plain objects and arrays, holding nothing of the parser.
 *
 * JSONata builds its table of operators afresh for every expression it parses, and each token of
 * the tree inherits from an entry of that table, whose functions close over the parser's whole
 * state: a tree of `inputs.count + 1` kept as parsed holds about 13 KB, 3 KB more with its
 * expression object. A playbook of 20,000 expressions kept 330 MB alive through validate, and
 * the collector's passes over it were a third of the time. The copy keeps each node's own data
 * (its type, value, position and children; a regex literal as the same RegExp) and drops what
 * is inherited or a function.
 *
 * Iterative, not recursive: an expression nested thousands deep must reach the walks that
 * refuse it with a located message, not overflow here.
 */
export function detachedAst(ast: jsonata.ExprNode): jsonata.ExprNode {
  // A node reached twice (JSONata shares the slots of `%` between nodes) is copied once.
  const copies = new Map<object, Record<string, unknown>>();
  const pending: object[] = [];
  const copyOf = (value: unknown): unknown => {
    if (typeof value !== 'object' || value === null || value instanceof RegExp) return value;
    let copy = copies.get(value);
    if (copy === undefined) {
      copy = (Array.isArray(value) ? new Array<unknown>(value.length) : {}) as Record<string, unknown>;
      copies.set(value, copy);
      pending.push(value);
    }
    return copy;
  };
  const root = copyOf(ast);
  for (let source = pending.pop(); source !== undefined; source = pending.pop()) {
    const copy = copies.get(source) as Record<string, unknown>;
    for (const key of Object.keys(source)) {
      const value: unknown = (source as Record<string, unknown>)[key];
      if (typeof value !== 'function') copy[key] = copyOf(value);
    }
  }
  return root as jsonata.ExprNode;
}

/** JSONata's parser alone, which the package also exposes (`jsonata.parser`); absent in some version, `jsonata()` does. */
const parseOnly = (jsonata as unknown as { parser?: (text: string) => jsonata.ExprNode }).parser;

/**
 * The syntax tree of `text`, detached (see `detachedAst`). Parsed without the expression object
 * `jsonata()` makes around it (a frame and two functions whose signatures it parses, per
 * expression): only an evaluation needs that. Throws as `jsonata()` does when `text` does not
 * parse, with its message: the parser alone leaves the message out, so the error is taken again
 * from `jsonata()`.
 */
export function parseDetached(text: string): jsonata.ExprNode {
  if (parseOnly === undefined) return detachedAst(jsonata(text).ast());
  let ast: jsonata.ExprNode;
  try {
    ast = parseOnly(text);
  } catch {
    return detachedAst(jsonata(text).ast());
  }
  return detachedAst(ast);
}
