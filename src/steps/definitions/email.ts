import { dirname } from 'node:path';
import { closedObject, described } from './value-types.js';
import { orExpression, type JsonSchema } from './schema-parts.js';
import type { ExpressionContext, Template } from '../../expressions/index.js';
import type { StepBase } from '../../model/index.js';
import {
  attachmentProblem,
  executeEmail,
  isEmailAddress,
  parseSize,
  renderBody,
  renderText,
  resumeEmail,
  type EmailArgs,
} from '../executors/email.js';
import { defineLeaf, type NormaliseTools } from './step-definition.js';

export interface EmailStep extends StepBase {
  kind: 'email';
  /** The e-mail channel of fleetbook.yaml; unset: the only one. */
  via?: string;
  to: Template;
  cc?: Template;
  bcc?: Template;
  subject: Template;
  /** Markdown; sent as HTML and as plain text. */
  body: Template;
  attach?: Template;
  /** Bytes; a larger attachment is gzipped, then linked or refused. */
  maxAttachmentBytes: number;
  /** What a resume does with a send whose answer was not recorded. */
  onUnknown: 'resend' | 'skip' | 'fail';
}

const addresses: JsonSchema = {
  ...orExpression({ anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, minItems: 1 }] }),
  description: 'One address or a list of them (`Name <address>` too); may hold `${{ }}`.',
};

const SIZE_PATTERN = '^[0-9]+(\\.[0-9]+)?\\s*(B|KB|MB|GB)$';

/** Whether a literal (no `${{ }}`) can be checked when the playbook loads. */
const literal = (value: unknown): value is string => typeof value === 'string' && !value.includes('${{');

/** Literal addresses of `to`, `cc`, `bcc` checked as the playbook loads; computed ones at run time. */
function checkLiteralAddresses(tools: NormaliseTools, email: Record<string, unknown>): void {
  for (const field of ['to', 'cc', 'bcc']) {
    const value = email[field];
    const items = Array.isArray(value) ? value.map((item, index) => [item, `/${index}`] as const) : [[value, '']];
    for (const [item, suffix] of items) {
      if (literal(item) && !isEmailAddress(item))
        tools.problem(
          `${tools.at('email')}/${field}${suffix}`,
          'INVALID_EMAIL_ADDRESS',
          `email ${field}: '${item}' is not an e-mail address`,
        );
    }
  }
}

/** Literal attachment paths checked as the playbook loads (a missing file, one outside the allowed folders). */
function checkLiteralAttachments(tools: NormaliseTools, attach: unknown): void {
  const items = Array.isArray(attach) ? attach : attach === undefined ? [] : [attach];
  for (const [index, item] of items.entries()) {
    if (!literal(item)) continue;
    // The run's outputs folder is not known yet: a literal path must lie in the playbook's folder.
    const problem = attachmentProblem(item, dirname(tools.file), []);
    if (problem)
      tools.problem(
        `${tools.at('email')}/attach${Array.isArray(attach) ? `/${index}` : ''}`,
        'INVALID_ATTACHMENT',
        `email attach: ${problem}`,
      );
  }
}

function normaliseEmail(tools: NormaliseTools): Record<string, unknown> {
  const email = tools.data.email as Record<string, unknown>;
  const at = (field: string): string => `${tools.at('email')}/${field}`;
  const template = (field: string): Template | undefined =>
    email[field] === undefined ? undefined : tools.template(email[field], at(field));
  checkLiteralAddresses(tools, email);
  checkLiteralAttachments(tools, email.attach);
  const optional = (field: string): Record<string, Template> => {
    const compiled = template(field);
    return compiled === undefined ? {} : { [field]: compiled };
  };
  return {
    ...(typeof email.via === 'string' ? { via: email.via } : {}),
    to: template('to'),
    ...optional('cc'),
    ...optional('bcc'),
    subject: template('subject'),
    body: tools.template(email.body ?? '', at('body')),
    ...optional('attach'),
    maxAttachmentBytes: parseSize(email.maxAttachment ?? '10MB') ?? 10 * 1024 * 1024,
    onUnknown: (email.onUnknown as EmailStep['onUnknown'] | undefined) ?? 'skip',
  };
}

