import { anyTemplate, duration, orExpression } from './schema-parts.js';
import type { StepDefinition } from './step-definition.js';

export const callStep: StepDefinition = {
  kind: 'call',
  description:
    'Calls a platform operation by its id. `with` holds path and query parameters by name and `body`, ' +
    "checked against the operation's input schema when the playbook loads and again once rendered.",
  fields: {
    call: { type: 'string', description: 'Operation id, e.g. `privateCloud.runSoftwarePrechecks` (see `fleetbook actions`).' },
    with: { ...orExpression({ type: 'object' }), description: 'Path and query parameters by name, plus `body`.' },
    region: { ...anyTemplate, description: "Region of a regional operation. Default: the playbook's `defaults.region`, then the connection's." },
    wait: {
      description: 'Follow a 202 to its end; `true` or `{ timeout, minPoll, maxPoll }`. The step fails when the operation fails.',
      anyOf: [
        { type: 'boolean' },
        {
          type: 'object',
          additionalProperties: false,
          properties: {
            timeout: { ...duration, description: "Deadline of the operation. Default: the operation's own `timeoutMinutes`." },
            minPoll: { ...duration, description: "Shortest interval between polls, whatever the server suggests." },
            maxPoll: { ...duration, description: 'Longest interval between polls.' },
          },
        },
      ],
    },
    until: { ...anyTemplate, description: 'Repeat the call until this holds; `steps.<this id>` is the latest answer. Needs `poll`.' },
    poll: {
      type: 'object',
      additionalProperties: false,
      required: ['interval', 'timeout'],
      properties: { interval: { ...duration, description: 'Time between calls.' }, timeout: { ...duration, description: 'Give up (fail) after this.' } },
    },
    paginate: { const: 'all', description: 'Gather every page of a list into `outputs.body.items`.' },
    saveTo: {
      description:
        'Stream the response body to this file (downloads): a path, or `{ path, sumColumns: [column, ...] }` to also count ' +
        "the CSV's rows and sum those header columns as it streams (`outputs.body.rows`, `outputs.body.sums.<column>`).",
      anyOf: [
        { type: 'string' },
        {
          type: 'object',
          additionalProperties: false,
          required: ['path'],
          properties: {
            path: { type: 'string', description: 'The file written (a folder receives the name the server gives).' },
            sumColumns: { ...orExpression({ type: 'array', items: { type: 'string' } }), description: 'Header names of the CSV columns to sum.' },
          },
        },
      ],
    },
  },
  canWrite: true,
  examples: [
    {
      description: 'Run prechecks on a system and wait for them to finish.',
      yaml: `name: precheck-one
inputs:
  systemId: { type: string }
steps:
  - id: precheck
    call: privateCloud.runSoftwarePrechecks
    with: { id: "\${{ inputs.systemId }}", body: { catalogVersion: "2.4.0" } }
    wait: { timeout: 2h }
`,
    },
    {
      description: 'List every system, all pages.',
      yaml: `name: all-systems
steps:
  - id: systems
    call: privateCloud.listSystems
    paginate: all
`,
    },
  ],
};
