/**
 * A schedule's forms and what they post: "Trigger now" (operator; on the schedules page and a
 * playbook's page), Pause and Resume (admin).
 */
import { Door } from '../../admission/index.js';
import { isFleetbookError } from '../../errors/index.js';
import { HttpError } from '../app-error.js';
import { pauseSchedule, resumeSchedule, triggerSchedule } from '../schedule-actions.js';
import type { ScheduleView } from '../views.js';
import { html, type Html } from './html.js';
import { admissionCaller, csrfField, operatesOn, sendMessage, type Caller } from './layout.js';
import type { UiContext } from './ui-context.js';

/** "Trigger now" for a schedule (operator and up): a form with the session's CSRF token. */
export const triggerForm = (caller: Caller, key: string, playbook: string): Html | '' =>
  operatesOn(caller, playbook)
    ? html`<form method="post" action="/schedules/${encodeURIComponent(key)}/trigger" class="inline">
        ${csrfField(caller)}
        <button type="submit">Trigger ${key} now</button>
      </form>`
    : '';

/** Pause an active schedule, or resume a paused one (the caller is an admin). */
export const pauseForm = (caller: Caller, schedule: Pick<ScheduleView, 'key' | 'paused'>): Html =>
  html`<form
    method="post"
    action="/schedules/${encodeURIComponent(schedule.key)}/${schedule.paused ? 'resume' : 'pause'}"
    class="inline"
  >
    ${csrfField(caller)}
    <button type="submit">${schedule.paused ? 'Resume' : 'Pause'} ${schedule.key}</button>
  </form>`;

export function registerScheduleForms(context: UiContext): void {
  const { app, store, catalog, logger, formCaller } = context;
  for (const action of ['pause', 'resume'] as const) {
    app.post(`/schedules/:key/${action}`, async (request, reply) => {
      const caller = await formCaller(request, reply, 'admin');
      if (!caller) return reply;
      const key = (request.params as { key: string }).key;
      const deps = { store, catalog, logger };
      await (action === 'pause'
        ? pauseSchedule(deps, key, caller.token.name)
        : resumeSchedule(deps, key, caller.token.name));
      return reply.redirect('/schedules', 303);
    });
  }
  registerTrigger(context);
}

function registerTrigger(context: UiContext): void {
  const { app, store, catalog, launcher, logger, metrics, scrub, formCaller } = context;
  app.post('/schedules/:key/trigger', async (request, reply) => {
    const caller = await formCaller(request, reply, 'operator', true);
    if (!caller) return reply;
    const key = (request.params as { key: string }).key;
    const answer = (status: number, title: string, message: string) =>
      sendMessage(
        reply,
        caller,
        title,
        html`<p class="${status >= 400 ? 'error' : 'meta'}" role="alert">${scrub(message)}</p>
          <p><a href="/schedules">Back to the schedules</a></p>`,
        status,
      );
    try {
      const triggered = await triggerSchedule(
        { store, catalog, logger, launcher },
        key,
        admissionCaller(caller, Door.uiTrigger, request.ip),
      );
      if (triggered.outcome === 'queued')
        return answer(
          202,
          'Queued',
          `run ${triggered.behind} still goes and the overlap policy of ${key} is queue: the fire waits for it`,
        );
      metrics.runStarted(triggered.run.playbook);
      return reply.redirect(`/runs/${encodeURIComponent(triggered.run.id)}`, 303);
    } catch (error) {
      if (error instanceof HttpError) return answer(error.statusCode, 'Not triggered', error.message);
      if (isFleetbookError(error)) return answer(409, 'Not triggered', error.message);
      throw error;
    }
  });
}
