/**
 * A run's files: what its steps wrote to its outputs folder (`<outputsDir>/<runId>/`, the
 * `run.outputsDir` of its playbook: `file` steps, `saveTo` downloads, large values), listed on
 * its page and served by `GET /runs/:id/files/*` and `/api/v1/runs/:id/files/*`. Only a regular
 * file whose real path (links resolved) lies inside that folder is served; any other path (a
 * `..`, a link out, a hidden or half-written file) is answered as if it did not exist.
 */
import { createReadStream } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { basename, extname, isAbsolute, join, relative, sep } from 'node:path';
import type { FastifyReply } from 'fastify';

export interface RunFile {
  /** Relative to the run's folder, with `/` between folders. */
  path: string;
  bytes: number;
}

/** Files listed on a run's page at most (a run that wrote thousands is shown the first ones). */
const LISTED_AT_MOST = 200;

const CONTENT_TYPES: Record<string, string> = {
  '.csv': 'text/csv; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.log': 'text/plain; charset=utf-8',
  '.gz': 'application/gzip',
  '.zip': 'application/zip',
  '.pdf': 'application/pdf',
};

/** The run's folder, its links resolved; undefined when the run wrote no file (or the id could leave the folder). */
async function runFolder(outputsDir: string, runId: string): Promise<string | undefined> {
  if (!/^[A-Za-z0-9_-]+$/.test(runId)) return undefined;
  return realpath(join(outputsDir, runId)).catch(() => undefined);
}

const inside = (path: string, dir: string): boolean => {
  const rel = relative(dir, path);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
};

/** Hidden names (`.x.part` of a file being written) and `..` are never served nor listed. */
const shown = (path: string): boolean => path.split(/[/\\]/).every((part) => part !== '' && !part.startsWith('.'));

/** The file `path` of the run's folder, if it is one that may be served. */
export async function findRunFile(
  outputsDir: string,
  runId: string,
  path: string,
): Promise<{ file: string; bytes: number } | undefined> {
  const folder = await runFolder(outputsDir, runId);
  if (folder === undefined || path.includes('\0') || !shown(path)) return undefined;
  const file = await realpath(join(folder, path)).catch(() => undefined);
  if (file === undefined || !inside(file, folder)) return undefined;
  const stats = await stat(file).catch(() => undefined);
  return stats?.isFile() ? { file, bytes: stats.size } : undefined;
}

/** The files of the run's folder (nested ones too), by path; none when it wrote none. */
export async function listRunFiles(outputsDir: string, runId: string): Promise<RunFile[]> {
  const folder = await runFolder(outputsDir, runId);
  if (folder === undefined) return [];
  const entries = await readdir(folder, { recursive: true }).catch(() => [] as string[]);
  const files: RunFile[] = [];
  for (const entry of entries.sort()) {
    if (files.length >= LISTED_AT_MOST) break;
    const path = entry.split(sep).join('/');
    const found = shown(path) ? await findRunFile(outputsDir, runId, path) : undefined;
    if (found) files.push({ path, bytes: found.bytes });
  }
  return files;
}

/** `attachment` with the name as ASCII (quotes and controls replaced) and as UTF-8 (RFC 6266). */
function disposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/** Streams the file as a download. */
export function sendRunFile(reply: FastifyReply, found: { file: string; bytes: number }): FastifyReply {
  const name = basename(found.file);
  return reply
    .type(CONTENT_TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream')
    .header('content-length', found.bytes)
    .header('content-disposition', disposition(name))
    .header('cache-control', 'no-store')
    .send(createReadStream(found.file));
}

/** The URL path of a run's file, each part encoded. */
export const runFileHref = (runId: string, path: string): string =>
  `/runs/${encodeURIComponent(runId)}/files/${path.split('/').map(encodeURIComponent).join('/')}`;