/** A list of strings from one or several rendered values (an absent field is none). */
function listOf(value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

async function renderArgs(step: EmailStep, context: ExpressionContext): Promise<EmailArgs> {
  const evaluate = async (template: Template | undefined) =>
    template === undefined ? [] : listOf(await template.evaluate(context));
  return {
    ...(step.via === undefined ? {} : { via: step.via }),
    to: await evaluate(step.to),
    cc: await evaluate(step.cc),
    bcc: await evaluate(step.bcc),
    subject: (await step.subject.render(context, renderText)).replace(/\s*\n\s*/g, ' ').trim(),
    ...(await renderBody(step.body, context)),
    attach: await evaluate(step.attach),
    maxAttachmentBytes: step.maxAttachmentBytes,
    onUnknown: step.onUnknown,
    playbookDir: dirname(step.location.file),
    where: `${step.location.file}:${step.location.line}`,
  };
}

export const emailStep = defineLeaf<EmailStep>({
  kind: 'email',
  description:
    'Sends an e-mail through an e-mail channel of fleetbook.yaml: a Markdown body (HTML and plain text), attachments. Once per run, even across a crash. Outputs: messageId, outcome, recipients, attachments.',
  fields: {
    email: {
      type: 'object',
      additionalProperties: false,
      required: ['to', 'subject', 'body'],
      properties: {
        via: { type: 'string', description: 'The e-mail channel of fleetbook.yaml. Default: the only one.' },
        to: addresses,
        cc: addresses,
        bcc: addresses,
        subject: { type: 'string', description: 'One line; may hold `${{ }}` (values as text).' },
        body: {
          type: 'string',
          description:
            'Markdown (raw HTML off), sent as HTML and as plain text; every `${{ }}` value is escaped (shown as text); `${{ $table(rows) }}` is a table.',
        },
        attach: {
          ...orExpression({ anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] }),
          description:
            "Paths of files to attach, in the run's outputs folder (`run.outputsDir`) or the playbook's folder (relative paths: from the playbook's folder).",
        },
        maxAttachment: {
          anyOf: [
            { type: 'integer', minimum: 1 },
            { type: 'string', pattern: SIZE_PATTERN },
          ],
          description:
            'Largest attachment sent as it is (`10MB`, `500KB`, bytes). Larger: gzipped; still larger: a download link (`<server.url>/runs/<id>/files/<path>`) when `server.url` is set, else the step fails. Default 10MB.',
        },
        onUnknown: {
          enum: ['resend', 'skip', 'fail'],
          description:
            'On resume, a send whose answer the journal did not record (a crash between the two): `skip` (default) takes it as sent and warns, `resend` sends it again (same Message-ID), `fail` fails the step (`--confirm-unknown` sends it again).',
        },
      },
    },
  },
  canWrite: true,
  // A rehearsal still renders and puts the message in the simulator's outbox; a dry run against a platform does not send it.
  simulatesItself: true,
  normalise: normaliseEmail,
  async prepare({ step, context, path }) {
    const args = await renderArgs(step, context());
    const input = {
      ...(args.via === undefined ? {} : { via: args.via }),
      to: args.to,
      cc: args.cc,
      bcc: args.bcc,
      subject: args.subject,
      attach: args.attach,
    };
    return {
      input,
      attempt: (runtime) => executeEmail(args, path, runtime),
      resumeInFlight: (inFlight, runtime, confirmUnknown) => resumeEmail(args, path, runtime, inFlight, confirmUnknown),
    };
  },
  outputType: () =>
    closedObject({
      messageId: described({ type: 'string' }, 'The Message-ID: the same for every send of the step in the run.'),
      outcome: described(
        { enum: ['sent', 'rehearsed', 'simulated', 'unknown'] },
        '`sent`; `rehearsed` (in the simulator outbox); `simulated` (a dry run); `unknown` (a resume found the send unrecorded and `onUnknown: skip` took it as sent).',
      ),
      channel: described({ type: 'string' }, 'The channel it went through.'),
      to: { type: 'array', items: { type: 'string' } },
      cc: { type: 'array', items: { type: 'string' } },
      bcc: { type: 'array', items: { type: 'string' } },
      subject: { type: 'string' },
      accepted: described({ type: 'array', items: { type: 'string' } }, 'The recipients the server took.'),
      response: described({ type: 'string' }, "The server's reply."),
      attachments: {
        type: 'array',
        items: closedObject({
          filename: { type: 'string' },
          bytes: { type: 'integer' },
          gzipped: { type: 'boolean' },
          link: { type: 'string' },
        }),
      },
    }),
  examples: [
    {
      description: 'Mail a summary table and a file to the people named in the run.',
      yaml: `name: email-example
inputs:
  recipients: { type: array, items: { type: string }, default: [] }
steps:
  - id: systems
    set:
      rows:
        - { name: alpha, version: "2.4.0" }
        - { name: beta, version: "2.3.1" }
  - id: mail
    if: \${{ $count(inputs.recipients) > 0 }}
    email:
      to: \${{ inputs.recipients }}
      subject: "Systems of run \${{ run.id }}"
      body: |
        **\${{ $count(steps.systems.outputs.rows) }} systems**

        \${{ $table(steps.systems.outputs.rows) }}
`,
    },
  ],
});
