import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventSample } from '../src/services/webhooks/sample-data.ts';
import { freePort } from './free-port.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { runCli } from './run-cli.ts';
import { type Receiver, startReceiver } from './webhook-receiver.ts';

/**
 * Sample events (issue 29): POST /v1/webhooks/{id}/test, POST /v1/events (triggerEvent) and
 * `cli events trigger`, delivered through the real queue, worker and signing to receivers on
 * loopback that verify them (test/webhook-receiver.ts), marked `test: true`, and kept out of the
 * event list.
 */
let app: TestApp;
let key: string;
const receivers: Receiver[] = [];

beforeAll(async () => {
  app = await startTestApp({ limits: { webhookTimeoutMs: 1500 } });
  key = (await app.clinicWithKey('dental', ['webhooks:manage'])).key;
});
afterAll(async () => {
  for (const r of receivers) await r.close();
});

async function subscribe(event_types: string[], k = key) {
  const r = await startReceiver();
  receivers.push(r);
  const res = await app.post('/v1/webhooks', { url: r.url, event_types }, k);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  r.secret = res.body.data.secret;
  return { r, id: res.body.data.id as string };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('POST /v1/webhooks/{id}/test', () => {
  it("delivers a signed sample of the subscription's first type, marked test, never listed", async () => {
    const { r, id } = await subscribe(['appointment.cancelled', 'patient.created']);
    const res = await app.post(`/v1/webhooks/${id}/test`, {}, key);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.data).toMatchObject({
      type: 'appointment.cancelled',
      data: eventSample('appointment.cancelled'),
      test: true,
    });
    await r.waitFor(1);
    const [got] = r.accepted;
    expect(got.id).toBe(res.body.data.id);
    // The 202 answers the envelope as it is delivered, its marker included.
    expect(got.body).toEqual(res.body.data);
    // The bytes end with the marker; a real envelope has none.
    expect(r.arrivals[0].raw.endsWith(',"test":true}')).toBe(true);
    expect((await app.get('/v1/events', key)).body.data).toEqual([]);
    expect((await app.get(`/v1/events/${got.id}`, key)).status).toBe(404);
    const log = await app.get(`/v1/webhooks/${id}/deliveries`, key);
    expect(log.body.data).toHaveLength(1);
    expect(log.body.data[0]).toMatchObject({ status: 'succeeded', trigger: 'manual' });
  });

  it('a type the subscription does not receive is a 422; a disabled subscription a 409', async () => {
    const { r, id } = await subscribe(['patient.created']);
    const other = await app.post(`/v1/webhooks/${id}/test`, { type: 'call.completed' }, key);
    expect(other.status).toBe(422);
    expect(other.body.error.param).toBe('type');
    const chat = await app.post(`/v1/webhooks/${id}/test`, { type: 'chat.message.received' }, key);
    expect(chat.status).toBe(403);
    await app.send('PATCH', `/v1/webhooks/${id}`, { enabled: false }, key);
    expect((await app.post(`/v1/webhooks/${id}/test`, {}, key)).status).toBe(409);
    await pause(200);
    expect(r.hits).toBe(0);
  });

  it('a key without chat:read may not sample a subscription receiving chat.* (its first type, or every type): out of its sight, 404', async () => {
    const { clinicId, key: chatKey } = await app.clinicWithKey('dental', ['webhooks:manage', 'chat:read']);
    const plain = await app.key(clinicId, ['webhooks:manage']);
    for (const types of [['chat.message.received', 'patient.created'], []]) {
      const { r, id } = await subscribe(types, chatKey);
      for (const body of [{}, { type: 'patient.created' }]) {
        const res = await app.post(`/v1/webhooks/${id}/test`, body, plain);
        expect([res.status, res.body.error?.code], JSON.stringify(res.body)).toEqual([404, 'not_found']);
      }
      const gql = await app.gql(
        'mutation($input: TestWebhookInput!) { testWebhook(input: $input) { event { id } } }',
        { input: { id } },
        plain,
      );
      expect(gql.body.errors?.[0]?.extensions?.code, JSON.stringify(gql.body)).toBe('not_found');
      await pause(200);
      expect(r.hits).toBe(0);
    }
  });

  it('is the testWebhook mutation', async () => {
    const { r, id } = await subscribe([]);
    const res = await app.gql(
      'mutation($input: TestWebhookInput!) { testWebhook(input: $input) { event { id type } } }',
      { input: { id, type: 'PAYMENT_RECORDED' } },
      key,
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.testWebhook.event.type).toBe('PAYMENT_RECORDED');
    await r.waitFor(1);
    expect(r.accepted[0]).toMatchObject({ type: 'payment.recorded', id: res.body.data.testWebhook.event.id });
  });
});

describe('triggering a sample at the clinic', () => {
  it('POST /v1/events reaches every enabled subscription receiving the type, and only those', async () => {
    const other = (await app.clinicWithKey('dental', ['webhooks:manage'])).key;
    const [a, b, c, off] = [
      await subscribe(['treatment.created'], other),
      await subscribe([], other),
      await subscribe(['patient.created'], other),
      await subscribe(['treatment.created'], other),
    ];
    await app.send('PATCH', `/v1/webhooks/${off.id}`, { enabled: false }, other);
    const res = await app.post('/v1/events', { type: 'treatment.created' }, other);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await a.r.waitFor(1);
    await b.r.waitFor(1);
    await pause(300);
    expect(res.body.data.test).toBe(true);
    expect([a.r, b.r].map((r) => r.accepted[0].body)).toEqual([res.body.data, res.body.data]);
    expect(c.r.hits + off.r.hits).toBe(0);
    // A clinic whose one subscription receives no call.completed: nothing to deliver.
    const lone = (await app.clinicWithKey('dental', ['webhooks:manage'])).key;
    await subscribe(['patient.created'], lone);
    const none = await app.post('/v1/events', { type: 'call.completed' }, lone);
    expect(none.status).toBe(409);
    expect(none.body.error.code).toBe('conflict');
  });

  it('cli events trigger <type> sends one through the service', async () => {
    const k = (await app.clinicWithKey('dental', ['webhooks:manage'])).key;
    const { r } = await subscribe(['patient.updated'], k);
    const out = await runCli(['events', 'trigger', 'patient.updated', '--key', k, '--url', app.url]);
    expect(out.code, out.stderr).toBe(0);
    await r.waitFor(1);
    expect(r.accepted[0].body).toMatchObject({ type: 'patient.updated', test: true });
    expect(out.stdout).toContain(r.accepted[0].id);
  });

  it('cli events trigger without --url finds the service where PORT says npm start listens', async () => {
    const k = (await app.clinicWithKey('dental', ['webhooks:manage'])).key;
    const { r } = await subscribe(['patient.created'], k);
    const env = { PORT: new URL(app.url).port, HOST: '127.0.0.1' };
    const out = await runCli(['events', 'trigger', 'patient.created', '--key', k], env);
    expect(out.code, out.stderr).toBe(0);
    await r.waitFor(1);
    expect(r.accepted[0].body).toMatchObject({ type: 'patient.created', test: true });
  });

  it('cli events trigger, finding no service, names the address it tried and --url', async () => {
    const port = await freePort();
    const out = await runCli(['events', 'trigger', 'patient.created', '--key', key], {
      PORT: String(port),
      HOST: '127.0.0.1',
    });
    expect(out.code).not.toBe(0);
    expect(out.stderr).toContain(
      `The service at http://127.0.0.1:${port} did not answer (connect ECONNREFUSED`,
    );
    expect(out.stderr).toContain("give the service's address with --url");
  });
});
