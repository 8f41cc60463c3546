/**
 * The playbook page's source and outline: the YAML file as written (escaped, no highlighting)
 * and the steps as a nested list (id, kind; a loop's or block's steps under it, a rescue and an
 * always marked). The outline walks nested steps through the step registry (`childStepsOf`), as
 * every walk of nested steps does. Both are pure renderers.
 */
import { readFile } from 'node:fs/promises';
import type { Playbook, Step } from '../../playbook/index.js';
import { createStepRegistry, type StepRegistry } from '../../steps/index.js';
import { html, type Html } from './html.js';

let registry: StepRegistry | undefined;

/** The outline of `steps`, each nested list under the step it belongs to. */
export function stepOutline(steps: readonly Step[], kinds: StepRegistry = (registry ??= createStepRegistry())): Html {
  if (steps.length === 0) return html``;
  return html`<ol class="outline">
    ${steps.map((step) => {
      const children = kinds.childStepsOf(step);
      const nested = children.sequences.map((sequence, index) =>
        children.sequences.length > 1
          ? html`<li class="branch">branch ${String(index + 1)}${stepOutline(sequence, kinds)}</li>`
          : html`${stepOutline(sequence, kinds)}`,
      );
      const part = (label: string, list: readonly Step[]) =>
        list.length === 0 ? '' : html`<div class="part">${label}${stepOutline(list, kinds)}</div>`;
      return html`<li data-step="${step.id}">
        <code>${step.id}</code> <span class="kind">${step.kind}</span>
        ${
          children.sequences.length > 1
            ? html`<ol class="outline">
                ${nested}
              </ol>`
            : nested
        }
        ${part('rescue', children.rescue)} ${part('always', children.always)}
      </li>`;
    })}
  </ol>`;
}

/** The secret inputs' values written in the file (a schedule's inputs): never shown. */
function writtenSecrets(playbook: Pick<Playbook, 'inputs' | 'schedules'>): string[] {
  const secret = Object.entries(playbook.inputs)
    .filter(([, spec]) => spec.secret)
    .map(([name]) => name);
  return playbook.schedules.flatMap((schedule) =>
    secret
      .map((name) => schedule.inputs[name])
      .filter((value): value is string => typeof value === 'string' && value !== ''),
  );
}

/**
 * The playbook's YAML as written, escaped by `html`, its secret inputs' values (a schedule's)
 * and the server's known secrets (`scrub`) redacted; a file that cannot be read says so.
 */
export async function playbookSource(
  playbook: Pick<Playbook, 'source' | 'inputs' | 'schedules'>,
  scrub: (text: string) => string,
): Promise<Html> {
  const text = await readFile(playbook.source, 'utf8').catch(() => undefined);
  if (text === undefined) return html`<p class="meta">The file cannot be read now.</p>`;
  const shown = writtenSecrets(playbook).reduce((current, value) => current.replaceAll(value, '[REDACTED]'), text);
  return html`<pre class="source"><code>${scrub(shown)}</code></pre>`;
}
