/**
 * The web UI: server-rendered pages (escaped by `html`), a stylesheet and two small scripts
 * served as files (the Content-Security-Policy allows no inline script or style), a login
 * that turns a token into a session cookie, and forms that carry the session's CSRF token.
 * Pages: runs (filters), a run (live timeline, step tree, log), playbooks (a start form made
 * from the input schema, next fires, trigger now), schedules (pause, resume, trigger now).
 * Each group of routes is a file of its own; `registerUi` composes them over one `UiContext`.
 */
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import { registerFleetGrid } from './fleet-grid.js';
import { registerApprovalsPage } from './approvals-page.js';
import { registerLogin } from './login.js';
import { registerPlaybookStart } from './playbook-start.js';
import { registerPlaybooksList } from './playbooks-list.js';
import { registerRerun } from './rerun.js';
import { registerRunActions } from './run-actions.js';
import { registerRunFileDownloads } from './run-files-page.js';
import { registerRunLive } from './run-live.js';
import { registerRunPage } from './run-page.js';
import { registerRunsList } from './runs-list.js';
import { registerScheduleForms } from './schedule-forms.js';
import { registerSchedulesPage } from './schedules-page.js';
import { registerStaticFiles } from './static-files.js';
import { createUiContext, type UiOptions } from './ui-context.js';

export type { UiOptions };

/** No inline script or style, nothing from another origin, no framing. */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export async function registerUi(app: FastifyInstance, options: UiOptions): Promise<void> {
  await app.register(cookie);
  await app.register(formbody);
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('x-frame-options', 'DENY');
    return payload;
  });
  registerStaticFiles(app);
  const context = createUiContext(app, options);
  registerLogin(context);
  registerRunsList(context);
  registerRunPage(context);
  registerFleetGrid(context);
  registerRunLive(context);
  registerRunActions(context);
  registerRunFileDownloads(context);
  registerRerun(context);
  registerApprovalsPage(context);
  registerPlaybooksList(context);
  registerPlaybookStart(context);
  registerSchedulesPage(context);
  registerScheduleForms(context);
}
