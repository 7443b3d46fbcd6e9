import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROTATION_OVERLAP_HOURS } from '../src/services/webhooks/secret-rotation.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { type Receiver, startReceiver } from './webhook-receiver.ts';

/**
 * Webhooks an integrator manages (issue 29): PATCH /v1/webhooks/{id} (url, types, description,
 * enabled) and POST /v1/webhooks/{id}/rotate-secret, seen by a real receiver on loopback that
 * verifies the signatures (test/webhook-receiver.ts): both secrets sign during the overlap, only
 * the new one after it, on the injected clock.
 */
let app: TestApp;
let key: string;
const receivers: Receiver[] = [];

beforeAll(async () => {
  app = await startTestApp({ limits: { webhookTimeoutMs: 1500 } });
  app.clock.set('2031-05-01T09:00:00Z');
  ({ key } = await app.clinicWithKey('dental', ['webhooks:manage', 'patients:write', 'patients:read']));
});
afterAll(async () => {
  for (const r of receivers) await r.close();
});

async function receiver() {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

async function subscribe(r: Receiver, body: Record<string, unknown> = {}) {
  const res = await app.post('/v1/webhooks', { url: r.url, event_types: ['patient.created'], ...body }, key);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  r.secret = res.body.data.secret;
  return res.body.data as { id: string; secret: string };
}

let n = 0;
const newPatient = async () => {
  const r = await app.post('/v1/patients', { first_name: 'Rota', last_name: `Tion${++n}` }, key);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.data.id as string;
};

const patch = (id: string, body: unknown, headers?: Record<string, string>) =>
  app.send('PATCH', `/v1/webhooks/${id}`, body, key, headers);

describe('PATCH /v1/webhooks/{id}', () => {
  it('changes url, types and description; absent fields kept; null clears the description', async () => {
    const [a, b] = [await receiver(), await receiver()];
    const sub = await subscribe(a, { description: 'first endpoint' });
    const changed = await patch(sub.id, { url: b.url, event_types: ['patient.created', 'patient.updated'] });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body.data).toMatchObject({
      url: b.url,
      event_types: ['patient.created', 'patient.updated'],
      description: 'first endpoint',
      enabled: true,
    });
    // Every read but the creation's and a rotation's masks the secret.
    expect(changed.body.data.secret).toMatch(/^whsec_\*{4}/);
    b.secret = sub.secret;
    const p = await newPatient();
    await b.waitFor(1);
    expect(b.accepted[0].body.data.id).toBe(p);
    expect(a.hits).toBe(0);
    const cleared = await patch(sub.id, { description: null });
    expect(cleared.body.data).toMatchObject({ description: null, url: b.url });
    expect((await app.get(`/v1/webhooks/${sub.id}`, key)).body.data.description).toBeNull();
  });

  it('checks the url as creation does, and a stale If-Match is a 412', async () => {
    const r = await receiver();
    const sub = await subscribe(r);
    const refused = await patch(sub.id, { url: 'https://10.0.0.1/x' });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'validation_failed', param: 'url' });
    const unknown = await patch(sub.id, { event_types: ['patient.exploded'] });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.param).toBe('event_types');
    const first = await app.get(`/v1/webhooks/${sub.id}`, key);
    // The version is updated_at, on the injected clock: the change must come later.
    app.clock.advance(1000);
    expect((await patch(sub.id, { description: 'v2' })).status).toBe(200);
    const stale = await patch(
      sub.id,
      { description: 'v3' },
      { 'if-match': first.headers.get('etag') as string },
    );
    expect(stale.status).toBe(412);
    expect((await app.get(`/v1/webhooks/${sub.id}`, key)).body.data.description).toBe('v2');
    await app.send('DELETE', `/v1/webhooks/${sub.id}`, undefined, key);
    expect((await patch(sub.id, { description: 'gone' })).status).toBe(404);
  });

  it('enabled false stops deliveries; enabled true enables it again, as recover does', async () => {
    const r = await receiver();
    const sub = await subscribe(r);
    const off = await patch(sub.id, { enabled: false });
    expect(off.body.data).toMatchObject({
      enabled: false,
      disabled_reason: 'Disabled by a change (enabled false).',
    });
    expect(off.body.data.disabled_at).not.toBeNull();
    await newPatient();
    const on = await patch(sub.id, { enabled: true });
    expect(on.body.data).toMatchObject({ enabled: true, disabled_at: null, disabled_reason: null });
    const p = await newPatient();
    await r.waitFor(1);
    // The event of the time it was disabled is not queued by a PATCH (recover does that).
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(r.accepted.map((a) => a.body.data.id)).toEqual([p]);
  });

  it('is the updateWebhook mutation in GraphQL', async () => {
    const r = await receiver();
    const sub = await subscribe(r);
    const res = await app.gql(
      'mutation($input: UpdateWebhookInput!) { updateWebhook(input: $input) { webhookSubscription { id description eventTypes enabled } } }',
      { input: { id: sub.id, description: 'from GraphQL', eventTypes: ['PATIENT_UPDATED'] } },
      key,
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.updateWebhook.webhookSubscription).toEqual({
      id: sub.id,
      description: 'from GraphQL',
      eventTypes: ['PATIENT_UPDATED'],
      enabled: true,
    });
  });
});

