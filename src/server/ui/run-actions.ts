/** The run page's forms: approve or deny a waiting gate, cancel a run, resume an interrupted one (operator). */
import { formInputs } from '../../engine/index.js';
import { isFleetbookError } from '../../errors/index.js';
import type { WaitRecord } from '../../store/index.js';
import { gateForm } from './approval-panel.js';
import { html } from './html.js';
import { operatesOn, roleText, sendMessage, sendNotFound, type Caller } from './layout.js';
import type { FastifyReply } from 'fastify';
import { defaultText } from './start-form.js';
import type { UiContext } from './ui-context.js';

const runPath = (runId: string) => `/runs/${encodeURIComponent(runId)}`;

/** 403: the caller's role for the run's playbook is below operator (a role held for other playbooks). */
const refuseOn = (reply: FastifyReply, caller: Caller, playbook: string) =>
  sendMessage(
    reply,
    caller,
    'Not allowed',
    html`<p>Acting on runs of ${playbook} needs the operator role for it; you are ${roleText(caller)}.</p>`,
    403,
  );

export function registerRunActions(context: UiContext): void {
  registerDecisions(context);
  const { app, store, catalog, launcher, scrub, formCaller } = context;
  app.post('/runs/:runId/cancel', async (request, reply) => {
    const caller = await formCaller(request, reply, 'operator', true);
    if (!caller) return reply;
    const run = await store.getRun((request.params as { runId: string }).runId);
    if (!run) return sendNotFound(reply, caller, 'No such run');
    if (!operatesOn(caller, run.playbook)) return refuseOn(reply, caller, run.playbook);
    await launcher.cancel(run.id, caller.token.name);
    return reply.redirect(runPath(run.id), 303);
  });

  app.post('/runs/:runId/resume', async (request, reply) => {
    const caller = await formCaller(request, reply, 'operator', true);
    if (!caller) return reply;
    const run = await store.getRun((request.params as { runId: string }).runId);
    const playbook = run && (await catalog.find(run.playbook));
    if (!run || !playbook) return sendNotFound(reply, caller, 'No such run or playbook');
    if (!operatesOn(caller, run.playbook)) return refuseOn(reply, caller, run.playbook);
    try {
      await launcher.resume(playbook, run, {}, caller.token.name);
    } catch (error) {
      const message = scrub(isFleetbookError(error) ? error.message : String(error));
      return sendMessage(reply, caller, 'Not resumed', html`<p class="error">${message}</p>`, 409);
    }
    return reply.redirect(runPath(run.id), 303);
  });
}

/** Refusals of the decider by the gate's policy (403, as the API answers them). */
const NOT_THIS_DECIDER = new Set(['NOT_AN_APPROVER', 'APPROVER_IS_REQUESTER']);

/**
 * The gate's form as the approver left it, typed as the gate declares it (`formInputs`, as the
 * CLI's `-i`): a field left empty or at its default is not sent, so the gate's default applies
 * (and a required one left empty is refused by the same check as the API's).
 */
function gateFormValues(wait: WaitRecord | undefined, body: Record<string, unknown>): Record<string, unknown> {
  if (!wait) return {};
  const fields = new Map(gateForm(wait).map((input) => [input.name, input]));
  const text: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [key, raw] of Object.entries(body)) {
    const input = key.startsWith('input.') ? fields.get(key.slice('input.'.length)) : undefined;
    if (!input || typeof raw !== 'string' || raw.trim() === '' || raw === defaultText(input)) continue;
    text[input.name] = raw;
  }
  return formInputs(wait, text);
}

/** Approve and Deny of a waiting gate, with the form's comment (Deny's is required by the form). */
function registerDecisions(context: UiContext): void {
  const { app, store, catalog, launcher, scrub, formCaller } = context;
  for (const decision of ['approved', 'denied'] as const) {
    app.post(`/runs/:runId/${decision === 'approved' ? 'approve' : 'deny'}`, async (request, reply) => {
      const caller = await formCaller(request, reply, 'operator', true);
      if (!caller) return reply;
      const run = await store.getRun((request.params as { runId: string }).runId);
      if (!run) return sendNotFound(reply, caller, 'No such run');
      if (!operatesOn(caller, run.playbook)) return refuseOn(reply, caller, run.playbook);
      const body = request.body as Record<string, unknown>;
      const comment = String(body.comment ?? '').trim();
      try {
        // Read inside the try: a value its type cannot read is refused as the API refuses it.
        const inputs = decision === 'approved' ? gateFormValues(run.wait, body) : {};
        await launcher.decide(await catalog.find(run.playbook), {
          runId: run.id,
          decision,
          by: caller.token.name,
          // A signed-in user's groups, for a gate's `approvers.groups`; a token's session has none.
          ...(caller.token.groups ? { groups: caller.token.groups } : {}),
          actor: {
            kind: 'token',
            name: caller.token.name,
            role: caller.token.role,
            tokenId: caller.token.id,
            address: request.ip,
          },
          ...(comment === '' ? {} : { comment }),
          ...(Object.keys(inputs).length === 0 ? {} : { inputs }),
        });
      } catch (error) {
        if (!isFleetbookError(error)) throw error;
        const more = html`<p class="error">${scrub(error.message)}</p>
          <p><a href="${runPath(run.id)}">Back to the run</a></p>`;
        // The decision stands when only the run's continuation failed (its secret inputs are gone with a restart).
        const title = error.code === 'SECRET_INPUT_MISSING' ? 'Recorded, not continued' : 'Not recorded';
        // Who may not decide is refused as the API refuses them; a bad form is 400; anything else is the gate's state.
        return sendMessage(
          reply,
          caller,
          title,
          more,
          NOT_THIS_DECIDER.has(error.code) ? 403 : error.code === 'INVALID_APPROVAL_INPUTS' ? 400 : 409,
        );
      }
      return reply.redirect(runPath(run.id), 303);
    });
  }
}
