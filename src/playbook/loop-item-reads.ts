/**
 * What a playbook reads of its loops' items once an item has ended: a `forEach` keeps every
 * item's `steps` in its outputs (`steps.<loop>.outputs.items[n].steps.<id>`), and a fleet of
 * 10,000 items cannot keep them all. From the reference paths the loader found in every
 * expression, this says per loop id which of an item's step views may be read (the rest can be
 * released when the item ends), or that all may (a read it cannot follow).
 */
import type { PathSegment, ReferenceSite, Template } from '../expressions/index.js';
import type { StepRegistry } from '../steps/index.js';
import type { Playbook, Step } from '../model/index.js';

/** Every step view of an item may be read, or only those of these step ids. */
export type ItemStepReads = 'all' | ReadonlySet<string>;

/** The item fields besides `steps` that are always kept: a predicate reading only these cannot reach a step. */
const ITEM_FIELDS: ReadonlySet<string> = new Set(['index', 'item', 'status']);

/** Every template anywhere in `value` (a step, its children, the playbook's outputs...). */
function collectTemplates(value: unknown, into: Template[], seen: Set<object>): void {
  if (typeof value !== 'object' || value === null || seen.has(value)) return;
  seen.add(value);
  if (typeof (value as Template).evaluate === 'function') {
    into.push(value as Template);
    return;
  }
  for (const inner of Array.isArray(value) ? value : Object.values(value)) collectTemplates(inner, into, seen);
}

/** A predicate on `items` may read a step of the item unless it names only the item's own fields. */
function predicateMayReadSteps(segment: PathSegment): boolean {
  if (segment.filter !== 'predicate') return false;
  return segment.predicateNames === undefined || segment.predicateNames.some((name) => !ITEM_FIELDS.has(name));
}

/**
 * What one read of `steps.<loop>` needs of the items' steps: nothing, the view of one step id,
 * or everything (the path stops where it could still reach them).
 * The path is `[<loop>, outputs, items, steps, <id>, ...]`.
 */
function needOf(path: readonly PathSegment[]): 'none' | 'all' | string {
  const [loop, outputs, items, steps, id] = path;
  if (loop === undefined || (loop.filter === 'predicate' && outputs === undefined)) return 'all';
  if (outputs === undefined) return 'all';
  if (outputs.name !== 'outputs') return 'none';
  if (outputs.filter === 'predicate' || items === undefined) return 'all';
  if (items.name !== 'items') return 'none';
  if (predicateMayReadSteps(items)) return 'all';
  if (steps === undefined) return 'all';
  if (steps.name !== 'steps') return ITEM_FIELDS.has(steps.name) ? 'none' : 'all';
  if (steps.filter === 'predicate' || id === undefined) return 'all';
  return id.name;
}

/**
 * Per loop id, the step views of its items that expressions may read (`all` when one read
 * cannot be followed). A loop id no expression reads maps to an empty set. Every expression
 * of the playbook counts, the loop's own body included; an expression reading the context
 * whole (`$$`), or `steps` without a step id, makes every loop keep everything. A loop inside
 * another loop's items keeps everything when the outer loop keeps it: its items can then be
 * read through a variable (`$g := steps.groups.outputs.items; $g.steps.resumes...`), which no
 * path names.
 */
export function loopItemReads(playbook: Playbook, registry: StepRegistry): { of(loopId: string): ItemStepReads } {
  const templates: Template[] = [];
  collectTemplates(playbook, templates, new Set());
  let everything = false;
  const reads = new Map<string, 'all' | Set<string>>();
  const add = (site: ReferenceSite): void => {
    if (site.member === undefined) {
      everything = true;
      return;
    }
    const need = needOf(site.path);
    if (need === 'none') return;
    const known = reads.get(site.member) ?? new Set<string>();
    if (known === 'all') return;
    if (need === 'all') reads.set(site.member, 'all');
    else reads.set(site.member, known.add(need));
  };
  for (const template of templates) {
    if (template.readsWholeContext) everything = true;
    for (const site of template.references) if (site.root === 'steps') add(site);
  }
  const of = (loopId: string): ItemStepReads => (everything ? 'all' : (reads.get(loopId) ?? new Set()));
  const visit = (steps: readonly Step[], enclosing: ItemStepReads | undefined): void => {
    for (const step of steps) {
      const children = registry.childStepsOf(step);
      // A loop's rescue and always run in the loop's own scope, not in its items.
      visit([...children.rescue, ...children.always], enclosing);
      if (children.scope !== 'loop') {
        visit(children.sequences.flat(), enclosing);
        continue;
      }
      if (enclosing !== undefined && (enclosing === 'all' || enclosing.has(step.id))) reads.set(step.id, 'all');
      visit(children.sequences.flat(), of(step.id));
    }
  };
  if (!everything) visit(playbook.steps, undefined);
  return { of };
}
