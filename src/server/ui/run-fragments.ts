/**
 * The run page as fragments, each a pure function of the run's record and journal (run-state.ts):
 * the page (run-page.ts) is these fragments in their places, and the live page (static/run.js)
 * asks for them again when an event comes and swaps each one that changed (run-live.ts). One
 * renderer for both, so a live page says what a reload would.
 */
import type { JournalEntry, RunRecord } from '../../store/index.js';
import { RunStatus } from '../../store/index.js';
import { isLiveStatus } from '../journal-hub.js';
import type { RunFile } from '../run-files.js';
import { runView, type LogLine, type RunView, type Scrub } from '../views.js';
import { approvalPanel } from './approval-panel.js';
import { formatDuration, formatTime, triggerText } from './format.js';
import { html, trusted, type Html } from './html.js';
import { gridLinks } from './fleet-grid.js';
import { badge, csrfField, operatesOn, type Caller } from './layout.js';
import { rerunRow } from './rerun.js';
import { runFilesSection } from './run-files-page.js';
import { runPageState, type DecisionView } from './run-state.js';
import { stepTree } from './run-steps.js';
import { progressByPath, renderTimeline, timelineRows } from './timeline.js';
import { valueView } from './values.js';

/** Log lines a run page shows (the newest). */
const LOG_LINES_SHOWN = 300;

/** The fragments of a run page, by the id of the element each fills. */
export const FRAGMENT_IDS = [
  'run-status',
  'run-summary',
  'run-forms',
  'run-values',
  'run-files',
  'timeline',
  'steps',
  'log',
] as const;
export type FragmentId = (typeof FRAGMENT_IDS)[number];

export interface RunPageInput {
  run: RunRecord;
  journal: readonly JournalEntry[];
  caller: Caller;
  scrub: Scrub;
  /** The page of a long loop's items the step tree shows. */
  pageNumber: number;
  /** Where the bars of what still runs (and an open wait) end. */
  nowMs: number;
  /** The files the run wrote to its outputs folder (run-files.ts). */
  files: readonly RunFile[];
  /** The runs that run this one again (rerun.ts), linked beside its "Run again" and "Retry failed". */
  reruns: readonly RunRecord[];
}

export interface RunFragments {
  fragments: Record<FragmentId, Html>;
  lastSeq: number;
  live: boolean;
}

export function runFragments(input: RunPageInput): RunFragments {
  const { run, journal, caller, scrub, pageNumber, nowMs, files, reruns } = input;
  const state = runPageState(run, journal, LOG_LINES_SHOWN);
  const view = scrub(runView(run));
  const rows = timelineRows(state.tree, progressByPath(journal), state.waits);
  return {
    fragments: {
      'run-status': badge(run.status),
      'run-summary': html`${runFacts(run, view, scrub(state.decisions))}
      ${run.error ? html`<p class="error" role="alert">${run.error.message}</p>` : ''}`,
      'run-forms': html`${runForms(run, caller, scrub)} ${rerunRow(run, caller, reruns)}`,
      'run-values': runValues(view),
      'run-files': html`${runFilesSection(run.id, files)} ${gridLinks(run, state.records)}`,
      // The SVG's texts are escaped where renderTimeline writes them.
      timeline: trusted(renderTimeline(run, rows, nowMs)),
      steps: stepTree(state.tree, pageNumber, scrub),
      log: logList(scrub(state.log)),
    },
    lastSeq: state.lastSeq,
    live: isLiveStatus(run.status),
  };
}

/** The whole run section: each fragment in the element the live page swaps it into. */
export function runSection(run: RunRecord, parts: RunFragments): Html {
  const { fragments } = parts;
  return html`<section
    class="run"
    data-run-id="${run.id}"
    data-last-seq="${parts.lastSeq}"
    data-status="${run.status}"
    data-live="${parts.live ? 'yes' : 'no'}"
  >
    <h1>${run.playbook} <span id="run-status">${fragments['run-status']}</span></h1>
    <div id="run-summary">${fragments['run-summary']}</div>
    <div id="run-forms">${fragments['run-forms']}</div>
    <div id="run-values">${fragments['run-values']}</div>
    <div id="run-files">${fragments['run-files']}</div>
    <h2>Timeline</h2>
    <div id="timeline" class="timeline-box" aria-live="off">${fragments.timeline}</div>
    <div class="columns">
      <div>
        <h2>Steps</h2>
        <div id="steps" class="tree">${fragments.steps}</div>
      </div>
      <div>
        <h2>Log</h2>
        <div id="log">${fragments.log}</div>
      </div>
    </div>
  </section>`;
}

function decisionText(decision: DecisionView): Html {
  const what = decision.decision === 'timedOut' ? 'timed out' : `${decision.decision} by ${decision.by}`;
  return html`<li>
    <span class="path">${decision.path}</span>
    <span class="decision">${what}${decision.comment ? `: ${decision.comment}` : ''}</span>
    <time>${formatTime(decision.at)}</time>
  </li>`;
}

function runFacts(run: RunRecord, view: RunView, decisions: readonly DecisionView[]): Html {
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
    ${
      decisions.length > 0
        ? html`<dt>Decided</dt>
            <dd>
              <ul class="decisions">
                ${decisions.map(decisionText)}
              </ul>
            </dd>`
        : ''
    }
  </dl>`;
}

/** Resume (an interrupted run), the approval panel (a waiting one), Cancel (a live or interrupted one). */
function runForms(run: RunRecord, caller: Caller, scrub: Scrub): Html {
  const operator = operatesOn(caller, run.playbook);
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
  return html`<details class="inputs" data-key="inputs">
      <summary>Inputs</summary>
      ${valueView(view.inputs, 'inputs')}
    </details>
    ${
      view.outputs === undefined
        ? ''
        : html`<details class="inputs" data-key="outputs" open>
            <summary>Outputs</summary>
            ${valueView(view.outputs, 'outputs')}
          </details>`
    }`;
}

/** The log: the markup's own line breaks are not the message's, so only the message keeps its whitespace. */
function logList(lines: readonly LogLine[]): Html {
  return html`<ol class="log">
    ${lines.map(
      (line) =>
        html`<li class="${line.level}">
          <time>${line.at.slice(11, 19)}</time> <span class="path">${line.path}</span>
          <span class="message">${line.message}</span>
        </li>`,
    )}
  </ol>`;
}
