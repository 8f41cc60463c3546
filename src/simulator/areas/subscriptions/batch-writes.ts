/**
 * Request rules the device and subscription areas share: batches of at most five, the
 * `dry-run` flag, repeated `id` parameters, tag limits and the small 202 body.
 */
import type { AsyncOperations, AsyncOperationSpec, SimRequest, SimResponse } from '../../context.js';
import { badRequest, type BadRequestIssue } from '../../errors.js';

/** Devices and subscriptions take at most five items per write (facts page). */
export const MAX_BATCH = 5;
const MAX_TAGS = 25;
const MAX_TAG_NAME = 128;
const MAX_TAG_VALUE = 256;

function isDryRun(req: SimRequest): boolean {
  const value = req.query['dry-run'];
  return (Array.isArray(value) ? value[0] : value) === 'true';
}

/** The repeated `id` query parameter (`id=a&id=b`), 1 to 5 distinct ids. */
export function batchIds(req: SimRequest): string[] {
  const raw = req.query.id;
  const ids = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  const issue = (description: string): BadRequestIssue => ({ source: 'query.parameter', subject: 'id', description });
  if (ids.length === 0) throw badRequest('At least one id is required', [issue('give one to 5 ids as id=...&id=...')]);
  if (ids.length > MAX_BATCH)
    throw badRequest(`At most ${MAX_BATCH} ids per request, got ${ids.length}`, [issue(`at most ${MAX_BATCH} ids`)]);
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) throw badRequest(`id '${id}' is given twice`, [issue(`duplicate id '${id}'`)]);
    seen.add(id);
  }
  return ids;
}

/** Checks a tag patch against the limits: at most 25 tags per resource after the patch. */
export function checkTags(
  current: Readonly<Record<string, string>>,
  patch: Readonly<Record<string, string | null>>,
  subject: string,
): Record<string, string> {
  const next: Record<string, string> = { ...current };
  for (const [name, value] of Object.entries(patch)) {
    if (name.length === 0 || name.length > MAX_TAG_NAME) {
      throw badRequest(`Tag name '${name.slice(0, 40)}' must have 1 to ${MAX_TAG_NAME} characters`, [
        { source: 'field', subject, description: `tag name of ${name.length} characters` },
      ]);
    }
    if (value === null) {
      delete next[name];
      continue;
    }
    if (value.length > MAX_TAG_VALUE) {
      throw badRequest(`Value of tag '${name}' is longer than ${MAX_TAG_VALUE} characters`, [
        { source: 'field', subject: `${subject}.${name}`, description: `at most ${MAX_TAG_VALUE} characters` },
      ]);
    }
    next[name] = value;
  }
  if (Object.keys(next).length > MAX_TAGS) {
    throw badRequest(`A resource carries at most ${MAX_TAGS} tags`, [
      { source: 'field', subject, description: `${Object.keys(next).length} tags after the change` },
    ]);
  }
  return next;
}

/**
 * Starts the async operation of an accepted device or subscription write and answers the
 * 202: Location plus the published `{code: 202, status: '202 ACCEPTED', transactionId}`. With `dry-run=true` the request was
 * only validated: the operation changes nothing and succeeds at once, so a client follows
 * it exactly like a real one (the description documents only the 202 for these writes).
 */
export function acceptWrite(asyncOps: AsyncOperations, req: SimRequest, spec: AsyncOperationSpec): SimResponse {
  const record = isDryRun(req)
    ? asyncOps.start({
        ...spec,
        type: `${spec.type}-dry-run`,
        durationMs: 0,
        complete: () => ({ status: 'SUCCEEDED', result: {}, resultType: 'DRY_RUN' }),
      })
    : asyncOps.start(spec);
  return {
    status: 202,
    headers: { Location: asyncOps.locationOf(record) },
    body: { code: 202, status: '202 ACCEPTED', transactionId: record.id },
  };
}
