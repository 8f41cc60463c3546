/**
 * A run's inputs: the given values checked against the playbook's declarations, defaults
 * applied. Every problem is a `UsageError` naming the input, raised before anything runs.
 */
import { didYouMean } from '../errors/index.js';
import { UsageError } from '../errors/index.js';
import type { InputSpec } from '../playbook/index.js';
import { compileSchema } from '../steps/index.js';

export interface ResolvedInputs {
  values: Record<string, unknown>;
  /** Names of the `secret: true` inputs that have a value. */
  secretNames: string[];
}

/** `-i name=value` text as the declared type: strings stay text, other types are read as JSON. */
export function parseInputText(spec: InputSpec | undefined, text: string): unknown {
  if (spec === undefined || spec.type === 'string') return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // Left as text: the type check names the input and the expected type.
    return text;
  }
}

export function resolveInputs(
  specs: Readonly<Record<string, InputSpec>>,
  given: Readonly<Record<string, unknown>>,
  playbookName: string,
): ResolvedInputs {
  const problems: string[] = [];
  // The first input named in a problem: where the server locates its 400 (`body/inputs/<name>`).
  let first: string | undefined;
  const problem = (name: string, text: string): void => {
    first ??= name;
    problems.push(text);
  };
  const declared = Object.keys(specs);
  for (const name of Object.keys(given)) {
    if (!Object.hasOwn(specs, name)) {
      const suggestion = didYouMean(name, declared, { prefixes: true }).trim().replace(/^Did/, 'did');
      problem(
        name,
        `unknown input '${name}'${suggestion ? `: ${suggestion}` : ''} (${declared.length > 0 ? `it takes: ${declared.join(', ')}` : 'it takes no inputs'})`,
      );
    }
  }
  const values: Record<string, unknown> = {};
  const secretNames: string[] = [];
  for (const [name, spec] of Object.entries(specs)) {
    const value = Object.hasOwn(given, name) && given[name] !== undefined ? given[name] : structuredClone(spec.default);
    if (value === undefined) {
      if (spec.required) problem(name, `input '${name}' (${spec.type}) is required`);
      continue;
    }
    const validate = compileSchema(spec.schema);
    if (!validate(value)) {
      const why = (validate.errors ?? [])
        .map((error) => `${error.instancePath ? `${error.instancePath} ` : ''}${error.message ?? error.keyword}`)
        .join('; ');
      // `-i recipients=a@b` gives one text where a list is declared: say how a list is written.
      const given: unknown = value;
      const listHint =
        spec.type === 'array' && typeof given === 'string' && !spec.secret
          ? `; a list is written as JSON: -i '${name}=${JSON.stringify(given.split(',').map((item) => item.trim()))}'`
          : '';
      problem(
        name,
        `input '${name}' ${why} (declared ${spec.type}, got ${spec.secret ? 'a secret value' : JSON.stringify(value)})${listHint}`,
      );
      continue;
    }
    values[name] = value;
    if (spec.secret) secretNames.push(name);
  }
  if (problems.length > 0) {
    throw new UsageError(`Playbook '${playbookName}': ${problems.join('; ')}.`, 'INVALID_INPUTS', {
      problems,
      input: first,
    });
  }
  return { values, secretNames };
}
