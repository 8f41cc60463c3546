/**
 * "Run again" and "Retry failed" on a run's page (operator), and the link between a rerun and
 * the run it repeats, on both pages. "Run again" opens the playbook's start form filled with the
 * run's inputs (never its secret ones), whose start records `trigger.rerunOf`; "Retry failed"
 * asks only the secret inputs the run was given and starts the retry (`rerunRequest`, door
 * `ui.rerun`): what succeeded is replayed from the old journal, the rest runs.
 */
import { Door, rerunRequest } from '../../admission/index.js';
import { isFleetbookError } from '../../errors/index.js';
import { RunStatus, type RunRecord, type RunStore } from '../../store/index.js';
import { isLiveStatus } from '../journal-hub.js';
import { html, type Html } from './html.js';
import { csrfField, operatesOn, sendMessage, sendNotFound, type Caller } from './layout.js';
import type { UiContext } from './ui-context.js';

const runPath = (runId: string) => `/runs/${encodeURIComponent(runId)}`;

/** Runs of the same playbook searched for the reruns of a run. */
const RERUNS_SEARCHED = 200;

/** Ended runs that something failed in: a retry of what failed is offered. */
const RETRIED: ReadonlySet<string> = new Set([RunStatus.failed, RunStatus.interrupted, RunStatus.cancelled]);

/** The newest runs that run `run` again, for its page's links. */
export async function rerunsOf(store: RunStore, run: RunRecord): Promise<RunRecord[]> {
  const recent = await store.listRuns({ playbook: run.playbook, limit: RERUNS_SEARCHED });
  return recent.filter((other) => other.trigger.rerunOf === run.id);
}

function secretFields(run: RunRecord): Html {
  const asked = run.secretInputNames.filter((name) => !run.defaultedSecretInputs.includes(name));
  return html`${asked.map(
    (name) =>
      html`<label
        >${name} (secret, not stored) <input name="secret.${name}" type="password" autocomplete="off" required
      /></label>`,
  )}`;
}

/** The row of buttons and links: Run again, Retry failed (operator, an ended run), and the reruns' links. */
export function rerunRow(run: RunRecord, caller: Caller, reruns: readonly RunRecord[]): Html {
  const operator = operatesOn(caller, run.playbook) && !isLiveStatus(run.status);
  const again = operator
    ? html`<a class="button" href="/playbooks/${encodeURIComponent(run.playbook)}?rerunOf=${encodeURIComponent(run.id)}"
        >Run again</a
      >`
    : '';
  const retry =
    operator && RETRIED.has(run.status)
      ? html`<form method="post" action="${runPath(run.id)}/rerun" class="actions retry">
          ${csrfField(caller)} <input type="hidden" name="failed" value="true" /> ${secretFields(run)}
          <button type="submit">Retry failed</button>
        </form>`
      : '';
  const of = run.trigger.rerunOf;
  const link =
    of === undefined
      ? ''
      : html`<p class="rerun-of">
          ${run.trigger.retriedFailed ? 'Retries what failed in run' : 'Runs again run'}
          <a href="${runPath(of)}"><code>${of}</code></a>
        </p>`;
  const later =
    reruns.length === 0
      ? ''
      : html`<p class="reruns">
          Run again as ${reruns.map((other) => html`<a href="${runPath(other.id)}"><code>${other.id}</code></a> `)}
        </p>`;
  return html`<div class="rerun-row">${again} ${retry} ${link} ${later}</div>`;
}

/** `POST /runs/:runId/rerun`: the page's "Retry failed" (and a run again with `failed` left out). */
export function registerRerun(context: UiContext): void {
  const { app, store, catalog, launcher, metrics, scrub, formCaller } = context;
  app.post('/runs/:runId/rerun', async (request, reply) => {
    const caller = await formCaller(request, reply, 'operator');
    if (!caller) return reply;
    const run = await store.getRun((request.params as { runId: string }).runId);
    const playbook = run && (await catalog.find(run.playbook));
    if (!run || !playbook) return sendNotFound(reply, caller, 'No such run or playbook');
    const body = (request.body ?? {}) as Record<string, unknown>;
    const secretInputs: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(body))
      if (key.startsWith('secret.') && typeof value === 'string' && value !== '')
        secretInputs[key.slice('secret.'.length)] = value;
    try {
      const asked = await rerunRequest(store, run, playbook, { failed: body.failed === 'true', secretInputs });
      const { run: started } = await launcher.start(asked, {
        name: caller.token.name,
        role: caller.token.role,
        door: Door.uiRerun,
      });
      if (!started) throw new Error('a rerun is never queued behind another');
      metrics.runStarted(playbook.name);
      return await reply.redirect(runPath(started.id), 303);
    } catch (error) {
      if (!isFleetbookError(error)) throw error;
      const more = html`<p class="error" role="alert">${scrub(error.message)}</p>
        <p><a href="${runPath(run.id)}">Back to the run</a></p>`;
      return sendMessage(reply, caller, 'Not started', more, 409);
    }
  });
}
