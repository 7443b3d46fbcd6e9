import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Clinic, Template } from '../src/entities/index.ts';
import type { MessagingNetwork, NetworkTemplate } from '../src/network/adapter.ts';
import { SANDBOX_TEMPLATES } from '../src/network/sandbox-templates.ts';
import { sendQueued } from '../src/services/chat/send-worker.ts';
import { replaceTemplates, syncTemplates, writeTemplates } from '../src/services/chat/template-sync.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * Chat's writes on the one write mechanism (issue 26): handled and reactions take
 * Idempotency-Key, If-Match and answer an ETag as every write does; a template sync is one
 * write; the send worker's save of the network id is a write of the clinic that moves nothing
 * a client sees.
 */
let app: TestApp;
let read: string;
let write: string;
let clinicId: number;
let clinicPhone: string;
let n = 0;

beforeAll(async () => {
  // No workers: the send worker's save is run by the test, over a network that posts no receipts.
  app = await startTestApp({ workers: false });
  const c = await app.clinicWithKey('dental', ['chat:read']);
  clinicId = c.clinicId;
  read = c.key;
  write = await app.key(clinicId, ['chat:write']);
  const em = app.orm.em.fork();
  const clinic = await em.findOneOrFail(Clinic, clinicId);
  clinic.handledMarkingEnabled = true;
  await em.flush();
  clinicPhone = clinic.phone as string;
  await syncTemplates(app.orm.em.fork(), clinicId, app.server.network);
});

beforeEach(() => {
  app.clock.set('2026-11-01T10:00:00Z');
});

const newPhone = () => `+97250${String(2000000 + ++n * 7)}`;
const inbound = async (from: string) =>
  (await app.server.network.inbound({ clinicPhone, from, text: 'Hello' })) as {
    id: string;
    conversation_id: string;
  };
const events = async () =>
  (
    await app.orm.em
      .fork()
      .getConnection()
      .execute<{ n: string }[]>('select count(*) as n from "event" where "clinic_id" = ?', [clinicId])
  )[0].n;

describe('handled', () => {
  const mark = (id: string, body: unknown, headers: Record<string, string> = {}) =>
    app.post(`/v1/chat/conversations/${id}/handled`, body, write, headers);

  it('honours Idempotency-Key: a replay, another body a 409, a malformed key a 422', async () => {
    const { conversation_id: id } = await inbound(newPhone());
    const key = { 'idempotency-key': `handled-${id}` };
    const first = await mark(id, { handled: true }, key);
    expect(first.status).toBe(200);
    app.clock.set('2026-11-01T10:00:05Z');
    const again = await mark(id, { handled: true }, key);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const other = await mark(id, { handled: false }, key);
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ code: 'conflict', param: 'Idempotency-Key' });
    expect((await app.get(`/v1/chat/conversations/${id}`, read)).body.data.is_handled).toBe(true);
    const bad = await mark(id, { handled: false }, { 'idempotency-key': 'has space' });
    expect(bad.status).toBe(422);
    expect(bad.body.error.param).toBe('Idempotency-Key');
  });

  it('answers an ETag that a change moves and a GET repeats; a stale If-Match is a 412', async () => {
    const { conversation_id: id } = await inbound(newPhone());
    const before = await app.get(`/v1/chat/conversations/${id}`, read);
    const etag = before.headers.get('etag') as string;
    expect(etag).toMatch(/^"\d+"$/);
    app.clock.set('2026-11-01T10:01:00Z');
    const r = await mark(id, { handled: true }, { 'if-match': etag });
    expect(r.status).toBe(200);
    expect(r.headers.get('etag')).not.toBe(etag);
    expect(r.headers.get('etag')).toBe(
      (await app.get(`/v1/chat/conversations/${id}`, read)).headers.get('etag'),
    );
    expect(r.body.data.updated_at).toBe('2026-11-01T10:01:00.000Z');
    const stale = await mark(id, { handled: false }, { 'if-match': etag });
    expect(stale.status).toBe(412);
    expect((await app.get(`/v1/chat/conversations/${id}`, read)).body.data.is_handled).toBe(true);
  });

  it('GraphQL takes the one input style, idempotencyKey in it', async () => {
    const { conversation_id: id } = await inbound(newPhone());
    const q = (handled: boolean) =>
      app.gql(
        `mutation { markConversationHandled(input: { id: "${id}", handled: ${handled}, idempotencyKey: "gql-${id}" }) { conversation { isHandled } } }`,
        {},
        write,
      );
    expect((await q(true)).body.data.markConversationHandled.conversation.isHandled).toBe(true);
    const other = await q(false);
    expect(other.body.errors[0].extensions).toMatchObject({
      code: 'conflict',
      param: 'input.idempotencyKey',
    });
  });
});