describe('POST /v1/webhooks/{id}/rotate-secret', () => {
  it('both secrets sign during the overlap, only the new one after it', async () => {
    app.clock.set('2031-05-02T09:00:00Z');
    const r = await receiver();
    const sub = await subscribe(r);
    const old = sub.secret;
    const rotated = await app.post(`/v1/webhooks/${sub.id}/rotate-secret`, {}, key);
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const fresh = rotated.body.data.secret as string;
    expect(fresh).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(fresh).not.toBe(old);
    expect(rotated.body.data.previous_secret_expires_at).toBe(
      new Date(Date.parse('2031-05-02T09:00:00Z') + ROTATION_OVERLAP_HOURS * 3600_000).toISOString(),
    );
    expect((await app.get(`/v1/webhooks/${sub.id}`, key)).body.data.secret).toBe(
      `whsec_****${fresh.slice(-5, -1)}`,
    );
    r.known = [fresh, old];

    // A receiver still holding the old secret accepts; one holding the new accepts too.
    r.secret = old;
    await newPatient();
    await r.waitFor(1);
    r.secret = fresh;
    await newPatient();
    await r.waitFor(2);
    expect(r.arrivals.map((a) => a.signedBy)).toEqual([
      [fresh, old],
      [fresh, old],
    ]);
    expect(r.refused).toBe(0);

    // After the overlap (the injected clock), the old secret signs nothing.
    app.clock.set(
      new Date(Date.parse('2031-05-02T09:00:00Z') + ROTATION_OVERLAP_HOURS * 3600_000 + 1000).toISOString(),
    );
    await newPatient();
    await r.waitFor(3);
    expect(r.arrivals[2].signedBy).toEqual([fresh]);
    r.secret = old;
    await newPatient();
    const until = Date.now() + 10_000;
    while (r.refused === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(r.refused).toBeGreaterThan(0);
    expect(r.accepted).toHaveLength(3);
  });

  it('a second rotation within the overlap drops the oldest secret: only the last two sign', async () => {
    app.clock.set('2031-05-10T09:00:00Z');
    const r = await receiver();
    const sub = await subscribe(r);
    const s0 = sub.secret;
    const s1 = (await app.post(`/v1/webhooks/${sub.id}/rotate-secret`, {}, key)).body.data.secret as string;
    app.clock.advance(3600_000);
    const second = await app.post(`/v1/webhooks/${sub.id}/rotate-secret`, {}, key);
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    const s2 = second.body.data.secret as string;
    expect(new Set([s0, s1, s2]).size).toBe(3);
    // The overlap is the second rotation's: s1 signs for 24 h from it.
    expect(second.body.data.previous_secret_expires_at).toBe(
      new Date(Date.parse('2031-05-10T10:00:00Z') + ROTATION_OVERLAP_HOURS * 3600_000).toISOString(),
    );
    r.known = [s2, s1, s0];
    r.secret = s1;
    await newPatient();
    await r.waitFor(1);
    expect(r.arrivals[0].signedBy).toEqual([s2, s1]);
    // A receiver still on s0, well inside the first rotation's 24 h, is refused at once.
    r.secret = s0;
    await newPatient();
    const until = Date.now() + 10_000;
    while (r.refused === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(r.refused).toBeGreaterThan(0);
    expect(r.arrivals.every((a) => !a.signedBy.includes(s0))).toBe(true);
    expect(r.accepted).toHaveLength(1);
  });

  it('an Idempotency-Key replay rotates nothing; its secret is whole only while it is still the current one', async () => {
    app.clock.set('2031-05-12T09:00:00Z');
    const r = await receiver();
    const sub = await subscribe(r);
    const k = { 'idempotency-key': `rotate-${sub.id}` };
    const first = await app.post(`/v1/webhooks/${sub.id}/rotate-secret`, {}, key, k);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const s1 = first.body.data.secret as string;
    app.clock.advance(1000);
    const replay = await app.post(`/v1/webhooks/${sub.id}/rotate-secret`, {}, key, k);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    // The same rotation: its secret and overlap, the first secret still signing beside it.
    expect(replay.body.data).toEqual(first.body.data);
    r.known = [s1, sub.secret];
    r.secret = s1;
    await newPatient();
    await r.waitFor(1);
    expect(r.arrivals[0].signedBy).toEqual([s1, sub.secret]);
    // After a later rotation the replay shows its own secret masked, never the later one (the
    // store keeps none): docs/events.md, What a replay answers.
    const later = await app.post(`/v1/webhooks/${sub.id}/rotate-secret`, {}, key);
    const again = await app.post(`/v1/webhooks/${sub.id}/rotate-secret`, {}, key, k);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data).toEqual({ ...first.body.data, secret: `whsec_****${s1.slice(-5, -1)}` });
    expect(JSON.stringify(again.body)).not.toContain(later.body.data.secret);
  });

  it('is the rotateWebhookSecret mutation, whose answer alone carries the whole secret', async () => {
    const r = await receiver();
    const sub = await subscribe(r);
    const res = await app.gql(
      'mutation($input: RotateWebhookSecretInput!) { rotateWebhookSecret(input: $input) { webhookSubscription { secret previousSecretExpiresAt } } }',
      { input: { id: sub.id } },
      key,
    );
    expect(res.body.errors).toBeUndefined();
    const got = res.body.data.rotateWebhookSecret.webhookSubscription;
    expect(got.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(got.secret).not.toBe(sub.secret);
    expect(got.previousSecretExpiresAt).not.toBeNull();
  });
});

// A subscription receiving chat.* events, and a key without chat:read: test/webhook-visibility.test.ts.
