/**
 * What keeps a run's page live (static/run.js): the run's events as a stream, and the page's
 * fragments rendered again from the journal (run-fragments.ts) as JSON.
 *
 * Why the client asks for the fragments instead of folding the events itself: one renderer, on
 * the server, draws both the loaded page and the live one, so they cannot disagree (a second
 * fold in the browser would have to follow every rule of `foldJournal`, the waits and the forms
 * a role may see). The event stream stays the API's (no HTML in it), and the script asks at
 * most twice a second however fast events come, so a busy run costs two renders a second per
 * viewer, not one per event. The script swaps only the fragments whose markup changed, so a
 * form being filled in (the gate's) is left alone while nothing about it changes.
 */
import { streamRunEvents } from '../run-events.js';
import { runFragments } from './run-fragments.js';
import { pageNumberOf } from './run-page.js';
import { listRunFiles } from '../run-files.js';
import { rerunsOf } from './rerun.js';
import type { UiContext } from './ui-context.js';

export function registerRunLive(context: UiContext): void {
  const { app, store, hub, scrub, metrics, pageCaller } = context;
  app.get('/runs/:runId/fragments', async (request, reply) => {
    const caller = await pageCaller(request, reply);
    if (!caller) return reply;
    const run = await store.getRun((request.params as { runId: string }).runId);
    if (!run) return reply.status(404).send('');
    const journal = await store.journal(run.id);
    const parts = runFragments({
      run,
      journal,
      caller,
      scrub,
      pageNumber: pageNumberOf(request.query),
      nowMs: Date.now(),
      files: await listRunFiles(context.outputsDir, run.id),
      reruns: await rerunsOf(store, run),
    });
    return reply.header('content-type', 'application/json; charset=utf-8').send({
      status: run.status,
      title: `${run.playbook} ${run.status} · Fleetbook`,
      live: parts.live,
      lastSeq: parts.lastSeq,
      fragments: Object.fromEntries(Object.entries(parts.fragments).map(([id, markup]) => [id, markup.text])),
    });
  });

  app.get('/runs/:runId/events', async (request, reply) => {
    const caller = await pageCaller(request, reply);
    if (!caller) return reply;
    const run = await store.getRun((request.params as { runId: string }).runId);
    if (!run) return reply.status(404).send('');
    const lastEventId = Number(
      (request.headers['last-event-id'] as string | undefined) ?? (request.query as { after?: string }).after ?? 0,
    );
    await streamRunEvents(reply, { hub, scrub, metrics }, run.id, Number.isInteger(lastEventId) ? lastEventId : 0);
    return reply;
  });
}
