import { describe, expect, it } from 'vitest';
import { shownName, withShownNames } from './shown-text.js';

describe('shownName', () => {
  it('keeps a name of up to 256 characters, and shows a longer one by its first 60 and its size', () => {
    expect(shownName('a'.repeat(256))).toBe('a'.repeat(256));
    expect(shownName('a'.repeat(257))).toBe(`${'a'.repeat(60)}… (257 bytes)`);
    expect(shownName('é'.repeat(2000))).toBe(`${'é'.repeat(60)}… (4 KB)`);
    expect(shownName('a'.repeat(3 * 1024 * 1024))).toBe(`${'a'.repeat(60)}… (3.0 MB)`);
  });
});

describe('withShownNames', () => {
  it('shortens the long quoted parts of a message and leaves its own words, apostrophes included', () => {
    const long = 'x'.repeat(300);
    const words = "the playbook's folder, the operation's request and the step's kind say nothing more here at all";
    expect(withShownNames(`unknown '${long}': ${words} \`${long}\` in \${{ ${long} }}`)).toBe(
      `unknown '${'x'.repeat(60)}… (300 bytes)': ${words} \`${'x'.repeat(60)}… (300 bytes)\` in \${{${` ${long} `.slice(0, 60)}… (302 bytes)}}`,
    );
    const path = `\`steps.paths.outputs.body.items[0].systemsWithUpdatePath.${'y'.repeat(150)}\``;
    expect(withShownNames(`read ${path} and ${words} ${words}`)).toBe(`read ${path} and ${words} ${words}`);
  });
});
