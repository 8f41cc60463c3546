/**
 * How a person reads a step's path. A step written without an `id` gets one from its kind and
 * position (`fail#4.2`: normalise-playbook's generatedId). Those ids stay the run's journal keys
 * (a run journaled under them must resume under them), but messages, `runs show` and the run's
 * summary name such a step in words: "`fail` (2nd step of `deliver`, line 42)". A path whose
 * last step has an id written by hand reads as it is.
 */

/** The last step of `path` with a generated id: what is before it, its kind, its position, an item suffix. */
const GENERATED_LAST = /^(?:(.*)\.)?([A-Za-z][A-Za-z0-9_-]*)#(\d+(?:\.\d+)*)((?:\[\d+\])?)$/;

/** Whether `id` is one a step without an `id` was given (never one written by hand: `#` is not allowed there). */
export function isGeneratedStepId(id: string): boolean {
  return /^[A-Za-z][A-Za-z0-9_-]*#\d+(?:\.\d+)*$/.test(id);
}

/** 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st... */
export function ordinal(n: number): string {
  const tens = n % 100;
  const suffix =
    tens >= 11 && tens <= 13 ? 'th' : n % 10 === 1 ? 'st' : n % 10 === 2 ? 'nd' : n % 10 === 3 ? 'rd' : 'th';
  return `${n}${suffix}`;
}

/**
 * `path` for a person: unchanged when its step has an id written by hand; otherwise the step's
 * kind, its position among its siblings and, when known, its line in the playbook. The steps
 * it is in keep their paths (an item of a loop: `item 3 of ...`).
 */
export function stepLabel(path: string, line?: number): string {
  const match = GENERATED_LAST.exec(path);
  if (!match) return path;
  const [, parent, kind, positions = '', item = ''] = match;
  const position = Number(positions.split('.').at(-1));
  const where = [
    parent === undefined ? `${ordinal(position)} step` : `${ordinal(position)} step of \`${parent}\``,
    ...(line === undefined ? [] : [`line ${line}`]),
  ].join(', ');
  const label = `\`${kind}\` (${where})`;
  return item ? `item ${item.slice(1, -1)} of ${label}` : label;
}
