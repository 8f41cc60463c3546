/** Edit distance (insertions, deletions, substitutions), case-insensitive. */
function distance(a: string, b: string): number {
  const left = a.toLowerCase();
  const right = b.toLowerCase();
  let previous = Array.from({ length: right.length + 1 }, (_, index) => index);
  for (let i = 1; i <= left.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= right.length; j += 1) {
      const cost = left[i - 1] === right[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[right.length] ?? 0;
}

/**
 * The known names closest to `wanted`, best first: those within a quarter of its length in
 * edits (or containing it), and no more than one edit worse than the best. For "did you
 * mean" hints in error messages.
 */
export function closestMatches(
  wanted: string,
  known: Iterable<string>,
  max = 3,
  { prefixes = false }: MatchOptions = {},
): string[] {
  const limit = Math.max(2, Math.ceil(wanted.length / 4));
  const lowered = wanted.toLowerCase();
  // With `prefixes`, a name is also scored by its start (one edit more): `maxParalel` is `maxParallelSystems` cut short.
  const score = (name: string): number =>
    Math.min(
      distance(wanted, name),
      prefixes && name.length > wanted.length
        ? distance(wanted, name.slice(0, wanted.length)) + 1
        : Number.POSITIVE_INFINITY,
    );
  const candidates = [...known]
    .map((name) => ({ name, score: name.toLowerCase().includes(lowered) ? 0 : score(name) }))
    // A name that shares no letter with the one typed is no suggestion ('zz' is not 'a' misspelt).
    .filter((candidate) => candidate.score <= limit && candidate.score < wanted.length)
    .sort((a, b) => a.score - b.score || a.name.localeCompare(b.name));
  const best = candidates[0]?.score ?? 0;
  return candidates
    .filter((candidate) => candidate.score <= best + 1)
    .slice(0, max)
    .map((candidate) => candidate.name);
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