describe('reactions', () => {
  const react = (id: string, body: unknown, headers: Record<string, string> = {}) =>
    app.post(`/v1/chat/messages/${id}/reaction`, body, write, headers);

  it('honour Idempotency-Key (the network hears one reaction) and If-Match; the ETag moves', async () => {
    const m = await inbound(newPhone());
    const etag = (await app.get(`/v1/chat/messages/${m.id}`, read)).headers.get('etag') as string;
    const heard = app.server.network.reactions.length;
    app.clock.set('2026-11-01T10:02:00Z');
    const key = { 'idempotency-key': `react-${m.id}` };
    const r = await react(m.id, { emoji: '👍' }, { ...key, 'if-match': etag });
    expect(r.status).toBe(200);
    expect(r.body.data.reactions.clinic).toBe('👍');
    expect(r.headers.get('etag')).not.toBe(etag);
    expect(r.headers.get('etag')).toBe(
      (await app.get(`/v1/chat/messages/${m.id}`, read)).headers.get('etag'),
    );
    const again = await react(m.id, { emoji: '👍' }, { ...key, 'if-match': etag });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(app.server.network.reactions.length).toBe(heard + 1);
    expect((await react(m.id, { emoji: '❤️' }, key)).status).toBe(409);
    // A stale version is refused before the network hears of it.
    const stale = await react(m.id, { emoji: '❤️' }, { 'if-match': etag });
    expect(stale.status).toBe(412);
    expect(app.server.network.reactions.length).toBe(heard + 1);
    expect((await react(m.id, { emoji: '❤️' }, { 'idempotency-key': ' ' })).status).toBe(422);
  });
});

describe('send', () => {
  it('is a create of the one write mechanism: If-Match refused (nothing sent), the ETag a GET repeats', async () => {
    const phone = newPhone();
    await inbound(phone);
    const count = async () =>
      (
        await app.orm.em
          .fork()
          .getConnection()
          .execute<{ n: string }[]>(
            `select count(*) as n from "message" where "clinic_id" = ? and "direction" = 'outbound'`,
            [clinicId],
          )
      )[0].n;
    const before = await count();
    const refused = await app.post('/v1/chat/messages', { to: phone, text: 'hi' }, write, {
      'if-match': '"1764072000123"',
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'validation_failed', param: 'If-Match' });
    expect(await count()).toBe(before);
    const key = { 'idempotency-key': `send-${phone}` };
    const sent = await app.post('/v1/chat/messages', { to: phone, text: 'hi' }, write, key);
    expect(sent.status).toBe(202);
    expect(Object.keys(sent.body).sort()).toEqual(['data', 'meta']);
    expect(sent.body.meta).toEqual({ delivery_mode: 'free_text', caption: null });
    const got = await app.get(`/v1/chat/messages/${sent.body.data.id}`, read);
    expect(sent.headers.get('etag')).toMatch(/^"\d+"$/);
    expect(sent.headers.get('etag')).toBe(got.headers.get('etag'));
    const again = await app.post('/v1/chat/messages', { to: phone, text: 'hi' }, write, key);
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('etag')).toBe(sent.headers.get('etag'));
    expect(again.body).toEqual(sent.body);
  });
});

describe('template sync', () => {
  const names = async () =>
    (
      await app.orm.em
        .fork()
        .find(Template, { clinic: clinicId }, { filters: false, orderBy: { name: 'asc' } })
    ).map((t) => t.name);
  // The second row is one PostgreSQL refuses (text cannot hold NUL): the failure comes half-way.
  const broken: NetworkTemplate[] = [
    { ...SANDBOX_TEMPLATES[0], name: 'first_of_new' },
    { ...SANDBOX_TEMPLATES[1], name: 'bad\u0000name' },
  ];

  it('is atomic: a failure half-way leaves the old templates', async () => {
    const before = await names();
    expect(before.length).toBeGreaterThan(2);
    await expect(replaceTemplates(app.orm.em.fork(), clinicId, broken)).rejects.toThrow();
    expect(await names()).toEqual(before);
    // The delete and inserts alone cannot run outside a transaction (the delete would commit alone).
    await expect(writeTemplates(app.orm.em.fork(), clinicId, broken)).rejects.toThrow();
    expect(await names()).toEqual(before);
  });
});

describe('the send worker', () => {
  it("saves the network's id as a write that moves no ETag, no sync place and records no event", async () => {
    const phone = newPhone();
    await inbound(phone);
    const sent = await app.post('/v1/chat/messages', { to: phone, text: 'hi' }, write);
    expect(sent.status).toBe(202);
    const id: string = sent.body.data.id;
    const queued = await app.get(`/v1/chat/messages/${id}`, read);
    const seqOf = async () =>
      (
        await app.orm.em
          .fork()
          .getConnection()
          .execute<{ seq: string; network_message_id: string | null }[]>(
            'select "seq", "network_message_id" from "message" where "id" = ?',
            [Number(id.slice(4))],
          )
      )[0];
    const seq = (await seqOf()).seq;
    const count = await events();
    // A network that takes the send and reports nothing: only the worker's save changes the row.
    const quiet = {
      send: async () => ({ networkMessageId: `quiet-${id}` }),
      react: async () => {},
      templates: async () => [],
    } as unknown as MessagingNetwork;
    app.clock.set('2026-11-01T10:03:00Z');
    await sendQueued(
      { em: app.orm.em, networks: { test: quiet, live: null }, clock: app.clock },
      { message: Number(id.slice(4)), clinic: clinicId },
    );
    expect(await seqOf()).toEqual({ seq, network_message_id: `quiet-${id}` });
    const after = await app.get(`/v1/chat/messages/${id}`, read);
    expect(after.headers.get('etag')).toBe(queued.headers.get('etag'));
    expect(after.body.data).toEqual(queued.body.data);
    expect(await events()).toBe(count);
  });
});
