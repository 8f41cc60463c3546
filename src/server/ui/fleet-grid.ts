/**
 * A loop's items at a glance (`/runs/:runId/items?loop=systems`): one cell per item with its
 * status (symbol and colour) and label, counts per status that filter the grid, and pages of
 * `CELLS_PER_PAGE`. Read from the journal folded without values, continuing the view the store
 * kept of a finished fleet's run: a 10,000-item run is read once, not its 800 MB of values.
 */
import { foldJournalView, itemKind, type JournalView, type RunRecord, type StepRecord } from '../../store/index.js';
import { html, type Html } from './html.js';
import { page, send, sendNotFound, symbolOf } from './layout.js';
import type { UiContext } from './ui-context.js';

/** Cells of one page of the grid: a screen or two of a fleet. */
export const CELLS_PER_PAGE = 500;

/** One loop of a run, for the grid's loop picker: its path and how many items it journaled. */
export interface LoopSummary {
  path: string;
  items: number;
}

/** What one page of the grid shows. */
export interface GridModel {
  loops: LoopSummary[];
  loop: string | undefined;
  /** Items of the loop per status, in the order statuses first appear. */
  counts: Array<{ status: string; count: number }>;
  status: string | undefined;
  /** Items matching the status filter (all of the loop's without one). */
  matching: number;
  pageNumber: number;
  cells: Array<{ index: number; status: string; label: string | undefined }>;
}

/** `systems[12]` → { loop: 'systems', index: 12 }; a step's path → undefined. */
function itemPlace(record: StepRecord): { loop: string; index: number } | undefined {
  if (record.kind !== itemKind) return undefined;
  const match = /^(.*)\[(\d+)\]$/.exec(record.path);
  return match?.[1] === undefined ? undefined : { loop: match[1], index: Number(match[2]) };
}

/** The grid of `loop` (default: the run's first loop) from a run's step records: pure, for tests without a server. */
export function gridModel(
  records: readonly StepRecord[],
  query: { loop?: string; status?: string; page?: number },
): GridModel {
  const byLoop = new Map<string, Array<{ index: number; status: string; label: string | undefined }>>();
  for (const record of records) {
    const place = itemPlace(record);
    if (!place) continue;
    let items = byLoop.get(place.loop);
    if (!items) byLoop.set(place.loop, (items = []));
    items.push({ index: place.index, status: record.status, label: record.itemLabel });
  }
  const loops = [...byLoop].map(([path, items]) => ({ path, items: items.length }));
  const loop = query.loop !== undefined && byLoop.has(query.loop) ? query.loop : loops[0]?.path;
  const items = (loop === undefined ? [] : (byLoop.get(loop) ?? [])).sort((a, b) => a.index - b.index);
  const counts = new Map<string, number>();
  for (const item of items) counts.set(item.status, (counts.get(item.status) ?? 0) + 1);
  const status = query.status !== undefined && counts.has(query.status) ? query.status : undefined;
  const matching = status === undefined ? items : items.filter((item) => item.status === status);
  const lastPage = Math.max(0, Math.ceil(matching.length / CELLS_PER_PAGE) - 1);
  const pageNumber = Math.min(Math.max(0, query.page ?? 0), lastPage);
  return {
    loops,
    loop,
    counts: [...counts].map(([name, count]) => ({ status: name, count })),
    status,
    matching: matching.length,
    pageNumber,
    cells: matching.slice(pageNumber * CELLS_PER_PAGE, (pageNumber + 1) * CELLS_PER_PAGE),
  };
}

export function registerFleetGrid(context: UiContext): void {
  const { app, store, scrub, pageCaller } = context;
  app.get('/runs/:runId/items', async (request, reply) => {
    const caller = await pageCaller(request, reply);
    if (!caller) return reply;
    const run = await store.getRun((request.params as { runId: string }).runId);
    if (!run) return sendNotFound(reply, caller, 'No such run');
    const query = request.query as { loop?: string; status?: string; page?: string };
    const kept: JournalView | undefined = await store.journalView(run.id);
    const view = await foldJournalView(store, run.id, kept);
    const model = gridModel(view.records, {
      ...(query.loop ? { loop: query.loop } : {}),
      ...(query.status ? { status: query.status } : {}),
      page: Number.parseInt(query.page ?? '0', 10) || 0,
    });
    // Labels come from the items' values: a secret among them is masked as everywhere else.
    for (const cell of model.cells) if (cell.label !== undefined) cell.label = scrub(cell.label);
    return send(reply, page(caller, `${run.playbook} items`, renderGrid(run, model)));
  });
}

