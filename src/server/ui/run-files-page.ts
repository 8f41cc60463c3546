/**
 * A run's files in the web UI: `GET /runs/:runId/files/*` downloads one (what the `email` step
 * links to when an attachment is too large), and the run page's "Files" section lists them.
 * A download is asked for by a person with a session or by a script with a token (the link
 * in a mail, fetched with `curl -H 'Authorization: Bearer ...'`): viewer role either way.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { findRunFile, runFileHref, sendRunFile, type RunFile } from '../run-files.js';
import { roleAllows, verifyApiToken } from '../tokens.js';
import { ServerErrorCode } from '../error-codes.js';
import { html, type Html } from './html.js';
import { sendNotFound } from './layout.js';
import type { UiContext } from './ui-context.js';

/** `812 B`, `4.2 KB`, `1.5 MB`. */
function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  return bytes < 1024 ** 2 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 ** 2).toFixed(1)} MB`;
}

/** A token's answer as the API gives it: `{ error: { code, message } }`. */
const refuse = (reply: FastifyReply, status: number, code: string, message: string): FastifyReply =>
  reply.status(status).send({ error: { code, message } });

/** With a bearer token: the file, or 401/403/404 as the API answers. */
async function tokenDownload(
  context: UiContext,
  reply: FastifyReply,
  secret: string,
  runId: string,
  path: string,
): Promise<FastifyReply> {
  const token = await verifyApiToken(context.store, secret);
  if (!token) return refuse(reply, 401, ServerErrorCode.unauthorized, 'a valid token is needed');
  if (!roleAllows(token.role, 'viewer'))
    return refuse(
      reply,
      403,
      ServerErrorCode.forbidden,
      `this needs the viewer role; '${token.name}' is ${token.role}`,
    );
  const found = (await context.store.getRun(runId)) && (await findRunFile(context.outputsDir, runId, path));
  return found ? sendRunFile(reply, found) : refuse(reply, 404, ServerErrorCode.notFound, `file ${path} not found`);
}

export function registerRunFileDownloads(context: UiContext): void {
  const { app, store, outputsDir, pageCaller } = context;
  app.get('/runs/:runId/files/*', async (request: FastifyRequest, reply: FastifyReply) => {
    const { runId, '*': path } = request.params as { runId: string; '*': string };
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
    if (bearer !== undefined) return tokenDownload(context, reply, bearer, runId, path);
    const caller = await pageCaller(request, reply);
    if (!caller) return reply;
    const found = (await store.getRun(runId)) && (await findRunFile(outputsDir, runId, path));
    return found ? sendRunFile(reply, found) : sendNotFound(reply, caller, 'No such file');
  });
}

/** The run page's section of its files, each a download link; nothing when the run wrote none. */
export function runFilesSection(runId: string, files: readonly RunFile[]): Html | string {
  if (files.length === 0) return '';
  return html`<h2>Files</h2>
    <ul class="files">
      ${files.map(
        (file) =>
          html`<li>
            <a href="${runFileHref(runId, file.path)}" download>${file.path}</a> ${formatBytes(file.bytes)}
          </li>`,
      )}
    </ul>`;
}
