/**
 * `/approvals`: the inbox of the gates waiting for a decision the caller may give (the API's
 * `GET /api/v1/approvals`), each with its run, playbook, message, since when, its deadline and
 * who started the run, and a link to the run's page, where the gate is decided.
 */
import { pendingApprovals, type PendingApproval } from '../approvals-inbox.js';
import { roleAllows } from '../tokens.js';
import { formatTime } from './format.js';
import { html, type Html } from './html.js';
import { page, send } from './layout.js';
import type { UiContext } from './ui-context.js';

/** The inbox's table, a pure function of its rows. */
export function approvalsTable(rows: readonly PendingApproval[]): Html {
  if (rows.length === 0) return html`<p class="empty">No gate waits for your decision.</p>`;
  return html`<table class="approvals">
    <thead>
      <tr>
        <th>Run</th>
        <th>Playbook</th>
        <th>Gate</th>
        <th>Message</th>
        <th>Waiting since</th>
        <th>Deadline</th>
        <th>Started by</th>
      </tr>
    </thead>
    <tbody>
      ${rows.map(
        (row) =>
          html`<tr>
            <td>
              <a href="${row.link}"><code>${row.runId.slice(0, 8)}</code></a>
            </td>
            <td>${row.playbook}</td>
            <td><code>${row.gate}</code></td>
            <td>${row.message ?? ''}</td>
            <td><time datetime="${row.since}">${formatTime(row.since)}</time></td>
            <td>
              ${
                row.deadline
                  ? html`<time datetime="${row.deadline}">${formatTime(row.deadline)}</time>${
                        row.onTimeout ? html` (then ${row.onTimeout})` : ''
                      }`
                  : 'none'
              }
            </td>
            <td>${row.startedBy}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

export function registerApprovalsPage(context: UiContext): void {
  const { app, store, scrub, pageCaller } = context;
  app.get('/approvals', async (request, reply) => {
    const caller = await pageCaller(request, reply);
    if (!caller) return reply;
    const rows = scrub(await pendingApprovals(store, caller.token));
    const note = roleAllows(caller.token.role, 'operator')
      ? ''
      : html`<p>Deciding gates needs the operator role; you are ${caller.token.role}.</p>`;
    const body = html`<h1>Approvals</h1>
      ${note} ${approvalsTable(rows)}`;
    return send(reply, page(caller, 'Approvals', body, { refreshSeconds: 30 }));
  });
}
