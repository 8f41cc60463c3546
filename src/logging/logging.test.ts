import { Writable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createLogger, createSecretRegistry, withoutSecretKeys } from './index.js';

function capture(): { stream: Writable; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  const lines = (): Array<Record<string, unknown>> =>
    chunks
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { stream, lines };
}

describe('createLogger', () => {
  it('writes JSON lines with the child fields', () => {
    const { stream, lines } = capture();
    createLogger({ destination: stream }).child({ runId: 'r1', stepId: 's1' }).info({ attempt: 2 }, 'step started');
    expect(lines()).toEqual([expect.objectContaining({ runId: 'r1', stepId: 's1', attempt: 2, msg: 'step started' })]);
  });

  it('redacts credential keys at any depth and registered secret values in strings', () => {
    const { stream, lines } = capture();
    const secrets = createSecretRegistry();
    secrets.add('hunter2-very-secret');
    const logger = createLogger({ destination: stream, secrets });
    logger.info({ request: { headers: { authorization: 'Bearer abc.def' } }, clientSecret: 'xyz' }, 'sending');
    logger.info({ note: 'the password is hunter2-very-secret, keep it' }, 'input hunter2-very-secret rendered');
    const text = JSON.stringify(lines());
    expect(text).not.toContain('abc.def');
    expect(text).not.toContain('xyz');
    expect(text).not.toContain('hunter2-very-secret');
    expect(lines()[1]).toMatchObject({ note: 'the password is [REDACTED], keep it', msg: 'input [REDACTED] rendered' });
  });
});

describe('withoutSecretKeys', () => {
  it('redacts secret keys at any depth and leaves what holds none as it was', () => {
    const clean = { items: [{ id: 1 }], note: 'no secret here' };
    const value = { a: { b: { c: { d: { password: 'p', keep: 1 } } } }, list: [{ token: 't' }], clean };
    const redacted = withoutSecretKeys(value);
    expect(redacted).toEqual({
      a: { b: { c: { d: { password: '[REDACTED]', keep: 1 } } } },
      list: [{ token: '[REDACTED]' }],
      clean,
    });
    expect(redacted.clean).toBe(clean);
    expect(value.a.b.c.d.password).toBe('p');
  });

  it('keeps an error an error, with its message, when one of its fields is redacted', () => {
    const error = Object.assign(new Error('refused'), { headers: { authorization: 'Bearer abc.def' } });
    const redacted = withoutSecretKeys({ err: error }).err;
    expect(redacted).toBeInstanceOf(Error);
    expect(redacted.message).toBe('refused');
    expect(redacted.headers).toEqual({ authorization: '[REDACTED]' });
    expect(error.headers.authorization).toBe('Bearer abc.def');
  });

  it('logs an error whose fields hold a credential without the credential, with its message and stack', () => {
    const { stream, lines } = capture();
    const error = Object.assign(new Error('refused'), { config: { headers: { Authorization: 'Bearer abc.def' } } });
    createLogger({ destination: stream }).warn({ err: error, deep: { a: { b: { c: { token: 'tok' } } } } }, 'failed');
    const [line] = lines();
    expect(JSON.stringify(line)).not.toContain('abc.def');
    expect(JSON.stringify(line)).not.toContain('tok"');
    expect(line).toMatchObject({ err: { message: 'refused', type: 'Error' } });
    expect(String((line!.err as { stack: string }).stack)).toContain('refused');
  });
});

