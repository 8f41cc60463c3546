/**
 * The headers of a deprecated operation's answers (facts page: `Deprecation`, `Sunset`,
 * `Link`). Reporting v1alpha1 was deprecated on 2025-03-12 (reference); the platform stopped
 * serving it on 2026-04-30 (its published descriptions no longer list it). The simulator
 * keeps serving it, with that date as its `Sunset`, so old playbooks can be rehearsed and
 * migrated; Fleetbook's client never calls it.
 */
const DEPRECATION = `@${Date.UTC(2025, 2, 12) / 1000}`;
const SUNSET = 'Thu, 30 Apr 2026 00:00:00 GMT';

/** `Deprecation`, `Sunset` and a `Link` to `successorPath` with `rel="successor-version"`. */
function deprecationHeaders(successorPath: string): Record<string, string> {
  return { Deprecation: DEPRECATION, Sunset: SUNSET, Link: `<${successorPath}>; rel="successor-version"` };
}

/**
 * The headers of every answer of a deprecated operation, errors included, for a request to
 * `path`: the successor is the same path under the stable version (`/reporting/v1alpha1/statuses/7`
 * → `/reporting/v1/statuses/7`), as the reference describes v1alpha1.
 */
export function deprecationHeadersFor(path: string): Record<string, string> {
  return deprecationHeaders(path.replace(/\/v\d+(?:alpha|beta)\d+\//, '/v1/'));
}
