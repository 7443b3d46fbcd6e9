import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { freshTimestamp, signBody, verifyBody } from '../src/lib/signing.ts';

/** The HMAC scheme of the spec's Events section, shared by webhooks and the network callback. */
describe('signing', () => {
  const secret = 'whsec_test';
  const body = '{"type":"patient.created","data":{"id":"pat_1"}}';

  it('signs as the spec says: sha256=<hex HMAC-SHA256 of the raw body>', () => {
    const expected = createHmac('sha256', secret).update(body).digest('hex');
    expect(signBody(secret, body)).toBe(`sha256=${expected}`);
    expect(signBody(secret, Buffer.from(body))).toBe(`sha256=${expected}`);
  });

  it('verifies its own signature, and nothing else', () => {
    const sig = signBody(secret, body);
    expect(verifyBody(secret, body, sig)).toBe(true);
    expect(verifyBody(secret, body, sig.toUpperCase().replace('SHA256=', 'sha256='))).toBe(true);
    expect(verifyBody('other', body, sig)).toBe(false);
    expect(verifyBody(secret, `${body} `, sig)).toBe(false);
    for (const bad of [
      undefined,
      null,
      '',
      'sha256=',
      sig.slice(7),
      `sha1=${sig.slice(7)}`,
      `${sig}00`,
      'sha256=zz',
    ])
      expect(verifyBody(secret, body, bad), String(bad)).toBe(false);
  });

  it('accepts a signing time within the tolerance only', () => {
    const now = Date.parse('2026-11-23T12:00:00Z');
    const s = String(now / 1000);
    expect(freshTimestamp(s, now)).toBe(true);
    expect(freshTimestamp(String(now / 1000 - 299), now)).toBe(true);
    expect(freshTimestamp(String(now / 1000 - 301), now)).toBe(false);
    expect(freshTimestamp(String(now / 1000 + 301), now)).toBe(false);
    for (const bad of [undefined, null, '', 'abc', '1e9', '-5', '1.5'])
      expect(freshTimestamp(bad, now)).toBe(false);
  });
});
