/**
 * The run page's step tree: each step with its status, kind, attempts and duration, and (opened)
 * its input, outputs and error, scrubbed as rendered: a page shows 50 items of a loop, not the
 * 5,000 of the run.
 */
import type { StepNode } from '../../store/index.js';
import type { Scrub } from '../views.js';
import { formatDuration } from './format.js';
import { html, type Html } from './html.js';
import { badge } from './layout.js';
import { isItem } from './timeline.js';
import { valueView } from './values.js';

/** Items of one loop listed per page of the step tree. */
const ITEMS_PER_PAGE = 50;

export function stepTree(nodes: readonly StepNode[], pageNumber: number, scrub: Scrub): Html {
  const render = (list: readonly StepNode[]): Html => {
    const items = list.filter(isItem);
    const from = items.length > ITEMS_PER_PAGE ? pageNumber * ITEMS_PER_PAGE : 0;
    const shownItems = items.slice(from, from + ITEMS_PER_PAGE);
    const shown = [...list.filter((node) => !isItem(node)), ...shownItems].map((node) => ({
      ...node,
      ...scrub({ input: node.input, outputs: node.outputs, error: node.error }),
    }));
    return html`<ul>
      ${shown.map(
        (node) => html`<li>${stepDetails(node)} ${node.children.length > 0 ? render(node.children) : ''}</li>`,
      )}
      ${items.length > ITEMS_PER_PAGE ? morePages(pageNumber, from, shownItems.length, items.length) : ''}
    </ul>`;
  };
  return nodes.length === 0 ? html`<p class="empty">No steps journaled yet.</p>` : render(nodes);
}

/** Which items of a long loop this page shows, with links to the pages before and after. */
function morePages(pageNumber: number, from: number, shown: number, total: number): Html {
  return html`<li class="more">
    Items ${from}–${from + shown - 1} of ${total}.
    ${from > 0 ? html`<a href="?page=${pageNumber - 1}">Earlier items</a>` : ''}
    ${from + ITEMS_PER_PAGE < total ? html`<a href="?page=${pageNumber + 1}">Later items</a>` : ''}
  </li>`;
}

function stepDetails(node: StepNode): Html {
  return html`<details data-key="${node.path}">
    <summary>
      ${badge(node.status)} <span class="step">${node.label}</span> <span class="kind">${node.kind}</span>
      ${node.attempts > 1 ? html`<span class="attempts">${node.attempts} attempts</span>` : ''}
      <span class="duration">${formatDuration(node.durationMs)}</span>
    </summary>
    <div class="step-detail">
      ${node.error ? html`<p class="error">${node.error.message}${node.error.code ? html` <code>${node.error.code}</code>` : ''}</p>` : ''}
      ${
        node.input === undefined
          ? ''
          : html`<h4>Input</h4>
              ${valueView(node.input, `${node.path}:input`)}`
      }
      ${
        node.outputs === undefined
          ? ''
          : html`<h4>Outputs</h4>
              ${valueView(node.outputs, `${node.path}:outputs`)}`
      }
      ${node.asyncOperationId ? html`<p>Operation <code>${node.asyncOperationId}</code> ${node.operationOutcome ?? ''}</p>` : ''}
    </div>
  </details>`;
}
