/**
 * A playbook's page: its description, the start form made from its inputs (operator), and its
 * schedules' next fires; and the form's POST, which starts the run or shows the form again,
 * with what was given and why it was refused.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Door } from '../../admission/index.js';
import { readSpilledInputs } from '../../engine/index.js';
import { isFleetbookError } from '../../errors/index.js';
import type { Playbook } from '../../playbook/index.js';
import { playbookView, scheduleViews, type PlaybookView, type ScheduleView } from '../views.js';
import { formatTime } from './format.js';
import { html, type Html } from './html.js';
import { markdown } from './markdown.js';
import { admissionCaller, csrfField, operatesOn, page, send, sendNotFound, type Caller } from './layout.js';
import { triggerForm } from './schedule-forms.js';
import { playbookSource, stepOutline } from './playbook-source.js';
import { inputField } from './start-form.js';
import type { UiContext } from './ui-context.js';

export function registerPlaybookStart(context: UiContext): void {
  const { app, catalog, pageCaller, formCaller } = context;
  app.get('/playbooks/:name', async (request, reply) => {
    const caller = await pageCaller(request, reply);
    if (!caller) return reply;
    return playbookPage(context, request, reply, caller);
  });

  app.post('/playbooks/:name/run', async (request, reply) => {
    const caller = await formCaller(request, reply, 'operator', true);
    if (!caller) return reply;
    const playbook = await catalog.find((request.params as { name: string }).name);
    if (!playbook) return sendNotFound(reply, caller, 'No such playbook');
    const given: Record<string, string> = {};
    try {
      const runId = await startRun(
        context,
        playbook,
        { ...caller, address: request.ip },
        (request.body ?? {}) as Record<string, unknown>,
        given,
      );
      return reply.redirect(`/runs/${encodeURIComponent(runId)}`, 303);
    } catch (error) {
      if (!isFleetbookError(error)) throw error;
      return playbookPage(context, request, reply, caller, context.scrub(error.message), given);
    }
  });
}

/** Starts a run with the form's inputs (an empty field takes the default); fills `given` with what to show again. */
async function startRun(
  { launcher, metrics, store }: UiContext,
  playbook: Playbook,
  caller: Caller & { address: string },
  body: Record<string, unknown>,
  given: Record<string, string>,
): Promise<string> {
  const inputs: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const [key, raw] of Object.entries(body)) {
    if (!key.startsWith('input.') || typeof raw !== 'string') continue;
    const name = key.slice('input.'.length);
    const spec = Object.hasOwn(playbook.inputs, name) ? playbook.inputs[name] : undefined;
    if (!spec?.secret) given[name] = raw;
    // An empty field takes the default.
    if (raw.trim() === '') continue;
    inputs[name] = (await import('../../engine/index.js')).parseInputText(spec, raw);
  }
  // "Run again" of a run: its form records the run it repeats (one of this playbook, or none).
  const named = typeof body.rerunOf === 'string' && body.rerunOf !== '' ? await store.getRun(body.rerunOf) : undefined;
  const rerunOf = named?.playbook === playbook.name ? named.id : undefined;
  const { run } = await launcher.start(
    {
      playbook,
      inputs,
      trigger: { kind: 'manual' },
      dryRun: body.dryRun === 'true',
      ...(rerunOf === undefined ? {} : { rerun: { of: rerunOf } }),
    },
    admissionCaller(caller, rerunOf === undefined ? Door.uiStart : Door.uiRerun, caller.address),
  );
  if (!run) throw new Error('a manual run is never queued behind another');
  metrics.runStarted(playbook.name);
  return run.id;
}

