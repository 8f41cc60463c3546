/** Plain JSON, as a parsed playbook is: what the fuzz tests mutate. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The container at the end of a random walk (`choices` pick a child at each level) and a key in it. */
export function walk(
  root: Json,
  choices: readonly number[],
): { parent: Json[] | { [key: string]: Json }; key: string | number } | undefined {
  let parent: Json[] | { [key: string]: Json } | undefined;
  let key: string | number | undefined;
  let node: Json = root;
  for (const choice of choices) {
    if (node === null || typeof node !== 'object') break;
    const keys: Array<string | number> = Array.isArray(node) ? node.map((_, index) => index) : Object.keys(node);
    if (keys.length === 0) break;
    parent = node;
    key = keys[choice % keys.length];
    node = (Array.isArray(node) ? node[key as number] : node[key as string]) ?? null;
  }
  return parent === undefined || key === undefined ? undefined : { parent, key };
}
