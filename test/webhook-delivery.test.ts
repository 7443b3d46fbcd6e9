import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { until } from './until.ts';
import { type Receiver, startReceiver } from './webhook-receiver.ts';

/**
 * Webhook delivery end to end (issue 17, Delivery): the service's own worker posts each event,
 * from its write, to a real receiver on loopback that verifies the signature as the spec's
 * Verification section says; only subscribed types; a hanging receiver does not delay another
 * subscription; manual retry and recover over REST; DELETE drops queued attempts.
 */
let app: TestApp;
let key: string;
const receivers: Receiver[] = [];

beforeAll(async () => {
  app = await startTestApp({ limits: { webhookTimeoutMs: 1500 } });
  key = (await app.clinicWithKey('dental', ['webhooks:manage', 'patients:write', 'patients:read'])).key;
});
afterAll(async () => {
  for (const r of receivers) await r.close();
});

async function subscribe(body: Record<string, unknown> = {}) {
  const receiver = await startReceiver();
  receivers.push(receiver);
  const r = await app.post('/v1/webhooks', { url: receiver.url, ...body }, key);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  receiver.secret = r.body.data.secret;
  return { receiver, id: r.body.data.id as string };
}

const newPatient = (last: string) => app.post('/v1/patients', { first_name: 'Ada', last_name: last }, key);

async function deliveries(id: string) {
  const r = await app.get(`/v1/webhooks/${id}/deliveries?limit=100`, key);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data as any[];
}

