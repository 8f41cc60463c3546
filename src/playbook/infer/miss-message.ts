/**
 * The message of a field read that cannot exist: what the value is and its fields, then the
 * field spelt nearly so, else the same name a few levels down, else the same path in what
 * another step returns.
 */
import { closestMatches } from '../../errors/index.js';
import { fieldOf, type FieldLookup, type JsonSchema } from '../../steps/index.js';
import type { Value } from './values.js';

export type KnownMiss = Extract<FieldLookup, { known: true }>;

/** Where a misread name is written: the path before it and the plain names after it, as written. */
export interface MissPlace {
  /** The steps of the same path before the name, as written (`steps.a.outputs`), empty when it starts a path. */
  before: string;
  /** The plain names after it in the same path (`.b.c`), and those names alone. */
  after: string;
  afterNames: readonly string[];
  /** The path starts at `steps` (`steps.<id>` or `$$.steps.<id>`): another step's answer may be meant. */
  fromSteps: boolean;
}

/** What the message needs of where it is: another step's record by id, and the ids readable here. */
export interface StepLookup {
  record(id: string): JsonSchema | undefined;
  stepIds(): Iterable<string>;
}

function fieldsText(lookup: KnownMiss): string {
  const { fields, what } = lookup;
  if (fields.length === 0) return `it is ${what}.`;
  const shown = fields.slice(0, 12).join(', ');
  return `its fields are ${shown}${fields.length > 12 ? `, … (${fields.length} in all)` : ''}.`;
}

/** The shortest way from `type` to a field `name` a few levels down (`outputs.items.steps`), or undefined. */
export function pathToField(type: JsonSchema, name: string, depth = 3): string[] | undefined {
  let frontier: Array<{ type: JsonSchema; path: string[] }> = [{ type, path: [] }];
  for (let level = 0; level < depth; level += 1) {
    const next: typeof frontier = [];
    for (const { type: at, path } of frontier) {
      const lookup = fieldOf(at, '\u0000');
      if (lookup.found || !lookup.known) continue;
      if (path.length > 0 && lookup.fields.includes(name)) return path;
      for (const field of lookup.fields) {
        const inner = fieldOf(at, field);
        if (inner.found) next.push({ type: inner.type, path: [...path, field] });
      }
    }
    frontier = next;
  }
  return undefined;
}

/** Whether `names` can be read from `type` (a type that leaves them free counts as yes). */
function canRead(type: JsonSchema, names: readonly string[]): boolean {
  let at = type;
  for (const name of names) {
    const lookup = fieldOf(at, name);
    if (!lookup.found) return !lookup.known;
    at = lookup.type;
  }
  return true;
}

const joined = (before: string, rest: string): string => (before === '' ? rest : `${before}.${rest}`);

function suggestion(parent: Value, name: string, lookup: KnownMiss, place: MissPlace, steps: StepLookup): string {
  // The name a level or more down first (a list of ids became a list of objects with an id:
  // `hypervisorClusterIds` is now `hypervisorClusters.hypervisorClusterId`), then one spelt nearly so.
  for (const wanted of name.endsWith('s') ? [name, name.slice(0, -1)] : [name]) {
    const deeper = pathToField(parent.type, wanted);
    if (deeper !== undefined)
      return ` Did you mean \`${joined(place.before, [...deeper, wanted].join('.'))}${place.after}\`?`;
  }
  const [close] = closestMatches(name, lookup.fields);
  if (close !== undefined) return ` Did you mean \`${joined(place.before, close)}${place.after}\`?`;
  const from = parent.fromStep;
  if (from === undefined || !place.fromSteps) return '';
  const names = [...from.names, name, ...place.afterNames];
  for (const id of steps.stepIds()) {
    const record = id === from.id ? undefined : steps.record(id);
    if (record !== undefined && canRead(record, names))
      return ` Did you mean \`steps.${id}.${names.join('.')}\`? That field is in what step '${id}' returns.`;
  }
  return '';
}

/** "`steps.a.outputs` has no field 'x': its fields are … Did you mean …?" */
export function missMessage(
  parent: Value,
  name: string,
  lookup: KnownMiss,
  place: MissPlace,
  steps: StepLookup,
): string {
  const subject = parent.label === undefined ? 'this value' : `\`${parent.label}\``;
  return `${subject} has no field '${name}': ${fieldsText(lookup)}${suggestion(parent, name, lookup, place, steps)}`;
}
