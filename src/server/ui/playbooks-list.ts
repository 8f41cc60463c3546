/** The playbooks page: a card per playbook, and the problems of the folder. */
import type { Problem } from '../../playbook/index.js';
import { playbookView, problemView } from '../views.js';
import { html, type Html } from './html.js';
import { markdown } from './markdown.js';
import { page, send } from './layout.js';
import type { UiContext } from './ui-context.js';

export function registerPlaybooksList(context: UiContext): void {
  const { app, catalog, scrub, root, pageCaller } = context;
  app.get('/playbooks', async (request, reply) => {
    const caller = await pageCaller(request, reply);
    if (!caller) return reply;
    const folder = await catalog.current();
    const body = html`<h1>Playbooks</h1>
      <ul class="cards">
        ${folder.playbooks.map((book) => {
          const view = scrub(playbookView(book, root));
          return html`<li class="card">
            <h2><a href="/playbooks/${encodeURIComponent(view.name)}">${view.name}</a></h2>
            <div class="description">${markdown(view.description)}</div>
            <p class="meta">
              ${view.inputs.length} input(s) · ${view.schedules.length} schedule(s) · <code>${view.file}</code>
            </p>
          </li>`;
        })}
      </ul>
      ${problemList(folder.problems, root)}`;
    return send(reply, page(caller, 'Playbooks', body));
  });
}

function problemList(found: readonly Problem[], root: string): Html | '' {
  const problems = found.map((problem) => problemView(problem, root));
  return problems.length === 0
    ? ''
    : html`<h2>Problems</h2>
        <ul class="problems">
          ${problems.map((problem) => html`<li class="${problem.severity}"><strong>${problem.severity}</strong> <code>${problem.file}:${problem.line}</code> ${problem.code}: ${problem.message}</li>`)}
        </ul>`;
}
