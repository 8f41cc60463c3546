/**
 * The start form's fields, made from a playbook's input schema: a password field for a secret,
 * a choice for an `enum` or a boolean, a number field, JSON for a list or an object, else text.
 * An input's name is playbook text: it reaches the field's id, name and label only through
 * `html`, which escapes it in attributes as in text.
 */
import type { InputView } from '../views.js';
import { html, type Html } from './html.js';
import { selectedIf } from './layout.js';

/** The text a field shows for `input`'s default (empty without one): what a form sends when left as it is. */
export function defaultText(input: InputView): string {
  if (input.default === undefined) return '';
  return typeof input.default === 'string' ? input.default : JSON.stringify(input.default);
}

/** The field of `input`, holding what was `given` (a form shown again) or else its default. */
export function inputField(input: InputView, given: Record<string, string>): Html {
  const id = `input-${input.name}`;
  const value = given[input.name] ?? defaultText(input);
  const label = html`<label for="${id}"
    >${input.name}${input.required ? html` <span class="required">(required)</span>` : ''}</label
  >`;
  const help = input.description ? html`<p class="help" id="${id}-help">${input.description}</p>` : '';
  return html`<div class="field">${label}${control(input, id, value)}${help}</div>`;
}

function control(input: InputView, id: string, value: string): Html {
  const name = `input.${input.name}`;
  const described = input.description ? html` aria-describedby="${id}-help"` : '';
  if (input.secret) return html`<input id="${id}" name="${name}" type="password" autocomplete="off" ${described} />`;
  if (input.enum)
    return html`<select id="${id}" name="${name}" ${described}>
      ${input.required ? '' : html`<option value="">(default)</option>`}
      ${input.enum.map((option) => html`<option value="${String(option)}" ${selectedIf(String(option) === value)}>${String(option)}</option>`)}
    </select>`;
  if (input.type === 'boolean')
    return html`<select id="${id}" name="${name}" ${described}>
      <option value="true" ${selectedIf(value === 'true')}>true</option>
      <option value="false" ${selectedIf(value !== 'true')}>false</option>
    </select>`;
  if (input.type === 'integer' || input.type === 'number')
    return html`<input
      id="${id}"
      name="${name}"
      type="number"
      step="${input.type === 'integer' ? '1' : 'any'}"
      value="${value}"
      ${described}
    />`;
  if (input.type === 'array' || input.type === 'object')
    return html`<textarea id="${id}" name="${name}" rows="3" spellcheck="false" ${described}>${value}</textarea>
      <p class="help">JSON (or YAML flow) ${input.type}</p>`;
  return html`<input id="${id}" name="${name}" type="text" value="${value}" ${described} />`;
}
