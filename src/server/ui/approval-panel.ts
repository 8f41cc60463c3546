/**
 * The run page's panel of a waiting run: what it waits for and, at an approval gate, Approve
 * (with the gate's form: its declared inputs as fields, as on a playbook's start form) and Deny.
 */
import { approvalProgress } from '../../engine/index.js';
import { inputSpecs } from '../../playbook/index.js';
import { RunStatus, type RunRecord, type WaitRecord } from '../../store/index.js';
import { inputViews, type InputView, type Scrub } from '../views.js';
import { formatDuration, formatTime } from './format.js';
import { html, type Html } from './html.js';
import { csrfField, operatesOn, type Caller } from './layout.js';
import { inputField } from './start-form.js';

const AFTER_TIMEOUT: Record<string, string> = {
  fail: 'the gate fails',
  continue: 'the run goes on without a decision',
  skip: 'the gate is skipped',
};

/** The gate's form, as fields show it (secret inputs are typed in, never shown). */
export function gateForm(wait: Pick<WaitRecord, 'inputs'>): InputView[] {
  return inputViews(inputSpecs(wait.inputs ?? {}));
}

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
      ${formatTime(wait.since)}${
        wait.timeoutAt
          ? html`, times out ${formatTime(wait.timeoutAt)} (after
            ${formatDuration(Date.parse(wait.timeoutAt) - Date.parse(wait.since))}; then
            ${AFTER_TIMEOUT[wait.onTimeout ?? 'fail'] ?? wait.onTimeout})`
          : ''
      }${wait.approvers ? html`; approvers: ${wait.approvers.join(', ')}` : ''}
    </p>
    <p class="approvals" role="status">${approvalProgress(wait, run.trigger.by)}</p>
    ${operatesOn(caller, run.playbook) ? decideForms(run, wait, caller, scrub) : html`<p>Deciding needs the operator role for ${run.playbook}.</p>`}
  </section>`;
}

function decideForms(run: RunRecord, wait: WaitRecord, caller: Caller, scrub: Scrub): Html {
  const base = `/runs/${encodeURIComponent(run.id)}`;
  const fields = scrub(gateForm(wait));
  return html`<div class="decide">
    <form method="post" action="${base}/approve" class="${fields.length > 0 ? 'gate-form' : ''}">
      ${csrfField(caller)}
      ${
        fields.length > 0
          ? html`<fieldset>
              <legend>The gate's form</legend>
              ${fields.map((input) => inputField(input, {}))}
            </fieldset>`
          : ''
      }
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
