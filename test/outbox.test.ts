import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Clinic, Conversation } from '../src/entities/index.ts';
import { signBody } from '../src/lib/signing.ts';
import { REJECTION_REASON, TEST_NUMBERS } from '../src/network/sandbox.ts';
import { chatChange } from '../src/services/chat/changes.ts';
import { syncTemplates } from '../src/services/chat/template-sync.ts';
import { NETWORK_SECRET, startTestApp, type TestApp } from './helpers.ts';

/**
 * The outbox (issue 16, groundwork): every chat change the spec's events speak of records its
 * event in the same transaction as the change, its `data` the message as a GET answers
 * it right after; a write that fails before its commit leaves neither change nor event.
 */
let app: TestApp;
let read: string;
let write: string;
let clinicId: number;
let clinicPhone: string;
let n = 0;

beforeAll(async () => {
  // Receipts far enough apart that a loaded machine still delivers them in order (the order of
  // events per receipt is what is tested; out-of-order receipts are test/chat.test.ts's).
  app = await startTestApp({ sandboxDelays: { sent: 10, delivered: 200, read: 400 } });
  const c = await app.clinicWithKey('dental', ['chat:read']);
  clinicId = c.clinicId;
  read = c.key;
  write = await app.key(clinicId, ['chat:write']);
  clinicPhone = (await app.orm.em.fork().findOneOrFail(Clinic, clinicId)).phone as string;
  await syncTemplates(app.orm.em.fork(), clinicId, app.server.network);
});

beforeEach(() => {
  app.clock.set('2026-11-01T10:00:00Z');
});

const newPhone = () => `+97253${String(1000000 + ++n * 17)}`;

interface EventRow {
  id: number;
  type: string;
  scope: string;
  data: any;
  created_at: string | Date;
}

async function eventsAfter(id: number): Promise<EventRow[]> {
  return app.orm.em
    .fork()
    .getConnection()
    .execute<EventRow[]>(
      'select "id", "type", "scope", "data", "created_at" from "event" where "clinic_id" = ? and "id" > ? order by "id"',
      [clinicId, id],
    );
}

async function lastEventId(): Promise<number> {
  const [row] = await app.orm.em
    .fork()
    .getConnection()
    .execute<{ id: number | null }[]>('select max("id") as "id" from "event"');
  return row.id ?? 0;
}

const asGot = async (id: string) => (await app.get(`/v1/chat/messages/${id}`, read)).body.data;

async function callback(event: unknown) {
  const body = JSON.stringify(event);
  return app.post('/hooks/network', body, null, { 'x-service-signature': signBody(NETWORK_SECRET, body) });
}

describe('chat events', () => {
  it('an inbound message records chat.message.received, its data the GET body', async () => {
    const before = await lastEventId();
    const from = newPhone();
    const r = (await app.server.network.inbound({ clinicPhone, from, text: 'Is the clinic open?' })) as {
      id: string;
    };
    const events = await eventsAfter(before);
    expect(events.map((e) => e.type)).toEqual(['chat.message.received']);
    expect(events[0].scope).toBe('chat:read');
    expect(events[0].data).toEqual(await asGot(r.id));
    expect(new Date(events[0].created_at).toISOString()).toBe('2026-11-01T10:00:00.000Z');
    // A copy of the callback is a duplicate: no second event.
    expect(await eventsAfter(events[0].id)).toEqual([]);
  });

  it('a send records nothing while queued, then one event per receipt that moves it on', async () => {
    const to = newPhone();
    await app.server.network.inbound({ clinicPhone, from: to, text: 'Hi' });
    const before = await lastEventId();
    const sent = await app.post('/v1/chat/messages', { to, text: 'We are open until 6' }, write);
    expect(sent.status).toBe(202);
    expect(await eventsAfter(before)).toEqual([]);
    await app.settle();
    const events = await eventsAfter(before);
    expect(events.map((e) => e.type)).toEqual([
      'chat.message.sent',
      'chat.message.delivered',
      'chat.message.read',
    ]);
    expect(events.map((e) => e.data.status)).toEqual(['sent', 'delivered', 'read']);
    expect(events.every((e) => e.data.id === sent.body.data.id)).toBe(true);
    expect(events.at(-1)?.data).toEqual(await asGot(sent.body.data.id));
    // A receipt sent again changes no status: no event.
    const networkId = app.server.network.sent.at(-1)?.networkMessageId;
    const again = await callback({
      type: 'receipt',
      network_message_id: networkId,
      clinic_phone: clinicPhone,
      status: 'read',
      failure_reason: null,
      at: '2026-11-01T10:00:05Z',
    });
    expect(again.body.status).toBe('recorded');
    expect(await eventsAfter(events.at(-1)?.id ?? 0)).toEqual([]);
  });

  it('chat.message.failed carries failure_reason null; the message keeps its reason', async () => {
    const to = `+972${TEST_NUMBERS.rejected}`;
    await app.server.network.inbound({ clinicPhone, from: to, text: 'Hi' });
    const before = await lastEventId();
    const sent = await app.post('/v1/chat/messages', { to, text: 'Reply' }, write);
    await app.settle();
    const events = await eventsAfter(before);
    expect(events.map((e) => e.type)).toEqual(['chat.message.failed']);
    expect(events[0].data).toMatchObject({ status: 'failed', failure_reason: null });
    const now = await asGot(sent.body.data.id);
    expect(now.failure_reason).toBe(REJECTION_REASON);
    expect(events[0].data).toEqual({ ...now, failure_reason: null });
  });

  it('a message staff sent from the clinic phone records chat.message.sent', async () => {
    const before = await lastEventId();
    const to = newPhone();
    const r = await callback({
      type: 'message.echo',
      network_message_id: `echo_${to}`,
      clinic_phone: clinicPhone,
      to,
      message_type: 'text',
      text: 'Sent from the front desk phone',
      media: null,
      at: '2026-11-01T10:00:00Z',
    });
    const events = await eventsAfter(before);
    expect(events.map((e) => e.type)).toEqual(['chat.message.sent']);
    expect(events[0].data).toEqual(await asGot(r.body.id));
  });
});

describe('one unit of work', () => {
  it('a write that fails after its change and before its commit leaves neither change nor event', async () => {
    const before = await lastEventId();
    const phone = newPhone();
    await expect(
      chatChange(app.orm.em.fork(), clinicId, async (change) => {
        change.em.create(Conversation, {
          clinic: clinicId,
          patientPhone: phone,
          clinicPhone,
          isHandled: false,
          seq: change.seq,
          createdAt: change.now,
          updatedAt: change.now,
        });
        change.record({
          type: 'chat.message.received',
          scope: 'chat:read',
          data: async () => ({ ok: true }),
        });
        change.record({
          type: 'chat.message.received',
          scope: 'chat:read',
          data: async () => {
            throw new Error('injected failure before commit');
          },
        });
      }),
    ).rejects.toThrow('injected failure before commit');
    expect(await eventsAfter(before)).toEqual([]);
    const found = await app.orm.em.fork().findOne(Conversation, { patientPhone: phone }, { filters: false });
    expect(found).toBeNull();
  });
});
