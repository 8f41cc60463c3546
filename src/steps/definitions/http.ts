import { described, httpAnswerType } from './value-types.js';
import { anyTemplate, orExpression } from './schema-parts.js';
import type { StepBase, Template } from '../../model/index.js';
import { executeHttp } from '../executors/http.js';
import { defineLeaf } from './step-definition.js';

export interface HttpStep extends StepBase {
  kind: 'http';
  /** `{ method, url, headers, body }`. */
  request: Template;
}

export const httpStep = defineLeaf<HttpStep>({
  kind: 'http',
  description: 'Sends one HTTP request (a webhook, a chat message). Outputs: status, headers, body.',
  fields: {
    http: {
      type: 'object',
      additionalProperties: false,
      required: ['url'],
      properties: {
        method: { ...orExpression({ enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] }), description: 'Default POST.' },
        url: { type: 'string', description: 'http(s) URL; may hold `${{ }}`.' },
        headers: { ...orExpression({ type: 'object', additionalProperties: { type: 'string' } }) },
        body: { ...anyTemplate, description: 'Sent as JSON unless a string.' },
      },
    },
  },
  canWrite: true,
  // Its executor answers a dry run with the request it would send.
  simulatesItself: true,
  normalise: (tools) => ({ request: tools.field('http') }),
  async prepare({ step, context }) {
    const request = await step.request.evaluate(context());
    return { input: request, attempt: (runtime) => executeHttp(request, runtime) };
  },
  outputType: () => httpAnswerType(described({}, 'The body, parsed as JSON when it is JSON, else text.'), true),
  examples: [
    {
      description: 'Tell a chat channel the run ended.',
      yaml: `name: http-example
inputs:
  webhookUrl: { type: string, secret: true }
steps:
  - http:
      url: "\${{ inputs.webhookUrl }}"
      body: { text: "run \${{ run.id }} ended" }
`,
    },
  ],
});