describe('delivery', () => {
  it('posts the envelope, signed, from the write; the log shows the attempt', async () => {
    const { receiver, id } = await subscribe({ event_types: ['patient.created', 'patient.updated'] });
    const p = await newPatient('Delivered');
    expect(p.status).toBe(201);
    await receiver.waitFor(1);
    const [got] = receiver.accepted;
    expect(got.type).toBe('patient.created');
    expect(got.body.data).toEqual(p.body.data);
    const ev = await app.get(`/v1/events/${got.id}`, key);
    expect(got.body).toEqual(ev.body.data);
    const update = await app.send('PATCH', `/v1/patients/${p.body.data.id}`, { first_name: 'Ida' }, key);
    expect(update.status, JSON.stringify(update.body)).toBe(200);
    await receiver.waitFor(2);
    expect(receiver.accepted[1].type).toBe('patient.updated');
    expect(receiver.accepted[1].body.data.first_name).toBe('Ida');
    expect(receiver.refused).toBe(0);
    const log = await until(
      () => deliveries(id),
      (l) => l.length === 2,
    );
    expect(log[1]).toMatchObject({
      event: { id: got.id, type: 'patient.created' },
      trigger: 'scheduled',
      status: 'succeeded',
      attempt: 1,
      response_status: 204,
      error: null,
      next_attempt_at: null,
    });
  });

  it('only subscribed types', async () => {
    const { receiver } = await subscribe({ event_types: ['patient.updated'] });
    const { receiver: all } = await subscribe();
    await newPatient('NotForYou');
    await all.waitFor(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.hits).toBe(0);
  });

  it('a receiver that hangs does not delay another subscription', async () => {
    const { receiver: slow } = await subscribe({ event_types: ['patient.created'] });
    slow.mode.hang = true;
    const { receiver: fast } = await subscribe({ event_types: ['patient.created'] });
    const started = Date.now();
    for (let i = 0; i < 12; i++) await newPatient(`Busy${i}`);
    await fast.waitFor(12, 5000);
    // Every event reached the fast receiver long before the slow one's attempts time out (1.5 s).
    expect(Date.now() - started).toBeLessThan(1400);
    expect(slow.hits).toBeGreaterThan(0);
    slow.mode.hang = false;
  });

  it('a failed attempt is logged with the next one scheduled; a manual retry delivers it', async () => {
    const { receiver, id } = await subscribe({ event_types: ['patient.created'] });
    receiver.mode.status = 503;
    await newPatient('Retry');
    const [failed] = await until(
      () => deliveries(id),
      (l) => l.length === 1,
    );
    expect(failed).toMatchObject({ status: 'failed', response_status: 503, response_excerpt: 'not now' });
    expect(failed.error).toContain('503');
    // 10 s ±20 % after the failure, on the app's clock.
    const due = Date.parse(failed.next_attempt_at) - Date.parse(app.clock.now().toISOString());
    expect(due).toBeGreaterThanOrEqual(8000);
    expect(due).toBeLessThanOrEqual(12000);
    receiver.mode.status = undefined;
    const r = await app.post(`/v1/webhooks/${id}/deliveries/${failed.id}/retry`, {}, key);
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect(r.body.data.id).toBe(id);
    await receiver.waitFor(1);
    const log = await until(
      () => deliveries(id),
      (l) => l.length === 2,
    );
    expect(log[0]).toMatchObject({
      trigger: 'manual',
      status: 'succeeded',
      attempt: 2,
      next_attempt_at: null,
    });
    // Another subscription's delivery, or an unknown one: 404.
    const other = await subscribe();
    expect((await app.post(`/v1/webhooks/${other.id}/deliveries/${failed.id}/retry`, {}, key)).status).toBe(
      404,
    );
    expect((await app.post(`/v1/webhooks/${id}/deliveries/whd_999999/retry`, {}, key)).status).toBe(404);
    // Its event removed by retention (its deliveries go with it): 404, nothing queued.
    await app.orm.em
      .fork()
      .getConnection()
      .execute('delete from event where id = ?', [Number(failed.event.id.slice(4))]);
    const gone = await app.post(`/v1/webhooks/${id}/deliveries/${failed.id}/retry`, {}, key);
    expect(gone.status, JSON.stringify(gone.body)).toBe(404);
    expect((await app.post(`/v1/webhooks/${id}/deliveries/nope/retry`, {}, key)).status).toBe(404);
  });

  it('GraphQL: the same retry as a mutation', async () => {
    const { receiver, id } = await subscribe({ event_types: ['patient.created'] });
    receiver.mode.status = 500;
    await newPatient('GqlRetry');
    const [failed] = await until(
      () => deliveries(id),
      (l) => l.length === 1,
    );
    receiver.mode.status = undefined;
    const g = await app.gql(
      `mutation($id: ID!, $d: ID!) { retryWebhookDelivery(input: { id: $id, deliveryId: $d }) { webhookSubscription { id enabled } } }`,
      { id, d: failed.id },
      key,
    );
    expect(g.body.errors, JSON.stringify(g.body)).toBeUndefined();
    expect(g.body.data.retryWebhookDelivery.webhookSubscription).toEqual({ id, enabled: true });
    await receiver.waitFor(1);
  });

  it('recover queues every event whose latest attempt failed since a time', async () => {
    // The earlier tests' events predate this subscription (recover leaves them alone).
    app.clock.advance(1000);
    const { receiver, id } = await subscribe({ event_types: ['patient.created'] });
    receiver.mode.status = 500;
    for (const n of ['R1', 'R2', 'R3']) await newPatient(n);
    await until(
      () => deliveries(id),
      (l) => l.length === 3,
    );
    receiver.mode.status = undefined;
    const r = await app.post(`/v1/webhooks/${id}/recover`, { since: '2026-11-01T00:00:00Z' }, key);
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    await receiver.waitFor(3);
    expect(new Set(receiver.accepted.map((a) => a.body.data.last_name))).toEqual(new Set(['R1', 'R2', 'R3']));
    // Nothing failed is left: a second recover queues nothing.
    await until(
      () => deliveries(id),
      (l) => l.length === 6,
    );
    await app.post(`/v1/webhooks/${id}/recover`, { since: '2026-11-01T00:00:00Z' }, key);
    await new Promise((res) => setTimeout(res, 300));
    expect(receiver.hits).toBe(6);
    expect((await app.post(`/v1/webhooks/${id}/recover`, { since: 'yesterday' }, key)).status).toBe(422);
  });

  it('recover delivers the events recorded while the subscription was disabled, once', async () => {
    // Recorded before the subscription existed: never its event, recover or not.
    await newPatient('BeforeIt');
    app.clock.advance(1000);
    const { receiver, id } = await subscribe({ event_types: ['patient.created'] });
    const sql = (q: string, p: unknown[]) => app.orm.em.fork().getConnection().execute(q, p);
    // As the failure rule disables it.
    await sql(
      `update webhook_subscription set enabled = false, disabled_at = now(), disabled_reason = 'test' where id = ?`,
      [Number(id.slice(3))],
    );
    const off = [];
    for (const n of ['Off1', 'Off2']) off.push(await newPatient(n));
    // A type it does not subscribe to: not queued by recover either.
    const patched = await app.send(
      'PATCH',
      `/v1/patients/${off[0].body.data.id}`,
      { first_name: 'Other' },
      key,
    );
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    await new Promise((res) => setTimeout(res, 300));
    expect(receiver.hits).toBe(0);
    const r = await app.post(`/v1/webhooks/${id}/recover`, { since: '2026-11-01T00:00:00Z' }, key);
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect(r.body.data.enabled).toBe(true);
    await receiver.waitFor(2);
    await until(
      () => deliveries(id),
      (l) => l.length === 2,
    );
    expect(new Set(receiver.accepted.map((a) => a.body.data.last_name))).toEqual(new Set(['Off1', 'Off2']));
    // Delivered now: a second recover queues nothing.
    await app.post(`/v1/webhooks/${id}/recover`, { since: '2026-11-01T00:00:00Z' }, key);
    await new Promise((res) => setTimeout(res, 300));
    expect(receiver.hits).toBe(2);
  });

  it('DELETE drops queued attempts, retries included', async () => {
    const { receiver, id } = await subscribe({ event_types: ['patient.created'] });
    receiver.mode.status = 500;
    await newPatient('Deleted');
    await until(
      () => deliveries(id),
      (l) => l.length === 1,
    );
    const queued = () =>
      app.orm.em
        .fork()
        .getConnection()
        .execute(
          `select count(*)::int as n from pgboss.job where name = 'webhook-delivery' and data->>'subscription' = ? and state in ('created', 'retry')`,
          [id.slice(3)],
        )
        .then((rows: any[]) => rows[0].n as number);
    expect(await queued()).toBe(1);
    expect((await app.send('DELETE', `/v1/webhooks/${id}`, undefined, key)).status).toBe(200);
    expect(await queued()).toBe(0);
  });
});
