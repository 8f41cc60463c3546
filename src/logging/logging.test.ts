import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, createSecretRegistry } from './index.js';

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
