import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Event } from '../src/entities/index.ts';
import { serializeEnvelope } from '../src/services/events/envelope.ts';
import { deliveryHeaders, signatureOf } from '../src/webhooks/signing.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * Webhook signing (issue 17): the envelope's bytes and the delivery headers of
 * src/webhooks/signing.ts, checked by a receiver written from the spec's "Verification" section
 * alone (a real HTTP server on loopback), and the bytes compared with GET /v1/events/{id}. The
 * event comes from a real write (POST /v1/patients); the secret from a real subscription.
 */
let app: TestApp;
let key: string;
let secret: string;
let event: Event;
let receiver: Receiver;

beforeAll(async () => {
  // No deliveries: these subscriptions point at a public address.
  app = await startTestApp({ workers: false });
  const c = await app.clinicWithKey('dental', ['patients:write', 'webhooks:manage']);
  key = c.key;
  const sub = await app.post('/v1/webhooks', { url: 'https://93.184.215.14/hooks' }, key);
  expect(sub.status, JSON.stringify(sub.body)).toBe(201);
  secret = sub.body.data.secret;
  const p = await app.post('/v1/patients', { first_name: 'Dana', last_name: 'Cohen' }, key);
  expect(p.status, JSON.stringify(p.body)).toBe(201);
  const events = await app.get('/v1/events?type=patient.created', key);
  const n = Number(String(events.body.data[0].id).slice('evt_'.length));
  event = await app.orm.em.fork().findOneOrFail(Event, n, { filters: false });
  receiver = await startReceiver(secret);
});

afterAll(() => receiver?.close());

// ---------- the receiver, from the spec's Verification section and header table alone ----------

interface Receiver {
  url: string;
  /** Event ids accepted, once each (deduplicated on X-Service-Event-Id). */
  accepted: string[];
  close(): Promise<void>;
}

const rawBodyOf = async (req: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

/**
 * "Compute HMAC-SHA256 over the exact raw bytes of the body (before any parsing) with the secret,
 * prefix with sha256=, compare with X-Service-Signature in constant time." The other headers of
 * the table must be there; the event id must be the body's; duplicates are answered 2xx and not
 * processed again. The spec sets no timestamp tolerance (the timestamp is not signed): only its
 * form, Unix time, is checked.
 */
async function startReceiver(key: string): Promise<Receiver> {
  const accepted: string[] = [];
  const server: Server = createServer(async (req, res) => {
    const raw = await rawBodyOf(req);
    const given = req.headers['x-service-signature'];
    const expected = Buffer.from(`sha256=${createHmac('sha256', key).update(raw).digest('hex')}`);
    const ok =
      req.method === 'POST' &&
      typeof given === 'string' &&
      Buffer.byteLength(given) === expected.length &&
      timingSafeEqual(Buffer.from(given), expected);
    if (!ok) return void res.writeHead(401).end();
    const id = req.headers['x-service-event-id'];
    const type = req.headers['x-service-event-type'];
    const ts = req.headers['x-service-timestamp'];
    if (typeof id !== 'string' || typeof type !== 'string' || typeof ts !== 'string' || !/^\d+$/.test(ts))
      return void res.writeHead(400).end();
    const body = JSON.parse(raw.toString('utf8'));
    if (body.id !== id || body.type !== type) return void res.writeHead(400).end();
    if (!accepted.includes(id)) accepted.push(id);
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    accepted,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const deliver = (body: string | Buffer, headers: Record<string, string>) =>
  fetch(receiver.url, {
    method: 'POST',
    body: typeof body === 'string' ? body : new Uint8Array(body),
    headers,
  }).then((r) => r.status);

// ---------- tests ----------

describe('the envelope', () => {
  it('is the exact bytes GET /v1/events/{id} answers as data', async () => {
    const body = serializeEnvelope(event);
    const res = await fetch(`${app.url}/v1/events/evt_${event.id}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(`{"data":${body}}`);
    expect(JSON.parse(body)).toMatchObject({
      id: `evt_${event.id}`,
      type: 'patient.created',
      created_at: '2026-11-01T10:00:00.000Z',
      data: { first_name: 'Dana', last_name: 'Cohen' },
    });
    expect(Object.keys(JSON.parse(body))).toEqual(['id', 'type', 'created_at', 'data']);
  });
});

describe('the headers', () => {
  it('sign the raw body as the spec says, with the signing time and the event', () => {
    const body = serializeEnvelope(event);
    const now = new Date('2026-11-01T10:00:05.900Z');
    const h = deliveryHeaders(secret, event, body, now);
    const hex = createHmac('sha256', secret).update(Buffer.from(body)).digest('hex');
    expect(h).toEqual({
      'Content-Type': 'application/json',
      'X-Service-Signature': `sha256=${hex}`,
      'X-Service-Timestamp': String(Date.parse('2026-11-01T10:00:05Z') / 1000),
      'X-Service-Event-Id': `evt_${event.id}`,
      'X-Service-Event-Type': 'patient.created',
      // Standard Webhooks' (test/standard-webhooks.test.ts verifies them with the libraries).
      'webhook-id': `evt_${event.id}`,
      'webhook-timestamp': String(Date.parse('2026-11-01T10:00:05Z') / 1000),
      'webhook-signature': `v1,${createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
        .update(`evt_${event.id}.${Date.parse('2026-11-01T10:00:05Z') / 1000}.${body}`)
        .digest('base64')}`,
    });
    expect(signatureOf(secret, body)).toBe(`sha256=${hex}`);
    expect(signatureOf(secret, Buffer.from(body))).toBe(`sha256=${hex}`);
  });
});

describe('a receiver written from the spec', () => {
  it('accepts a signed delivery, and a duplicate once', async () => {
    const body = serializeEnvelope(event);
    const headers = deliveryHeaders(secret, event, body, app.clock.now());
    expect(await deliver(body, headers)).toBe(204);
    expect(await deliver(body, headers)).toBe(204);
    expect(receiver.accepted).toEqual([`evt_${event.id}`]);
  });

  it('refuses a body changed by one byte', async () => {
    const body = Buffer.from(serializeEnvelope(event));
    const headers = deliveryHeaders(secret, event, body, app.clock.now());
    const changed = Buffer.from(body);
    const at = changed.indexOf('Dana');
    changed[at] = 'E'.charCodeAt(0);
    expect(changed.equals(body)).toBe(false);
    expect(await deliver(changed, headers)).toBe(401);
    // Whitespace is a byte too: a re-serialised body is not the signed one.
    expect(await deliver(JSON.stringify(JSON.parse(body.toString()), null, 1), headers)).toBe(401);
  });

  it('refuses a signature made with another secret', async () => {
    const body = serializeEnvelope(event);
    const headers = deliveryHeaders(`${secret}x`, event, body, app.clock.now());
    expect(await deliver(body, headers)).toBe(401);
  });

  it('refuses a delivery missing any of the headers', async () => {
    const body = serializeEnvelope(event);
    const headers = deliveryHeaders(secret, event, body, app.clock.now());
    for (const name of [
      'X-Service-Signature',
      'X-Service-Timestamp',
      'X-Service-Event-Id',
      'X-Service-Event-Type',
    ]) {
      const { [name]: _, ...rest } = headers;
      expect(await deliver(body, rest), name).toBeGreaterThanOrEqual(400);
    }
    expect(await deliver(body, headers)).toBe(204);
  });
});
