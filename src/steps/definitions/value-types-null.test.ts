import { describe, expect, it } from 'vitest';
import { fieldOf } from './value-types.js';

describe('fieldOf over a value that may be null', () => {
  const workspace = {
    anyOf: [
      { type: 'object', properties: { id: { type: 'string' }, type: { type: 'string' } }, required: ['id'] },
      { type: 'null' },
    ],
  };

  it("finds the object's field, and says a field neither branch has cannot be there", () => {
    expect(fieldOf(workspace, 'id')).toEqual({ found: true, type: { type: 'string' } });
    expect(fieldOf(workspace, 'a')).toMatchObject({ found: false, known: true, fields: ['id', 'type'] });
  });

  it('stays silent beside a branch it cannot know (an open object)', () => {
    expect(fieldOf({ anyOf: [{ type: 'object' }, { type: 'null' }] }, 'a')).toMatchObject({
      found: false,
      known: false,
    });
  });
});
