import { afterAll, beforeAll, expect, it } from 'vitest';
import { Clinic } from '../src/entities/index.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { type Receiver, startReceiver } from './webhook-receiver.ts';

/**
 * ROLES without deliveries (src/lib/roles.ts; WORKERS=off before it): the service leaves webhook
 * deliveries to `npm run worker`, and still hands chat sends to its own network, so a service
 * run that way strands no message.
 */
let app: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  app = await startTestApp({ deliveryWorkers: false });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
});

it('sends chat, and leaves the delivery job queued for a worker process', async () => {
  const c = await app.clinicWithKey('dental', ['webhooks:manage', 'chat:read']);
  const write = await app.key(c.clinicId, ['chat:write']);
  const sub = await app.post('/v1/webhooks', { url: receiver.url }, c.key);
  // The patient writes first: the 24-hour window is open for free text.
  const clinicPhone = (await app.orm.em.fork().findOneOrFail(Clinic, c.clinicId)).phone as string;
  await app.server.network.inbound({ clinicPhone, from: '+972531234567', text: 'Open today?' });
  expect(sub.status, JSON.stringify(sub.body)).toBe(201);
  const sent = await app.post('/v1/chat/messages', { to: '+972531234567', text: 'Until 6' }, write);
  expect(sent.status, JSON.stringify(sent.body)).toBe(202);
  await app.settle();
  const after = await app.get(`/v1/chat/messages/${sent.body.data.id}`, c.key);
  expect(after.body.data.status).not.toBe('queued');
  // The events of the send are recorded and their deliveries queued, none attempted here.
  await new Promise((r) => setTimeout(r, 500));
  const [{ n }] = await app.orm.em
    .getConnection()
    .execute(
      `select count(*)::int as n from pgboss.job where name = 'webhook-delivery' and state = 'created'`,
    );
  expect(n).toBeGreaterThan(0);
  expect(receiver.hits).toBe(0);
});
