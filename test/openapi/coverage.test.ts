/**
 * Every endpoint of the API reference has an operation in the platform description. The
 * reference is read from ../shared/spec/platform-apis.md when present (the source of truth),
 * else from the copy in schemas/reference/.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadPlatformDescription } from '../../src/openapi/description.js';

const SHARED_REFERENCE = fileURLToPath(new URL('../../../shared/spec/platform-apis.md', import.meta.url));
const REFERENCE_COPY = fileURLToPath(new URL('../../schemas/reference/platform-apis.md', import.meta.url));
const referencePath = existsSync(SHARED_REFERENCE) ? SHARED_REFERENCE : REFERENCE_COPY;
const reference = readFileSync(referencePath, 'utf8');
const PUBLISHED = fileURLToPath(new URL('../../../shared/spec/published', import.meta.url));

/** `METHOD {}-shaped path` of every operation of the published descriptions (empty without them). */
function publishedOperations(): string[] {
  if (!existsSync(PUBLISHED)) return [];
  return readdirSync(PUBLISHED)
    .filter((file) => file.endsWith('.json'))
    .flatMap((file) => {
      const document = JSON.parse(readFileSync(`${PUBLISHED}/${file}`, 'utf8')) as {
        paths: Record<string, Record<string, unknown>>;
      };
      return Object.entries(document.paths).flatMap(([path, item]) =>
        Object.keys(item)
          .filter((method) => ['get', 'put', 'post', 'patch', 'delete'].includes(method))
          .map((method) => `${method.toUpperCase()} ${shapeOf(path)}`),
      );
    });
}

interface EndpointRow {
  method: string;
  path: string;
  deprecated: boolean;
  /** Where in the reference the row comes from, for failure messages. */
  source: string;
}

const METHOD = '(GET|POST|PUT|PATCH|DELETE)';

/** The text between a `## title` heading and the next `## ` heading. */
function section(markdown: string, title: string): string {
  const start = markdown.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`the reference has no '## ${title}' section`);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

/** `{systemId}` and `<operation_id>` name the same thing as `{id}`: compare shapes. */
const shapeOf = (path: string): string => path.replace(/\{[^}]+\}|<[^>]+>/g, '{}');

function endpointRows(markdown: string): EndpointRow[] {
  const rows: EndpointRow[] = [];
  // Area tables: `| METHOD | /path |` rows under a heading that states the prefix.
  let prefixes: Array<{ prefix: string; deprecated: boolean }> = [];
  let heading = '';
  for (const line of section(markdown, 'Endpoints').split('\n')) {
    if (line.startsWith('### ')) {
      heading = line.slice(4);
      const prefix = /prefix `([^`]+)`/.exec(line)?.[1];
      const alsoDeprecated = /the same paths under `([^`]+)` are deprecated/.exec(line)?.[1];
      prefixes = prefix ? [{ prefix, deprecated: false }] : [];
      if (alsoDeprecated) prefixes.push({ prefix: alsoDeprecated, deprecated: true });
      continue;
    }
    const row = new RegExp(`^\\| ${METHOD} \\| (/[^ |]*) \\|`).exec(line);
    if (!row) continue;
    if (!prefixes.length) throw new Error(`row '${line}' under '${heading}' has no area prefix`);
    for (const { prefix, deprecated } of prefixes) {
      rows.push({ method: row[1]!, path: prefix + row[2]!, deprecated, source: `${heading}: ${line}` });
    }
  }
  // Operations the area text names without a table row (the PATCH on subscriptions).
  for (const match of section(markdown, 'Endpoints').matchAll(new RegExp(`\\b${METHOD} on (/[\\w/{}.-]+)`, 'g'))) {
    rows.push({ method: match[1]!, path: match[2]!, deprecated: false, source: `endpoint text '${match[0]}'` });
  }
  // Async operation locations named in the text (the data-services one has no table of its own).
  for (const match of markdown.matchAll(/`(\/[^`\s]*\/async-operations\/)<[^>]+>`/g)) {
    rows.push({ method: 'GET', path: `${match[1]!}{id}`, deprecated: false, source: `async location ${match[0]}` });
  }
  // The token request of the Authentication section.
  for (const match of section(markdown, 'Authentication').matchAll(
    new RegExp(`\`${METHOD} \\{auth_url\\}(/[^\`\\s]+)\``, 'g'),
  )) {
    rows.push({ method: match[1]!, path: match[2]!, deprecated: false, source: `authentication ${match[0]}` });
  }
  // The table of deprecated endpoints.
  for (const line of section(markdown, 'Versioning').split('\n')) {
    const row = new RegExp(`^\\| ${METHOD} (/[^ |]+) \\|`).exec(line);
    if (row) rows.push({ method: row[1]!, path: row[2]!, deprecated: true, source: `versioning: ${line}` });
  }
  return rows;
}

