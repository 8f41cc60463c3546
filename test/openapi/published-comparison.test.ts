/**
 * The platform description describes what the platform publishes: every difference from the
 * published descriptions (../shared/spec/published/, read-only, never copied here) is either
 * fixed or listed with its reason in schemas/openapi/published-differences/<area>.yaml.
 * An entry that no longer matches a difference fails too, so the lists cannot rot.
 *
 * UPDATE_PUBLISHED_DIFFERENCES=1 (every area) or =<area>,<area> rewrites the lists from the
 * current differences, keeping existing reasons; new entries read "not yet reconciled".
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  compareDocuments,
  comparePublished,
  compareSchemas,
  PUBLISHED_DIR,
  publishedAreas,
  readAllowlist,
  writeAllowlist,
  type Comparison,
} from './published-differences.js';

const update = process.env.UPDATE_PUBLISHED_DIFFERENCES;
const updates = (area: string): boolean => update === '1' || (update ?? '').split(',').includes(area);

// The published descriptions live beside the repository, never in it: a checkout without them
// (a clone elsewhere) skips the comparison and says so once.
const published = existsSync(PUBLISHED_DIR);
if (!published) console.warn(`published-comparison: skipped, ${PUBLISHED_DIR} is not beside this checkout`);

describe.skipIf(!published)('the comparison with the published descriptions', () => {
  let comparison: Promise<Comparison> | undefined;
  const compared = (): Promise<Comparison> => (comparison ??= comparePublished());
  const areas = existsSync(PUBLISHED_DIR) ? publishedAreas() : [];

  describe.each(areas)('area %s', (area) => {
    it('differs from the published description only where its allowlist says why', async () => {
      const differences = (await compared()).byArea.get(area) ?? [];
      if (updates(area)) writeAllowlist(area, differences);
      const listed = readAllowlist(area).map((e) => e.key);
      expect(new Set(listed).size, 'the allowlist repeats a key').toBe(listed.length);
      const unexpected = differences.filter((d) => !listed.includes(d));
      const stale = listed.filter((key) => !differences.includes(key));
      expect({ unexpected, stale }).toEqual({ unexpected: [], stale: [] });
    });
  });
});

describe('compareSchemas', () => {
  const published = {
    type: 'object',
    required: ['id', 'state'],
    properties: {
      id: { type: 'string' },
      state: { type: 'string', enum: ['OK', 'FAILED'] },
      count: { type: 'string' },
      clusters: { type: 'array', items: { type: 'object', properties: { clusterId: { type: 'string' } } } },
    },
  };

  it('names missing, extra, retyped, unrequired fields and enum values, recursively', () => {
    const project = {
      type: 'object',
      required: ['id'],
      properties: {
        id: { type: 'string' },
        state: { type: 'string', enum: ['OK', 'BROKEN'] },
        count: { type: 'integer' },
        clusters: { type: 'array', items: { type: 'object', properties: { clusterIds: { type: 'string' } } } },
      },
    };
    expect(compareSchemas(published, project, 'response.200').sort()).toEqual([
      'response.200.clusters[].clusterId: missing',
      'response.200.clusters[].clusterIds: extra',
      'response.200.count: type published string, project integer',
      'response.200.state: enum values extra [BROKEN]',
      'response.200.state: enum values missing [FAILED]',
      'response.200.state: required in published only',
    ]);
  });

  it('finds nothing between equal schemas, allOf merged and null types ignored', () => {
    const project = {
      allOf: [
        { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
        {
          type: 'object',
          required: ['state'],
          properties: {
            state: { type: ['string', 'null'], enum: ['OK', 'FAILED', null] },
            count: { type: 'string' },
            clusters: { type: 'array', items: { type: 'object', properties: { clusterId: { type: 'string' } } } },
          },
        },
      ],
    };
    expect(compareSchemas(published, project, 'x')).toEqual([]);
  });
});

describe('compareDocuments', () => {
  const op = (parameters: unknown[], responses: Record<string, unknown>, requestBody?: unknown): unknown => ({
    parameters,
    responses,
    ...(requestBody ? { requestBody } : {}),
  });
  const json = (schema: unknown): unknown => ({ content: { 'application/json': { schema } } });

  it('matches operations on the path shape and names missing operations, parameters, statuses, content types and extras', () => {
    const published = {
      paths: {
        '/a/v1/systems/{id}': {
          get: op(
            [
              { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
              { name: 'select', in: 'query', schema: { type: 'string' } },
            ],
            { '200': json({ type: 'object' }), '422': json({ type: 'object' }) },
          ),
          patch: op(
            [],
            { '200': json({ type: 'object' }) },
            { required: true, content: { 'application/merge-patch+json': { schema: { type: 'object' } } } },
          ),
        },
        '/a/v1/reports': { post: op([], { '202': {} }) },
      },
    };
    const project = {
      paths: {
        '/a/v1/systems/{systemId}': {
          get: op(
            [
              { name: 'systemId', in: 'path', required: true, schema: { type: 'string' } },
              { name: 'filter', in: 'query', schema: { type: 'string' } },
            ],
            { '200': json({ type: 'object' }), '412': json({ type: 'object' }) },
          ),
          patch: op(
            [],
            { '200': json({ type: 'object' }) },
            { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
          ),
        },
        '/a/v1/systems/{id}/refresh': { get: op([], { '200': {} }) },
        '/b/v1/other': { get: op([], { '200': {} }) },
      },
    };
    expect(compareDocuments(project, { pc: published }).byArea.get('pc')).toEqual([
      'pc GET /a/v1/systems/{id} param.query.filter: extra',
      'pc GET /a/v1/systems/{id} param.query.select: missing',
      'pc GET /a/v1/systems/{id} response.412: extra',
      'pc GET /a/v1/systems/{id} response.422: missing',
      'pc GET /a/v1/systems/{id}/refresh: extra',
      'pc PATCH /a/v1/systems/{id} requestBody.contentType application/json: extra',
      'pc PATCH /a/v1/systems/{id} requestBody.contentType application/merge-patch+json: missing',
      'pc POST /a/v1/reports: missing',
    ]);
  });
});