describe('secret registry: encoded forms', () => {
  it('scrubs a secret in base64 (at any alignment, inside a longer encoded text), base64url, hex and either case', () => {
    const secret = 'tok-Enc0ded-s3cret?value/91';
    const registry = createSecretRegistry();
    registry.add(secret);
    const texts = [
      Buffer.from(`Bearer ${secret}`).toString('base64'),
      Buffer.from(`x${secret}`).toString('base64url'),
      Buffer.from(`xy${secret}!`).toString('base64'),
      Buffer.from(secret).toString('hex').toUpperCase(),
      secret.toUpperCase(),
      secret.toLowerCase(),
      JSON.stringify({ s: secret }),
      encodeURIComponent(secret),
    ];
    for (const text of texts) {
      const scrubbed = registry.scrub(`said ${text}.`);
      expect(scrubbed, text).toContain('[REDACTED]');
      // What is left around the redaction is at most the few characters the neighbouring bytes share.
      expect(
        scrubbed
          .replace(/^said /, '')
          .replace(/\.$/, '')
          .replace('[REDACTED]', '').length,
        text,
      ).toBeLessThanOrEqual(16);
    }
  });
});

describe('secret registry: values', () => {
  const secret = 'sim-admin-secret-0123456789abcdef';
  const short = 'pw42';

  /** What scrubValue is meant to give: every string scrubbed, a fresh copy of every array and object. */
  function copiedAndScrubbed(value: unknown, scrub: (text: string) => string): unknown {
    if (typeof value === 'string') return scrub(value);
    if (Array.isArray(value)) return value.map((item) => copiedAndScrubbed(item, scrub));
    if (value !== null && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, copiedAndScrubbed(item, scrub)]));
    return value;
  }

  /** Pairs of (a value, its copy) whose parts are the same objects exactly where no secret is under them. */
  function expectSharedOnlyWithoutSecrets(given: unknown, got: unknown): void {
    if (given === null || typeof given !== 'object') return;
    const holdsSecret = JSON.stringify(given).includes(secret) || JSON.stringify(given).includes(short);
    if (holdsSecret) expect(got).not.toBe(given);
    else expect(got).toBe(given);
    for (const key of Object.keys(given))
      expectSharedOnlyWithoutSecrets((given as Record<string, unknown>)[key], (got as Record<string, unknown>)[key]);
  }

  // Texts that hold a secret (whole, inside longer text, the short one alone) or not.
  const text = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.constantFrom('step.finished', 'succeeded', 'loop[0].double', secret, short, 'pw4', `Bearer ${secret}`),
    fc
      .tuple(fc.string({ maxLength: 6 }), fc.constantFrom(secret, short))
      .map(([around, hidden]) => around + hidden + around),
  );
  const json = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      text,
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      tie('array'),
      tie('object'),
    ),
    array: fc.array(tie('value'), { maxLength: 4 }),
    object: fc.dictionary(fc.constantFrom('a', 'b', 'name', 'outputs', 'password'), tie('value'), { maxKeys: 4 }),
  })).value;

  it('scrubs every string at any depth as a fresh deep copy would, shares what holds no secret, changes nothing given', () => {
    const registry = createSecretRegistry();
    registry.add(secret);
    registry.add(short);
    fc.assert(
      fc.property(json, (value) => {
        const before = structuredClone(value);
        const got = registry.scrubValue(value);
        expect(got).toEqual(copiedAndScrubbed(before, registry.scrub));
        expect(JSON.stringify(got)).not.toContain(secret);
        expect(value).toEqual(before);
        expectSharedOnlyWithoutSecrets(value, got);
      }),
      { numRuns: 2_000, seed: 22 },
    );
  });

  it('scrubs a secret of four characters, the shortest kept, in a text of its own length', () => {
    const registry = createSecretRegistry();
    registry.add(short);
    expect(registry.scrubValue({ password: [short, 'pw4', `${short}!`] })).toEqual({
      password: ['[REDACTED]', 'pw4', '[REDACTED]!'],
    });
  });

  it('gives back the very value when no secret is registered or none is in it', () => {
    const event = { type: 'step.finished', path: 'loop[0].double', outputs: { value: 2, at: new Date(0) } };
    expect(createSecretRegistry().scrubValue(event)).toBe(event);
    const registry = createSecretRegistry();
    registry.add(secret);
    expect(registry.scrubValue(event)).toBe(event);
  });
});
