/**
 * The schedules page: each schedule's timing, state, the windows and freezes that apply, the
 * next fires that will run and those its windows or freezes will skip (marked, with why), the
 * last run and the last skip, times in the schedule's timezone with UTC beside. All of it is
 * the scheduler's overview (`scheduleOverview`), the one `fleetbook schedules` prints.
 */
import { scheduleOverview, type FireTime, type ScheduleOverview } from '../../scheduler/index.js';
import { highestRole, roleAllows, roleFor } from '../tokens.js';
import { formatTime } from './format.js';
import { html, type Html } from './html.js';
import { page, send, type Caller } from './layout.js';
import { pauseForm, triggerForm } from './schedule-forms.js';
import type { UiContext } from './ui-context.js';

/** Next fires shown per schedule. */
const FIRES_SHOWN = 3;

export function registerSchedulesPage(context: UiContext): void {
  const { app, store, catalog, pageCaller, scrub } = context;
  app.get('/schedules', async (request, reply) => {
    const caller = await pageCaller(request, reply);
    if (!caller) return reply;
    const schedules = scrub(
      await scheduleOverview((await catalog.current()).playbooks, store, FIRES_SHOWN, Date.now()),
    );
    const body = html`<h1>Schedules</h1>
      ${schedules.length === 0 ? html`<p class="empty">No playbook has a schedule.</p>` : schedulesTable(schedules, caller)}`;
    return send(reply, page(caller, 'Schedules', body));
  });
}

/** The schedules' table, a pure function of the overview and the caller's role. */
export function schedulesTable(schedules: readonly ScheduleOverview[], caller: Caller): Html {
  const canTrigger = roleAllows(highestRole(caller.token), 'operator');
  return html`<table class="schedules">
    <thead>
      <tr>
        <th scope="col">Schedule</th>
        <th scope="col">Playbook</th>
        <th scope="col">When</th>
        <th scope="col">State</th>
        <th scope="col">Windows and freezes</th>
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

/** A time in the schedule's timezone, UTC beside it. */
function fireText(fire: FireTime): Html {
  return html`<time datetime="${fire.utc}">${fire.local}</time> <span class="utc">(${formatTime(fire.utc)})</span>`;
}

/** The skipped fires and the runnable ones, in time order; the skipped marked with why. */
function firesCell(schedule: ScheduleOverview): Html {
  const paused = schedule.state?.paused === true;
  if (paused || !schedule.enabled) return html`<span class="meta">none while ${paused ? 'paused' : 'disabled'}</span>`;
  if (schedule.next.length === 0)
    return html`<span class="meta">none within 400 days falls inside its window and outside its freezes</span>`;
  const fires = [
    ...schedule.next.map((fire) => ({ fire, skipped: undefined as string | undefined })),
    ...schedule.skipped.map((fire) => ({ fire, skipped: fire.reason })),
  ].sort((a, b) => a.fire.utc.localeCompare(b.fire.utc));
  return html`<ul class="fires">
    ${fires.map(({ fire, skipped }) =>
      skipped === undefined
        ? html`<li class="fire">${fireText(fire)}</li>`
        : html`<li class="fire skipped"><s>${fireText(fire)}</s> skipped: ${skipped}</li>`,
    )}
  </ul>`;
}

function lastCell(schedule: ScheduleOverview): Html {
  const state = schedule.state;
  const run = state?.lastRunId
    ? html`<a href="/runs/${encodeURIComponent(state.lastRunId)}">${state.lastResult ?? 'run'}</a>${
          state.lastRunStartedAt ? html` <span class="utc">${formatTime(state.lastRunStartedAt)}</span>` : ''
        }`
    : html`never`;
  const skip = state?.lastSkip
    ? html`<p class="last-skip">
        last skip: fire of
        <time datetime="${state.lastSkip.scheduledAt}">${formatTime(state.lastSkip.scheduledAt)}</time>,
        ${state.lastSkip.reason}
      </p>`
    : '';
  return html`${run} ${skip}`;
}

function scheduleRow(schedule: ScheduleOverview, caller: Caller, canTrigger: boolean): Html {
  const paused = schedule.state?.paused === true;
  return html`<tr data-schedule="${schedule.key}">
    <td><strong>${schedule.key}</strong></td>
    <td>
      <a href="/playbooks/${encodeURIComponent(schedule.playbook)}">${schedule.playbook}</a>
    </td>
    <td><code>${schedule.cron}</code> ${schedule.timezone}</td>
    <td>${scheduleState(schedule)}</td>
    <td class="limits">
      ${
        schedule.limits.length === 0
          ? html`<span class="meta">none</span>`
          : html`<ul>
              ${schedule.limits.map((limit) => html`<li>${limit}</li>`)}
            </ul>`
      }
    </td>
    <td>${firesCell(schedule)}</td>
    <td>${lastCell(schedule)}</td>
    ${
      canTrigger
        ? html`<td class="actions">
            ${triggerForm(caller, schedule.key, schedule.playbook)}
            ${roleAllows(roleFor(caller.token), 'admin') ? pauseForm(caller, { key: schedule.key, paused }) : ''}
          </td>`
        : ''
    }
  </tr>`;
}

function scheduleState(schedule: ScheduleOverview): Html {
  const state = schedule.state;
  if (state?.paused)
    return html`<span class="badge status-interrupted">‖ paused${state.pausedBy ? ` by ${state.pausedBy}` : ''}</span>`;
  return schedule.enabled
    ? html`<span class="badge status-succeeded">▶ active</span>`
    : html`<span class="badge status-notStarted">disabled</span>`;
}
