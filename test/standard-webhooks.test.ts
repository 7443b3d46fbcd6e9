import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ROTATION_OVERLAP_HOURS } from '../src/services/webhooks/secret-rotation.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { type Receiver, startReceiver } from './webhook-receiver.ts';

/**
 * Deliveries that receivers' own libraries verify (issue 37): real deliveries to a loopback
 * receiver, checked with `standardwebhooks` and `svix` exactly as their READMEs tell a receiver
 * to, a rotation included; an old delivery replayed is refused by them, with its own timestamp
 * or a fresh one. The spec's X-Service-Signature is still checked by the receiver on every one.
 */
let app: TestApp;
let key: string;
const receivers: Receiver[] = [];

beforeAll(async () => {
  app = await startTestApp({ limits: { webhookTimeoutMs: 1500 } });
  ({ key } = await app.clinicWithKey('dental', ['webhooks:manage', 'patients:write']));
});
afterAll(async () => {
  for (const r of receivers) await r.close();
});
afterEach(() => vi.useRealTimers());

const STANDARD_SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

async function subscribed() {
  const r = await startReceiver();
  receivers.push(r);
  const res = await app.post('/v1/webhooks', { url: r.url, event_types: ['patient.created'] }, key);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  r.secret = res.body.data.secret;
  return { r, id: res.body.data.id as string, secret: r.secret };
}

let n = 0;
async function delivered(r: Receiver) {
  const before = r.accepted.length;
  const p = await app.post('/v1/patients', { first_name: 'Std', last_name: `Hook${++n}` }, key);
  expect(p.status, JSON.stringify(p.body)).toBe(201);
  await r.waitFor(before + 1);
  return r.arrivals.at(-1) as Receiver['arrivals'][number];
}

/** Both libraries' verdicts on one arrival, their clocks at `at` (Unix seconds). */
function verdicts(secret: string, raw: string, headers: Record<string, unknown>, at: number) {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(at * 1000);
  const h = headers as Record<string, string>;
  const outcome = (f: () => unknown) => {
    try {
      f();
      return 'verified';
    } catch (e) {
      return `refused: ${(e as Error).message}`;
    }
  };
  const result = {
    standardwebhooks: outcome(() => new StandardWebhook(secret).verify(raw, h)),
    svix: outcome(() => new SvixWebhook(secret).verify(raw, h)),
  };
  vi.useRealTimers();
  return result;
}
const BOTH_VERIFY = { standardwebhooks: 'verified', svix: 'verified' };