const gridHref = (run: RunRecord, loop: string, extra: { status?: string; page?: number } = {}): string => {
  const search = new URLSearchParams({ loop });
  if (extra.status !== undefined) search.set('status', extra.status);
  if (extra.page !== undefined && extra.page > 0) search.set('page', String(extra.page));
  return `/runs/${encodeURIComponent(run.id)}/items?${search.toString()}`;
};

/** The grid page's body. */
export function renderGrid(run: RunRecord, model: GridModel): Html {
  const runHref = `/runs/${encodeURIComponent(run.id)}`;
  const heading = html`<h1>
    <a href="${runHref}">${run.playbook}</a> ·
    ${model.loop === undefined ? 'no loop' : html`<code>${model.loop}</code>`}
  </h1>`;
  if (model.loop === undefined)
    return html`${heading}
      <p class="empty">This run has no loop items journaled yet.</p>`;
  const loop = model.loop;
  const total = model.counts.reduce((sum, entry) => sum + entry.count, 0);
  const filters = html`<nav class="grid-filters" aria-label="Filter items by status">
    <a href="${gridHref(run, loop)}" ${model.status === undefined ? html`aria-current="page"` : ''}>all ${total}</a>
    ${model.counts.map(
      ({ status, count }) =>
        html`<a
          href="${gridHref(run, loop, { status })}"
          class="status-${status}"
          ${model.status === status ? html`aria-current="page"` : ''}
          >${symbolOf(status)} ${status} ${count}</a
        >`,
    )}
  </nav>`;
  const from = model.pageNumber * CELLS_PER_PAGE;
  const shown = html`<p class="grid-range">
    Items ${model.cells.length === 0 ? 0 : from + 1}–${from + model.cells.length} of ${model.matching}
    ${model.pageNumber > 0 ? html`<a href="${gridHref(run, loop, { ...statusOf(model), page: model.pageNumber - 1 })}">Previous</a>` : ''}
    ${from + CELLS_PER_PAGE < model.matching ? html`<a href="${gridHref(run, loop, { ...statusOf(model), page: model.pageNumber + 1 })}">Next</a>` : ''}
  </p>`;
  return html`${heading} ${loopPicker(run, model)} ${filters} ${shown}
    <ol class="grid" aria-label="Items of ${loop}">
      ${model.cells.map(
        (cell) =>
          html`<li class="cell status-${cell.status}" title="[${cell.index}] ${cell.label ?? ''} ${cell.status}">
            <span aria-hidden="true">${symbolOf(cell.status)}</span>
            <span class="cell-label">${cell.label ?? `[${cell.index}]`}</span>
            <span class="visually-hidden">${cell.status}</span>
          </li>`,
      )}
    </ol>`;
}

const statusOf = (model: GridModel): { status?: string } =>
  model.status === undefined ? {} : { status: model.status };

function loopPicker(run: RunRecord, model: GridModel): Html | '' {
  if (model.loops.length < 2) return '';
  return html`<nav class="grid-loops" aria-label="Loops">
    ${model.loops.map(
      (loop) =>
        html`<a href="${gridHref(run, loop.path)}" ${loop.path === model.loop ? html`aria-current="page"` : ''}
          ><code>${loop.path}</code> (${loop.items})</a
        >`,
    )}
  </nav>`;
}

/** The run page's links to its loops' grids (none when the run has no loop items). */
export function gridLinks(run: RunRecord, records: readonly StepRecord[]): Html | '' {
  const loops = gridModel(records, {}).loops;
  if (loops.length === 0) return '';
  return html`<p class="grid-links">
    Items at a glance:
    ${loops.map((loop) => html`<a href="${gridHref(run, loop.path)}"><code>${loop.path}</code> (${loop.items})</a> `)}
  </p>`;
}
