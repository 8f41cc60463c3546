import { describe, expect, it } from 'vitest';
import type { InputView } from '../views.js';
import { inputField } from './start-form.js';

const NAME = 'x" autofocus onfocus="alert(1)';
const input = (more: Partial<InputView>): InputView => ({
  name: NAME,
  type: 'string',
  required: false,
  secret: false,
  description: 'the odd one',
  schema: { type: 'string' },
  ...more,
});

/** The attributes of each tag of `markup`, as a browser reads them: name="value" pairs only. */
const attributes = (markup: string): string[][] =>
  [...markup.matchAll(/<(\w+)((?:\s+[\w-]+(?:="[^"]*")?)*)\s*\/?>/g)].map((tag) =>
    [...(tag[2] ?? '').matchAll(/([\w-]+)(?:="[^"]*")?/g)].map((attribute) => attribute[1] ?? ''),
  );

describe('the start form renderer', () => {
  it.each([
    ['text', input({ default: 'plain' })],
    ['number', input({ type: 'integer', default: 3 })],
    ['choice', input({ enum: ['a', 'b'], default: 'a' })],
    ['boolean', input({ type: 'boolean' })],
    ['JSON', input({ type: 'array' })],
    ['secret', input({ secret: true })],
  ])('keeps a name holding quotes inside its attributes (%s field)', (_kind, field) => {
    const markup = inputField(field, {}).text;
    const names = attributes(markup).flat();
    expect(names).not.toContain('autofocus');
    expect(names).not.toContain('onfocus');
    expect(markup).toContain(`id="input-x&quot; autofocus onfocus=&quot;alert(1)"`);
    expect(markup).toContain(`name="input.x&quot; autofocus onfocus=&quot;alert(1)"`);
    expect(markup).toContain('>x&quot; autofocus onfocus=&quot;alert(1)<');
  });
});
