import { createHash } from 'node:crypto';
import type { AuditEntry, AuditFilter, NewAuditEntry } from './audit-types.js';

/** The `prevHash` of the first entry. */
export const AUDIT_GENESIS = '0'.repeat(64);
/** The most entries one `listAudit` returns. */
export const AUDIT_PAGE_MAX = 1000;

/** An `audit_log` row as both SQL stores read it (the memory store keeps the same shape). */
export interface AuditRow {
  seq: number;
  at: string;
  action: string;
  outcome: string;
  actorJson: string;
  objectJson: string | null;
  detailJson: string | null;
  prevHash: string;
  hash: string;
}

/**
 * JSON with every object's keys sorted and undefined members left out: the same entry gives
 * the same text whichever store read it back, and so the same hash.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  const members = Object.entries(value as Record<string, unknown>)
    .filter(([, member]) => member !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, member]) => `${JSON.stringify(key)}:${canonicalJson(member)}`);
  return `{${members.join(',')}}`;
}

/** The hash an entry must hold: SHA-256 of its canonical JSON without its own `hash`. */
export function auditHash(entry: Omit<AuditEntry, 'hash'> & { hash?: string }): string {
  const { hash: _hash, ...rest } = entry;
  return createHash('sha256').update(canonicalJson(rest)).digest('hex');
}

/** The row of `entry` appended after the entry whose hash is `prevHash` (seq `seq`). */
export function sealAuditRow(entry: NewAuditEntry, seq: number, at: string, prevHash: string): AuditRow {
  // Through JSON once, so what is hashed is what a read gives back (no undefined, no Date).
  const plain = JSON.parse(JSON.stringify(entry)) as NewAuditEntry;
  const sealed = { ...plain, seq, at, prevHash };
  return {
    seq,
    at,
    action: plain.action,
    outcome: plain.outcome,
    actorJson: JSON.stringify(plain.actor),
    objectJson: plain.object === undefined ? null : JSON.stringify(plain.object),
    detailJson: plain.detail === undefined ? null : JSON.stringify(plain.detail),
    prevHash,
    hash: auditHash(sealed),
  };
}

export function rowToAuditEntry(row: AuditRow): AuditEntry {
  return {
    seq: Number(row.seq),
    at: row.at,
    actor: JSON.parse(row.actorJson) as AuditEntry['actor'],
    action: row.action as AuditEntry['action'],
    ...(row.objectJson === null ? {} : { object: JSON.parse(row.objectJson) as AuditEntry['object'] }),
    outcome: row.outcome as AuditEntry['outcome'],
    ...(row.detailJson === null ? {} : { detail: JSON.parse(row.detailJson) as AuditEntry['detail'] }),
    prevHash: row.prevHash,
    hash: row.hash,
  };
}

/** The filter's page size, within bounds. */
export function auditLimit(filter: AuditFilter): number {
  return Math.min(Math.max(Math.floor(filter.limit ?? AUDIT_PAGE_MAX), 1), AUDIT_PAGE_MAX);
}

/** Whether a row kept in memory passes `filter` (the SQL stores say the same in their query). */
export function auditRowMatches(row: AuditRow, filter: AuditFilter): boolean {
  if (filter.afterSeq !== undefined && row.seq <= filter.afterSeq) return false;
  if (filter.action !== undefined && row.action !== filter.action) return false;
  if (filter.since !== undefined && row.at < filter.since) return false;
  if (filter.actor !== undefined && (JSON.parse(row.actorJson) as { name?: string }).name !== filter.actor)
    return false;
  return true;
}

/** Where a chain breaks: the first entry that is not what was appended, or a gap where entries were. */
export interface AuditBreak {
  seq: number;
  reason: string;
}

/**
 * Checks the chain entry by entry (oldest first, as `listAudit` gives them): each seq one more
 * than the one before, each `prevHash` the hash before it, each `hash` its own content's.
 * Returns the first break, or how many entries were checked and the last hash.
 */
export async function verifyAuditChain(
  entries: AsyncIterable<AuditEntry> | Iterable<AuditEntry>,
): Promise<{ ok: true; count: number; lastHash: string } | ({ ok: false } & AuditBreak)> {
  let expectedSeq = 1;
  let prevHash = AUDIT_GENESIS;
  let count = 0;
  for await (const entry of entries) {
    if (entry.seq !== expectedSeq)
      return { ok: false, seq: expectedSeq, reason: `entries ${expectedSeq} to ${entry.seq - 1} are missing` };
    if (entry.prevHash !== prevHash)
      return { ok: false, seq: entry.seq, reason: 'it does not hold the hash of the entry before it' };
    if (auditHash(entry) !== entry.hash)
      return { ok: false, seq: entry.seq, reason: 'its content does not match its hash (it was changed)' };
    prevHash = entry.hash;
    expectedSeq += 1;
    count += 1;
  }
  return { ok: true, count, lastHash: prevHash };
}

/** Every entry of `list`'s log, oldest first, a page at a time. */
export async function* auditPages(
  list: (filter: AuditFilter) => Promise<AuditEntry[]>,
  filter: AuditFilter = {},
): AsyncIterable<AuditEntry> {
  let afterSeq = filter.afterSeq ?? 0;
  for (;;) {
    const page = await list({ ...filter, afterSeq, limit: AUDIT_PAGE_MAX });
    yield* page;
    if (page.length < AUDIT_PAGE_MAX) return;
    afterSeq = page[page.length - 1]!.seq;
  }
}
