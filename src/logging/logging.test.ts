import { Writable } from 'node:stream';
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
