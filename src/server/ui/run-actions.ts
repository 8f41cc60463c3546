/** The run page's forms: approve or deny a waiting gate, cancel a run, resume an interrupted one (operator). */
import { isFleetbookError } from '../../errors/index.js';
import { html } from './html.js';
import { sendMessage, sendNotFound } from './layout.js';
import type { UiContext } from './ui-context.js';

const runPath = (runId: string) => `/runs/${encodeURIComponent(runId)}`;

export function registerRunActions(context: UiContext): void {
  registerDecisions(context);
  const { app, store, catalog, launcher, scrub, formCaller } = context;
  app.post('/runs/:runId/cancel', async (request, reply) => {
    const caller = await formCaller(request, reply, 'operator');
    if (!caller) return reply;
    const run = await store.getRun((request.params as { runId: string }).runId);
    if (!run) return sendNotFound(reply, caller, 'No such run');
    await launcher.cancel(run.id, caller.token.name);
    return reply.redirect(runPath(run.id), 303);
  });

  app.post('/runs/:runId/resume', async (request, reply) => {
    const caller = await formCaller(request, reply, 'operator');
    if (!caller) return reply;
    const run = await store.getRun((request.params as { runId: string }).runId);
    const playbook = run && (await catalog.find(run.playbook));
    if (!run || !playbook) return sendNotFound(reply, caller, 'No such run or playbook');
    try {
      await launcher.resume(playbook, run, {}, caller.token.name);
    } catch (error) {
      const message = scrub(isFleetbookError(error) ? error.message : String(error));
      return sendMessage(reply, caller, 'Not resumed', html`<p class="error">${message}</p>`, 409);
    }
    return reply.redirect(runPath(run.id), 303);
  });
}

/** Approve and Deny of a waiting gate, with the form's comment (Deny's is required by the form). */
function registerDecisions(context: UiContext): void {
  const { app, store, catalog, launcher, scrub, formCaller } = context;
  for (const decision of ['approved', 'denied'] as const) {
    app.post(`/runs/:runId/${decision === 'approved' ? 'approve' : 'deny'}`, async (request, reply) => {
      const caller = await formCaller(request, reply, 'operator');
      if (!caller) return reply;
      const run = await store.getRun((request.params as { runId: string }).runId);
      if (!run) return sendNotFound(reply, caller, 'No such run');
      const comment = String((request.body as Record<string, unknown>).comment ?? '').trim();
      try {
        await launcher.decide(await catalog.find(run.playbook), {
          runId: run.id,
          decision,
          by: caller.token.name,
          actor: {
            kind: 'token',
            name: caller.token.name,
            role: caller.token.role,
            tokenId: caller.token.id,
            address: request.ip,
          },
          ...(comment === '' ? {} : { comment }),
        });
      } catch (error) {
        if (!isFleetbookError(error)) throw error;
        const more = html`<p class="error">${scrub(error.message)}</p>
          <p><a href="${runPath(run.id)}">Back to the run</a></p>`;
        // The decision stands when only the run's continuation failed (its secret inputs are gone with a restart).
        const title = error.code === 'SECRET_INPUT_MISSING' ? 'Recorded, not continued' : 'Not recorded';
        return sendMessage(reply, caller, title, more, 409);
      }
      return reply.redirect(runPath(run.id), 303);
    });
  }
}
