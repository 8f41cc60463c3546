/**
 * Names longer than this get no suggestion: every name Fleetbook suggests (operations, fields,
 * inputs, step ids, time zones, run ids) is far shorter, and the edit distance grows with the
 * name's length, so a 650 KB name pasted by mistake must not cost seconds.
 */
export const MAX_SUGGESTED_NAME_LENGTH = 256;

/** Candidates compared at most: the list is cut there so a huge list costs no more than this. */
export const MAX_SUGGESTION_CANDIDATES = 10_000;

/**
 * Edit distance (insertions, deletions, substitutions) of two lowercased names, or `bound + 1`
 * when it exceeds `bound`. Only the diagonal band of width `2 * bound + 1` is computed (no
 * alignment outside it can stay within the bound), so the cost is O(bound × length).
 */
function boundedDistance(a: string, b: string, bound: number): number {
  const over = bound + 1;
  if (Math.abs(a.length - b.length) > bound) return over;
  let previous = new Uint32Array(b.length + 2).fill(over);
  let current = new Uint32Array(b.length + 2).fill(over);
  for (let j = 0; j <= Math.min(b.length, bound); j += 1) previous[j] = j;
  for (let i = 1; i <= a.length; i += 1) {
    const from = Math.max(1, i - bound);
    const to = Math.min(b.length, i + bound);
    current[from - 1] = from === 1 && i <= bound ? i : over;
    let rowBest = current[from - 1] ?? over;
    for (let j = from; j <= to; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min((previous[j] ?? over) + 1, (current[j - 1] ?? over) + 1, (previous[j - 1] ?? over) + cost);
      current[j] = Math.min(value, over);
      rowBest = Math.min(rowBest, value);
    }
    current[to + 1] = over;
    // Every later cell descends from this row: once all of it is over the bound, so is the answer.
    if (rowBest > bound) return over;
    [previous, current] = [current, previous];
  }
  return Math.min(previous[b.length] ?? over, over);
}

/**
 * The known names closest to `wanted`, best first: those within a quarter of its length in
 * edits (or containing it), and no more than one edit worse than the best. For "did you
 * mean" hints in error messages. Bounded: a name over {@link MAX_SUGGESTED_NAME_LENGTH} gets
 * none, and only the first {@link MAX_SUGGESTION_CANDIDATES} known names are compared.
 */
export function closestMatches(
  wanted: string,
  known: Iterable<string>,
  max = 3,
  { prefixes = false }: MatchOptions = {},
): string[] {
  if (wanted.length === 0 || wanted.length > MAX_SUGGESTED_NAME_LENGTH) return [];
  // A name that shares no letter with the one typed is no suggestion ('zz' is not 'a' misspelt).
  const limit = Math.min(Math.max(2, Math.ceil(wanted.length / 4)), wanted.length - 1);
  const lowered = wanted.toLowerCase();
  // With `prefixes`, a name is also scored by its start (one edit more): `maxParalel` is `maxParallelSystems` cut short.
  const score = (name: string): number => {
    const whole = boundedDistance(lowered, name, limit);
    if (!prefixes || limit < 1 || name.length <= lowered.length) return whole;
    return Math.min(whole, boundedDistance(lowered, name.slice(0, lowered.length), limit - 1) + 1);
  };
  const candidates: { name: string; score: number }[] = [];
  for (const name of firstOf(known, MAX_SUGGESTION_CANDIDATES)) {
    const other = name.toLowerCase();
    const candidate = { name, score: other.includes(lowered) ? 0 : score(other) };
    if (candidate.score <= limit) candidates.push(candidate);
  }
  candidates.sort((a, b) => a.score - b.score || a.name.localeCompare(b.name));
  const best = candidates[0]?.score ?? 0;
  return candidates
    .filter((candidate) => candidate.score <= best + 1)
    .slice(0, max)
    .map((candidate) => candidate.name);
}

function* firstOf(names: Iterable<string>, count: number): Iterable<string> {
  if (count <= 0) return;
  let seen = 0;
  for (const name of names) {
    yield name;
    seen += 1;
    if (seen >= count) return;
  }
}

export interface MatchOptions {
  /** Also match a name by its start, for names typed short (inputs). @default false */
  prefixes?: boolean;
}

/** ` Did you mean 'a' or 'b'?` or an empty string. */
export function didYouMean(wanted: string, known: Iterable<string>, options: MatchOptions = {}): string {
  const matches = closestMatches(wanted, known, 3, options);
  if (matches.length === 0) return '';
  const quoted = matches.map((name) => `'${name}'`);
  const list = quoted.length === 1 ? quoted[0] : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
  return ` Did you mean ${list}?`;
}
