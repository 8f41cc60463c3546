/**
 * A run's page: its facts, the forms that act on it (resume, approve or deny, cancel), its
 * inputs and outputs, the SVG timeline, the step tree and the newest log lines. run.js keeps it
 * live (run-live.ts).
 */
import { buildStepTree, foldJournal, RunStatus, type RunRecord } from '../../store/index.js';
import { isLiveStatus } from '../journal-hub.js';
import { roleAllows } from '../tokens.js';
import { logLines, runView, type LogLine, type RunView, type Scrub } from '../views.js';
import { approvalPanel } from './approval-panel.js';
import { formatDuration, formatTime, json, triggerText } from './format.js';
import { html, trusted, type Html } from './html.js';
import { badge, csrfField, page, send, sendNotFound, type Caller } from './layout.js';
import { rerunRow, rerunsOf } from './rerun.js';
import { stepTree } from './run-steps.js';
import { progressByPath, renderTimeline, timelineRows } from './timeline.js';
import type { UiContext } from './ui-context.js';

/** Log lines a run page shows (the newest). */
const LOG_LINES_SHOWN = 300;

export function registerRunPage(context: UiContext): void {
  const { app, store, scrub, pageCaller } = context;
  app.get('/runs/:runId', async (request, reply) => {
    const caller = await pageCaller(request, reply);
    if (!caller) return reply;
    const run = await store.getRun((request.params as { runId: string }).runId);
    if (!run) return sendNotFound(reply, caller, 'No such run');
    const pageNumber = Math.max(0, Number.parseInt((request.query as { page?: string }).page ?? '0', 10) || 0);
    const parts = await runParts(context, run, pageNumber);
    const reruns = await rerunsOf(store, run);
    const view = scrub(runView(run));
    const body = html`<section
      class="run"
      data-run-id="${run.id}"
      data-last-seq="${parts.lastSeq}"
      data-live="${isLiveStatus(run.status) ? 'yes' : 'no'}"
    >
      <h1>${run.playbook} <span id="run-status">${badge(run.status)}</span></h1>
      ${runFacts(run, view)} ${run.error ? html`<p class="error" role="alert">${run.error.message}</p>` : ''}
      ${runForms(run, caller, scrub)} ${rerunRow(run, caller, reruns)} ${runValues(view)}
      <h2>Timeline</h2>
      <div id="timeline" class="timeline-box" aria-live="off">${parts.timeline}</div>
      <div class="columns">
        <div>
          <h2>Steps</h2>
          <div class="tree">${parts.tree}</div>
        </div>
        <div>
          <h2>Log</h2>
          ${logList(parts.log)}
        </div>
      </div>
    </section>`;
    return send(reply, page(caller, `${run.playbook} ${run.status}`, body, { script: 'run.js' }));
  });
}

async function runParts({ store, scrub }: UiContext, run: RunRecord, pageNumber: number) {
  // One read of the journal, folded here (the store's `steps` would read it again).
  const journal = await store.journal(run.id);
  const tree = buildStepTree(foldJournal(journal));
  const rows = timelineRows(tree, progressByPath(journal));
  return {
    // The SVG's texts are escaped where renderTimeline writes them.
    timeline: trusted(renderTimeline(run, rows, Date.now())),
    tree: stepTree(tree, pageNumber, scrub),
    log: scrub(logLines(journal, LOG_LINES_SHOWN)),
    lastSeq: journal.at(-1)?.seq ?? 0,
  };
}

function runFacts(run: RunRecord, view: RunView): Html {
  return html`<dl class="facts">
    <dt>Run</dt>
    <dd><code>${run.id}</code></dd>
    <dt>Trigger</dt>
    <dd>${triggerText(run)}</dd>
    <dt>Started</dt>
    <dd>${formatTime(run.startedAt)}</dd>
    <dt>Duration</dt>
    <dd id="run-duration">${view.durationMs === undefined ? 'still going' : formatDuration(view.durationMs)}</dd>
    ${
      run.resumes > 0
        ? html`<dt>Resumed</dt>
            <dd>${run.resumes}×</dd>`
        : ''
    }
  </dl>`;
}

/** Resume (an interrupted run), the approval panel (a waiting one), Cancel (a live or interrupted one). */
function runForms(run: RunRecord, caller: Caller, scrub: Scrub): Html {
  const operator = roleAllows(caller.token.role, 'operator');
  const action = `/runs/${encodeURIComponent(run.id)}`;
  const resume =
    run.status === RunStatus.interrupted && operator
      ? html`<form method="post" action="${action}/resume" class="actions">
          ${csrfField(caller)}
          <button type="submit">Resume the run</button>
        </form>`
      : '';
  const cancel =
    (isLiveStatus(run.status) || run.status === RunStatus.interrupted) && operator
      ? html`<form method="post" action="${action}/cancel" class="actions">
          ${csrfField(caller)}
          <button type="submit" class="danger">Cancel the run</button>
        </form>`
      : '';
  return html`${resume} ${approvalPanel(run, caller, scrub)} ${cancel}`;
}

/** The run's inputs and, once it has them, its outputs (scrubbed). */
function runValues(view: RunView): Html {
  return html`<details class="inputs">
      <summary>Inputs</summary>
      <pre>${json(view.inputs)}</pre>
    </details>
    ${
      view.outputs === undefined
        ? ''
        : html`<details class="inputs" open>
            <summary>Outputs</summary>
            <pre>${json(view.outputs)}</pre>
          </details>`
    }`;
}

function logList(lines: readonly LogLine[]): Html {
  return html`<ol id="log" class="log">
    ${lines.map(
      (line) =>
        html`<li class="${line.level}">
          <time>${line.at.slice(11, 19)}</time> <span class="path">${line.path}</span> ${line.message}
        </li>`,
    )}
  </ol>`;
}
