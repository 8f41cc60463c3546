import { describe, expect, it } from 'vitest';
import { buildStepTree, type StepNode } from './step-tree.js';
import type { StepRecord } from './types.js';

function record(path: string, extra: Partial<StepRecord> = {}): StepRecord {
  return {
    path,
    stepId: path.split(/[.[]/).at(-1) ?? path,
    kind: 'call',
    status: 'succeeded',
    attempts: 1,
    startedAt: '2026-03-01T10:00:00.000Z',
    ...extra,
  };
}
/** label → children, to compare shapes. */
function shape(nodes: StepNode[]): unknown[] {
  return nodes.map((node) => (node.children.length === 0 ? node.label : { [node.label]: shape(node.children) }));
}

describe('buildStepTree', () => {
  it('nests loop items and their steps under the loop, in journal order', () => {
    const tree = buildStepTree([
      record('catalog'),
      record('systems', { kind: 'forEach' }),
      record('systems[0]', { kind: 'item' }),
      record('systems[0].precheck'),
      record('systems[0].update'),
      record('systems[1]', { kind: 'item' }),
      record('systems[1].precheck'),
      record('notify'),
    ]);
    expect(shape(tree)).toEqual([
      'catalog',
      { systems: [{ '[0]': ['precheck', 'update'] }, { '[1]': ['precheck'] }] },
      'notify',
    ]);
  });

  it('hangs a record whose parent is missing from its nearest recorded ancestor', () => {
    const tree = buildStepTree([record('outer'), record('outer.inner[2].leaf'), record('lonely[0].x')]);
    expect(shape(tree)).toEqual([{ outer: ['inner[2].leaf'] }, 'lonely[0].x']);
  });

  it('adds durations and the async operation id taken from the Location', () => {
    const [node] = buildStepTree([
      record('update', {
        endedAt: '2026-03-01T10:25:30.000Z',
        location: 'https://api.test/data-services/v1beta1/async-operations/op-42?x=1',
      }),
    ]);
    expect(node).toMatchObject({ durationMs: 1_530_000, asyncOperationId: 'op-42' });
    const [running] = buildStepTree([record('update', { status: 'running' })]);
    expect(running).not.toHaveProperty('durationMs');
    expect(running).not.toHaveProperty('asyncOperationId');
  });
});