async function playbookPage(
  context: UiContext,
  request: FastifyRequest,
  reply: FastifyReply,
  caller: Caller,
  message?: string,
  given: Record<string, string> = {},
) {
  const { name } = request.params as { name: string };
  const playbook = await context.catalog.find(name);
  if (!playbook) return sendNotFound(reply, caller, 'No such playbook');
  const again = await runAgainOf(context, request, playbook.name);
  if (again && Object.keys(given).length === 0) Object.assign(given, again.given);
  const view = context.scrub(playbookView(playbook, context.root));
  const schedules = await scheduleViews(context.store, [playbook], 3, Date.now());
  const body = html`<h1>${view.name}</h1>
    <div class="description">${markdown(view.description)}</div>
    <p class="meta"><code>${view.file}</code></p>
    <div class="columns">
      <section>
        <h2>
          ${again ? html`Run again <a href="/runs/${encodeURIComponent(again.runId)}"><code>${again.runId}</code></a>` : 'Start a run'}
        </h2>
        ${message ? html`<p class="error" role="alert">${message}</p>` : ''}
        ${startForm(view, caller, given, again?.runId)}
      </section>
      <section>
        <h2>Schedules</h2>
        ${scheduleList(schedules, caller)}
      </section>
    </div>
    <div class="columns">
      <section>
        <h2>Steps</h2>
        ${stepOutline(playbook.steps)}
      </section>
      <section>
        <h2>Source</h2>
        ${await playbookSource(playbook, context.scrub)}
      </section>
    </div>`;
  return send(reply, page(caller, view.name, body), message ? 400 : 200);
}

/**
 * "Run again" (`?rerunOf=<run>`, or the form posted back): the run of this playbook it repeats
 * and its inputs as the form's text (its secret inputs were never stored: asked again).
 */
async function runAgainOf(
  context: UiContext,
  request: FastifyRequest,
  playbook: string,
): Promise<{ runId: string; given: Record<string, string> } | undefined> {
  const query = (request.query ?? {}) as { rerunOf?: unknown };
  const posted = (request.body ?? {}) as { rerunOf?: unknown };
  const runId = typeof query.rerunOf === 'string' ? query.rerunOf : posted.rerunOf;
  if (typeof runId !== 'string' || runId === '') return undefined;
  const run = await context.store.getRun(runId);
  if (run?.playbook !== playbook) return undefined;
  const inputs = context.scrub(await readSpilledInputs(run.inputs));
  const given = Object.fromEntries(
    Object.entries(inputs).map(([name, value]) => [name, typeof value === 'string' ? value : JSON.stringify(value)]),
  );
  return { runId: run.id, given };
}

function startForm(view: PlaybookView, caller: Caller, given: Record<string, string>, rerunOf?: string): Html {
  if (!operatesOn(caller, view.name)) return html`<p>Starting runs of ${view.name} needs the operator role for it.</p>`;
  return html`<form method="post" action="/playbooks/${encodeURIComponent(view.name)}/run" class="start">
    ${csrfField(caller)} ${rerunOf === undefined ? '' : html`<input type="hidden" name="rerunOf" value="${rerunOf}" />`}
    ${view.inputs.map((input) => inputField(input, given))}
    <div class="field">
      <label><input type="checkbox" name="dryRun" value="true" /> Dry run (reads only; writes are not sent)</label>
    </div>
    <button type="submit">Start run</button>
  </form>`;
}

/** The playbook's schedules, each with its next fires and "Trigger now". */
function scheduleList(schedules: readonly ScheduleView[], caller: Caller): Html {
  if (schedules.length === 0) return html`<p class="empty">No schedules.</p>`;
  return html`<ul class="schedules">
    ${schedules.map(
      (schedule) =>
        html`<li>
          <strong>${schedule.key}</strong> <code>${schedule.cron}</code> ${schedule.timezone}
          ${schedule.paused ? html`<span class="badge status-interrupted">paused</span>` : ''}
          ${triggerForm(caller, schedule.key, schedule.playbook)}
          <ul>
            ${schedule.next.map((at) => html`<li>next <time datetime="${at}">${formatTime(at)}</time></li>`)}
          </ul>
        </li>`,
    )}
  </ul>`;
}
