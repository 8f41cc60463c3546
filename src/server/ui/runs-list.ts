/** The runs page: the newest runs, filtered by status and playbook, refreshed every 10 s. */
import { RunStatus, type RunRecord } from '../../store/index.js';
import { isLiveStatus } from '../journal-hub.js';
import { runView } from '../views.js';
import { formatDuration, formatTime, triggerText } from './format.js';
import { html, type Html } from './html.js';
import { badge, page, selectedIf, send } from './layout.js';
import type { UiContext } from './ui-context.js';

const STATUS_FILTERS: RunStatus[] = Object.values(RunStatus);

export function registerRunsList(context: UiContext): void {
  const { app, store, catalog, pageCaller } = context;
  app.get('/runs', async (request, reply) => {
    const caller = await pageCaller(request, reply);
    if (!caller) return reply;
    const query = request.query as { status?: string; playbook?: string };
    const status = STATUS_FILTERS.find((candidate) => candidate === query.status);
    const playbook = query.playbook?.trim() || undefined;
    const runs = await store.listRuns({ limit: 100, ...(status ? { status } : {}), ...(playbook ? { playbook } : {}) });
    const names = (await catalog.current()).playbooks.map((book) => book.name);
    const body = html`<h1>Runs</h1>
      ${filters(status, playbook, names)}
      ${
        runs.length === 0
          ? html`<p class="empty">
              No runs${status || playbook ? ' match these filters' : ' yet: start one from a playbook'}.
            </p>`
          : runsTable(runs)
      }`;
    return send(reply, page(caller, 'Runs', body, { refreshSeconds: 10 }));
  });
}

function filters(status: string | undefined, playbook: string | undefined, names: readonly string[]): Html {
  return html`<form class="filters" method="get" action="/runs">
    <label for="status">Status</label>
    <select id="status" name="status">
      <option value="">any</option>
      ${STATUS_FILTERS.map((value) => html`<option value="${value}" ${selectedIf(value === status)}>${value}</option>`)}
    </select>
    <label for="playbook">Playbook</label>
    <select id="playbook" name="playbook">
      <option value="">any</option>
      ${names.map((name) => html`<option value="${name}" ${selectedIf(name === playbook)}>${name}</option>`)}
    </select>
    <button type="submit">Filter</button>
  </form>`;
}

function runsTable(runs: readonly RunRecord[]): Html {
  return html`<table class="runs">
    <thead>
      <tr>
        <th scope="col">Status</th>
        <th scope="col">Playbook</th>
        <th scope="col">Trigger</th>
        <th scope="col">Started</th>
        <th scope="col">Duration</th>
        <th scope="col">Run</th>
      </tr>
    </thead>
    <tbody>
      ${runs.map((run) => runRow(run))}
    </tbody>
  </table>`;
}

function runRow(run: RunRecord): Html {
  const view = runView(run);
  return html`<tr>
    <td>${badge(run.status)}</td>
    <td><a href="/runs/${encodeURIComponent(run.id)}">${run.playbook}</a></td>
    <td>${triggerText(run)}</td>
    <td><time datetime="${run.startedAt}">${formatTime(run.startedAt)}</time></td>
    <td>
      ${view.durationMs === undefined ? (isLiveStatus(run.status) ? 'still going' : '') : formatDuration(view.durationMs)}
    </td>
    <td><code>${run.id.slice(0, 8)}</code></td>
  </tr>`;
}