describe('Standard Webhooks signatures', () => {
  it('a new secret is whsec_ + standard base64, which both libraries take', async () => {
    const { secret } = await subscribed();
    expect(secret).toMatch(STANDARD_SECRET);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(() => new StandardWebhook(secret)).not.toThrow();
    expect(() => new SvixWebhook(secret)).not.toThrow();
  });

  it('a real delivery carries webhook-id, -timestamp and -signature, verified by both libraries', async () => {
    const { r, secret } = await subscribed();
    const a = await delivered(r);
    const body = JSON.parse(a.raw);
    expect(a.headers['webhook-id']).toBe(body.id);
    expect(a.headers['webhook-timestamp']).toBe(a.headers['x-service-timestamp']);
    expect(a.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    const ts = Number(a.headers['webhook-timestamp']);
    expect(verdicts(secret, a.raw, a.headers, ts)).toEqual(BOTH_VERIFY);
    // Another secret is refused by both.
    const other = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw7XtPW1o0JDA=';
    expect(verdicts(other, a.raw, a.headers, ts)).toEqual({
      standardwebhooks: expect.stringMatching(/^refused/),
      svix: expect.stringMatching(/^refused/),
    });
  });

  it('an old delivery replayed is refused: with its own timestamp (too old), or a fresh one (no match)', async () => {
    const { r, secret } = await subscribed();
    const a = await delivered(r);
    const ts = Number(a.headers['webhook-timestamp']);
    const later = ts + 600;
    expect(verdicts(secret, a.raw, a.headers, later)).toEqual({
      standardwebhooks: expect.stringMatching(/^refused: .*too old/i),
      svix: expect.stringMatching(/^refused: .*too old/i),
    });
    const refreshed = { ...a.headers, 'webhook-timestamp': String(later) };
    expect(verdicts(secret, a.raw, refreshed, later)).toEqual({
      standardwebhooks: expect.stringMatching(/^refused: .*no matching signature/i),
      svix: expect.stringMatching(/^refused: .*no matching signature/i),
    });
    // A changed body under the same headers is refused too.
    const changed = a.raw.replace('"Std"', '"Eve"');
    expect(changed).not.toBe(a.raw);
    expect(verdicts(secret, changed, a.headers, ts)).toEqual({
      standardwebhooks: expect.stringMatching(/^refused/),
      svix: expect.stringMatching(/^refused/),
    });
  });

  it('a rotation: both secrets verify during the overlap, only the new one after it', async () => {
    app.clock.set('2031-06-01T09:00:00Z');
    const { r, id, secret: old } = await subscribed();
    const rotated = await app.post(`/v1/webhooks/${id}/rotate-secret`, {}, key);
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const fresh = rotated.body.data.secret as string;
    expect(fresh).toMatch(STANDARD_SECRET);
    r.secret = fresh;
    const during = await delivered(r);
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    const ts = Number(during.headers['webhook-timestamp']);
    expect(verdicts(fresh, during.raw, during.headers, ts)).toEqual(BOTH_VERIFY);
    expect(verdicts(old, during.raw, during.headers, ts)).toEqual(BOTH_VERIFY);

    app.clock.advance(ROTATION_OVERLAP_HOURS * 3600_000 + 1000);
    const after = await delivered(r);
    const ts2 = Number(after.headers['webhook-timestamp']);
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verdicts(fresh, after.raw, after.headers, ts2)).toEqual(BOTH_VERIFY);
    expect(verdicts(old, after.raw, after.headers, ts2).standardwebhooks).toMatch(/^refused/);
  });

  it('a secret made before (base64url) keeps X-Service-Signature and gets a standard one at its rotation', async () => {
    const { r, id } = await subscribed();
    const legacy = 'whsec_o-KCz1dSGLHx9eQqJlwbUm_vPjT3lR8nD0aYcE2hXkA';
    await app.orm.em
      .fork()
      .getConnection()
      .execute('update "webhook_subscription" set "secret" = ? where "id" = ?', [
        legacy,
        Number(id.slice('wh_'.length)),
      ]);
    r.secret = legacy;
    const before = await delivered(r);
    // The receiver verified X-Service-Signature with the legacy secret; no library could take it.
    expect(before.headers['webhook-id']).toBeDefined();
    expect(before.headers['webhook-signature']).toBeUndefined();
    expect(() => new StandardWebhook(legacy)).toThrow();

    const rotated = await app.post(`/v1/webhooks/${id}/rotate-secret`, {}, key);
    const fresh = rotated.body.data.secret as string;
    expect(fresh).toMatch(STANDARD_SECRET);
    r.secret = legacy; // still in its overlap: X-Service-Signature carries both
    const after = await delivered(r);
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verdicts(fresh, after.raw, after.headers, Number(after.headers['webhook-timestamp']))).toEqual(
      BOTH_VERIFY,
    );
  });

  it('a sample event (POST /v1/webhooks/{id}/test) is signed the same way', async () => {
    const r = await startReceiver();
    receivers.push(r);
    const sub = await app.post('/v1/webhooks', { url: r.url }, key);
    r.secret = sub.body.data.secret;
    const sent = await app.post(`/v1/webhooks/${sub.body.data.id}/test`, { type: 'patient.created' }, key);
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    await r.waitFor(1);
    const a = r.arrivals[0] as Receiver['arrivals'][number];
    expect(verdicts(r.secret, a.raw, a.headers, Number(a.headers['webhook-timestamp']))).toEqual(BOTH_VERIFY);
  });
});
