/** The run page's panel of a waiting run: what it waits for and, at an approval gate, Approve and Deny. */
import { approvalProgress } from '../../engine/index.js';
import { RunStatus, type RunRecord } from '../../store/index.js';
import type { Scrub } from '../views.js';
import { formatTime } from './format.js';
import { html, type Html } from './html.js';
import { csrfField, operatesOn, type Caller } from './layout.js';

/** A waiting approval: what it asks, and Approve / Deny for an operator (who may be refused as no approver). */
export function approvalPanel(run: RunRecord, caller: Caller, scrub: Scrub): Html {
  const wait = run.wait;
  if (run.status !== RunStatus.waiting || !wait) return html``;
  if (wait.reason !== 'approval')
    return html`<p class="waiting" role="status">
      Waiting for ${wait.reason}${wait.until ? html` until <time>${formatTime(wait.until)}</time>` : ''} at
      ${wait.path}.
    </p>`;
  return html`<section class="approval" aria-labelledby="approval-title">
    <h2 id="approval-title">Approval waiting at ${wait.path}</h2>
    ${wait.message ? html`<p>${scrub(wait.message)}</p>` : ''}
    <p class="meta">
      Since
      ${formatTime(wait.since)}${wait.timeoutAt ? html`, times out ${formatTime(wait.timeoutAt)}` : ''}${
        wait.approvers ? html`; approvers: ${wait.approvers.join(', ')}` : ''
      }
    </p>
    <p class="approvals" role="status">${approvalProgress(wait, run.trigger.by)}</p>
    ${operatesOn(caller, run.playbook) ? decideForms(run, caller) : html`<p>Deciding needs the operator role for ${run.playbook}.</p>`}
  </section>`;
}

function decideForms(run: RunRecord, caller: Caller): Html {
  const base = `/runs/${encodeURIComponent(run.id)}`;
  return html`<div class="decide">
    <form method="post" action="${base}/approve">
      ${csrfField(caller)}
      <label for="approve-comment">Comment (optional)</label>
      <input id="approve-comment" name="comment" type="text" />
      <button type="submit">Approve</button>
    </form>
    <form method="post" action="${base}/deny">
      ${csrfField(caller)}
      <label for="deny-comment">Why deny (required)</label>
      <input id="deny-comment" name="comment" type="text" required />
      <button type="submit" class="danger">Deny</button>
    </form>
  </div>`;
}