describe('coverage of the API reference', () => {
  const { operations } = loadPlatformDescription();
  const rows = endpointRows(reference);
  const find = (row: EndpointRow) =>
    operations.find((op) => op.method === row.method && shapeOf(op.path) === shapeOf(row.path));

  it(`reads the endpoint rows of ${referencePath.includes('shared') ? 'the shared reference' : 'the reference copy'}`, () => {
    // 50 table rows (5 reporting rows twice), async locations, the token request, 5 deprecated rows.
    expect(rows.length).toBeGreaterThanOrEqual(55);
    expect(rows).toContainEqual(
      expect.objectContaining({ method: 'GET', path: '/data-services/v1beta1/async-operations/{id}' }),
    );
    expect(rows).toContainEqual(expect.objectContaining({ method: 'POST', path: '/as/token.oauth2' }));
  });

  it('has an operation for every (method, path) row', () => {
    const missing = rows.filter((row) => !find(row)).map((row) => `${row.method} ${row.path}  (from ${row.source})`);
    expect(missing, `rows of the reference without an operation in platform.yaml:\n${missing.join('\n')}`).toEqual([]);
  });

  it('marks the deprecated rows deprecated and the others not', () => {
    const wrong = rows
      .filter((row) => find(row) && find(row)?.deprecated !== row.deprecated)
      .map((row) => `${row.method} ${row.path}: deprecated should be ${row.deprecated}`);
    expect(wrong).toEqual([]);
  });

  // Operations only the published descriptions list (beside the repository, not in it) are
  // known only where those descriptions are.
  it.skipIf(!existsSync(PUBLISHED))(
    'describes nothing that neither the reference nor the published descriptions list',
    () => {
      const listed = new Set([...rows.map((row) => `${row.method} ${shapeOf(row.path)}`), ...publishedOperations()]);
      const extra = operations.filter((op) => !listed.has(`${op.method} ${shapeOf(op.path)}`)).map((op) => op.id);
      expect(extra).toEqual([]);
    },
  );

  it('has the totals of issue 2', () => {
    const byArea: Record<string, number> = {};
    for (const op of operations) byArea[op.area] = (byArea[op.area] ?? 0) + 1;
    expect(byArea).toEqual({
      auth: 1,
      privateCloud: 21,
      dataServices: 2,
      consumptionAnalytics: 10,
      devices: 5,
      subscriptions: 8,
      workspaces: 10,
      users: 5,
      reporting: 5,
      reportingV1alpha1: 5,
    });
    expect(operations.filter((op) => op.deprecated)).toHaveLength(5);
    expect(operations.find((op) => op.method === 'PATCH' && op.path === '/subscriptions/v1/subscriptions')?.id).toBe(
      'subscriptions.updateSubscriptions',
    );
  });

  it('names every operation <area>.<verbNoun>, uniquely', () => {
    const ids = operations.map((op) => op.id);
    for (const id of ids) expect(id).toMatch(/^[a-z][A-Za-z0-9]*\.[a-z][A-Za-z0-9]*$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('keeps schemas/reference/platform-apis.md a verbatim copy of the shared reference', () => {
    if (!existsSync(SHARED_REFERENCE)) return; // a clean clone has only the copy
    expect(readFileSync(REFERENCE_COPY, 'utf8')).toBe(readFileSync(SHARED_REFERENCE, 'utf8'));
  });
});
