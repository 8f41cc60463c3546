import type jsonata from 'jsonata';

/**
 * A dotted path of plain names and nothing else (`system.region`, `steps.target.outputs.version`),
 * with JSONata's own white space (not Unicode's) around it.
 */
const PLAIN_PATH = /^[ \t\n\r\v]*[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*[ \t\n\r\v]*$/;
/** Words JSONata reads as operators, values or a function's start, never as names. */
const JSONATA_WORDS: ReadonlySet<string> = new Set(['and', 'or', 'in', 'true', 'false', 'null', 'function']);

/**
 * The syntax tree JSONata's parser makes of `text` when it is a plain path, or undefined. Most
 * expressions of a playbook are such paths, and JSONata's parser builds its whole table of
 * operators for each expression it parses: a quarter of a large playbook's validation time. A
 * name's `position` is where JSONata puts it, the offset just past its end.
 */
export function plainPathAst(text: string): jsonata.ExprNode | undefined {
  if (!PLAIN_PATH.test(text)) return undefined;
  const steps: Array<{ type: 'name'; value: string; position: number }> = [];
  const pattern = /[A-Za-z_][A-Za-z0-9_]*/g;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const [name] = match;
    if (JSONATA_WORDS.has(name)) return undefined;
    steps.push({ type: 'name', value: name, position: match.index + name.length });
  }
  return { type: 'path', steps } as unknown as jsonata.ExprNode;
}
