/** The schedules page: each schedule's timing, state, next fires and last run, with its forms for the caller's role. */
import { highestRole, roleAllows, roleFor } from '../tokens.js';
import { scheduleViews, type ScheduleView } from '../views.js';
import { formatTime } from './format.js';
import { html, type Html } from './html.js';
import { page, send, type Caller } from './layout.js';
import { pauseForm, triggerForm } from './schedule-forms.js';
import type { UiContext } from './ui-context.js';

export function registerSchedulesPage(context: UiContext): void {
  const { app, store, catalog, pageCaller } = context;
  app.get('/schedules', async (request, reply) => {
    const caller = await pageCaller(request, reply);
    if (!caller) return reply;
    const schedules = await scheduleViews(store, (await catalog.current()).playbooks, 3, Date.now());
    const body = html`<h1>Schedules</h1>
      ${schedules.length === 0 ? html`<p class="empty">No playbook has a schedule.</p>` : schedulesTable(schedules, caller)}`;
    return send(reply, page(caller, 'Schedules', body));
  });
}

function schedulesTable(schedules: readonly ScheduleView[], caller: Caller): Html {
  const canTrigger = roleAllows(highestRole(caller.token), 'operator');
  return html`<table class="schedules">
    <thead>
      <tr>
        <th scope="col">Schedule</th>
        <th scope="col">Playbook</th>
        <th scope="col">When</th>
        <th scope="col">State</th>
        <th scope="col">Next fires</th>
        <th scope="col">Last run</th>
        ${canTrigger ? html`<th scope="col">Action</th>` : ''}
      </tr>
    </thead>
    <tbody>
      ${schedules.map((schedule) => scheduleRow(schedule, caller, canTrigger))}
    </tbody>
  </table>`;
}

function scheduleRow(schedule: ScheduleView, caller: Caller, canTrigger: boolean): Html {
  return html`<tr>
    <td><strong>${schedule.key}</strong></td>
    <td>
      <a href="/playbooks/${encodeURIComponent(schedule.playbook)}">${schedule.playbook}</a>
    </td>
    <td><code>${schedule.cron}</code> ${schedule.timezone}</td>
    <td>${scheduleState(schedule)}</td>
    <td>
      ${
        schedule.next.length === 0
          ? html`<span class="meta">none while ${schedule.paused ? 'paused' : 'disabled'}</span>`
          : schedule.next.map((at) => html`<time datetime="${at}">${formatTime(at)}</time><br />`)
      }
    </td>
    <td>
      ${schedule.lastRunId ? html`<a href="/runs/${encodeURIComponent(schedule.lastRunId)}">${schedule.lastResult ?? 'run'}</a>` : 'never'}
    </td>
    ${
      canTrigger
        ? html`<td class="actions">
            ${triggerForm(caller, schedule.key, schedule.playbook)}
            ${roleAllows(roleFor(caller.token), 'admin') ? pauseForm(caller, schedule) : ''}
          </td>`
        : ''
    }
  </tr>`;
}

function scheduleState(schedule: ScheduleView): Html {
  if (schedule.paused)
    return html`<span class="badge status-interrupted"
      >‖ paused${schedule.pausedBy ? ` by ${schedule.pausedBy}` : ''}</span
    >`;
  return schedule.enabled
    ? html`<span class="badge status-succeeded">▶ active</span>`
    : html`<span class="badge status-notStarted">disabled</span>`;
}
