/**
 * A run's page: its facts, the forms that act on it (resume, approve or deny, cancel), its
 * inputs and outputs, the SVG timeline, the step tree and the newest log lines, each a fragment
 * of run-fragments.ts. run.js keeps it live (run-live.ts) with the same fragments.
 */
import { page, send, sendNotFound } from './layout.js';
import { runFragments, runSection } from './run-fragments.js';
import { listRunFiles } from '../run-files.js';
import { rerunsOf } from './rerun.js';
import type { UiContext } from './ui-context.js';

/** The page of a long loop's items asked for (`?page=`), 0 when absent or not a number. */
export const pageNumberOf = (query: unknown): number =>
  Math.max(0, Number.parseInt((query as { page?: string }).page ?? '0', 10) || 0);

export function registerRunPage(context: UiContext): void {
  const { app, store, scrub, pageCaller } = context;
  app.get('/runs/:runId', async (request, reply) => {
    const caller = await pageCaller(request, reply);
    if (!caller) return reply;
    const run = await store.getRun((request.params as { runId: string }).runId);
    if (!run) return sendNotFound(reply, caller, 'No such run');
    // One read of the journal, folded once for every fragment (the store's `steps` would read it again).
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
    return send(reply, page(caller, `${run.playbook} ${run.status}`, runSection(run, parts), { script: 'run.js' }));
  });
}
