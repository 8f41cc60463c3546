/**
 * What keeps a run's page live (static/run.js): the run's events as a stream, and the timeline
 * redrawn with its status and duration as JSON.
 */
import { buildStepTree, foldJournal } from '../../store/index.js';
import { isLiveStatus } from '../journal-hub.js';
import { streamRunEvents } from '../run-events.js';
import { runView } from '../views.js';
import { formatDuration } from './format.js';
import { symbolOf } from './layout.js';
import { progressByPath, renderTimeline, statusText, timelineRows } from './timeline.js';
import type { UiContext } from './ui-context.js';

export function registerRunLive(context: UiContext): void {
  const { app, store, hub, scrub, metrics, pageCaller } = context;
  app.get('/runs/:runId/timeline', async (request, reply) => {
    const caller = await pageCaller(request, reply);
    if (!caller) return reply;
    const run = await store.getRun((request.params as { runId: string }).runId);
    if (!run) return reply.status(404).send('');
    const journal = await store.journal(run.id);
    const tree = buildStepTree(foldJournal(journal));
    const view = runView(run);
    return reply.header('content-type', 'application/json; charset=utf-8').send({
      svg: renderTimeline(run, timelineRows(tree, progressByPath(journal)), Date.now()),
      status: run.status,
      statusText: statusText(run.status),
      symbol: symbolOf(run.status),
      live: isLiveStatus(run.status),
      duration: view.durationMs === undefined ? 'still going' : formatDuration(view.durationMs),
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
