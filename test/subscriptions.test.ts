import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { announceKeyChange, revokeApiKey } from '../src/auth/keys.ts';
import { ApiKey, Clinic, Event } from '../src/entities/index.ts';
import type { AppServices } from '../src/lib/request-context.ts';
import { EventEnvelope } from '../src/services/events/event.resource.ts';
import { EventHub } from '../src/services/events/hub.ts';
import { liveEvents } from '../src/services/events/live.ts';
import { graphqlOf } from './graphql-form.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { systemContext } from './system-context.ts';
import { connect, type TestSocket, until } from './ws-client.ts';

/**
 * GraphQL subscriptions over graphql-ws at /graphql (docs/events.md, Subscriptions): the key in
 * connection_init (4403 otherwise), the same scopes and limits as HTTP, `events` yielding exactly
 * what GET /v1/events/{id} answers, replay with `after`, revocation closing the socket, and the
 * typed chat subscriptions fed by real sends and the sandbox network's receipts.
 */
let app: TestApp;
let clinicId: number;
let clinicPhone: string;
let writer: string;
/** webhooks:manage + chat:read */
let full: string;
/** webhooks:manage without chat:read */
let noChat: string;
let chatRead: string;
let chatWrite: string;
let otherWriter: string;
let n = 0;
const sockets: TestSocket[] = [];

const open = (params: Record<string, unknown> | null) => {
  const s = connect(app.url, params);
  sockets.push(s);
  return s;
};
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

/** A promise's value, or a failure after `ms`. */
const within = <T>(p: Promise<T>, ms = 5000): Promise<T> =>
  Promise.race([
    p,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`not within ${ms} ms`)), ms)),
  ]);

beforeAll(async () => {
  app = await startTestApp({ limits: { graphqlMaxDepth: 4, graphqlMaxCost: 50 } });
  const c = await app.clinicWithKey('dental', ['patients:write'], 'subs A');
  clinicId = c.clinicId;
  writer = c.key;
  full = await app.key(clinicId, ['webhooks:manage', 'chat:read']);
  noChat = await app.key(clinicId, ['webhooks:manage']);
  chatRead = await app.key(clinicId, ['chat:read']);
  chatWrite = await app.key(clinicId, ['chat:write']);
  clinicPhone = (await app.orm.em.fork().findOneOrFail(Clinic, clinicId)).phone as string;
  otherWriter = (await app.clinicWithKey('dental', ['patients:write'], 'subs B')).key;
});

// Each test starts without subscribers: `eventHub.size` then counts the test's own.
afterEach(async () => {
  await Promise.all(sockets.splice(0).map((s) => s.dispose()));
  await until(() => app.server.app.eventHub.size === 0 && app.server.subscriptions.size === 0);
});

afterAll(async () => {
  await Promise.all(sockets.map((s) => s.dispose()));
});

async function createPatient(key = writer): Promise<string> {
  const r = await app.post('/v1/patients', { first_name: `S${++n}`, last_name: 'Live' }, key);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.data.id;
}

const EVENTS =
  'subscription($types: [EventType!], $after: ID) { events(types: $types, after: $after) { id type createdAt data } }';

/** The newest event of the clinic through GET /v1/events (what a webhook would get). */
async function latestEvents(limit: number, key = full) {
  const r = await app.get(`/v1/events?limit=${limit}`, key);
  expect(r.status).toBe(200);
  return (r.body.data as any[]).reverse();
}

/** The same envelopes as the subscription names them: createdAt, PATIENT_CREATED; data exactly REST's. */
const asGraphql = (envelopes: any[]) => graphqlOf(envelopes, EventEnvelope);

describe('connection_init', () => {
  it('accepts the key as {Authorization: "Bearer …"} and as {apiKey}', async () => {
    for (const params of [bearer(full), { apiKey: full }]) {
      const s = open(params);
      const sub = s.subscribe(EVENTS);
      await until(() => app.server.app.eventHub.size > 0 || sub.errors.length > 0);
      expect(sub.errors).toEqual([]);
      sub.stop();
      await s.dispose();
    }
  });

  it('closes with 4403 Forbidden without a key, with an unknown one, or with a malformed one', async () => {
    for (const params of [null, { apiKey: 'cg_live_nope' }, { Authorization: 'Basic abc' }]) {
      const s = open(params);
      s.subscribe(EVENTS);
      expect((await s.closed).code).toBe(4403);
    }
  });
});

describe('events', () => {
  it('yields exactly the envelopes GET /v1/events answers, only the own clinic’s, once each', async () => {
    const s = open(bearer(full));
    const sub = s.subscribe(EVENTS);
    await until(() => app.server.app.eventHub.size > 0);
    await createPatient(otherWriter);
    await createPatient();
    await createPatient();
    const got = await sub.waitFor(2);
    await new Promise((r) => setTimeout(r, 200));
    const expected = await latestEvents(2);
    expect(got.map((r) => r.events)).toEqual(asGraphql(expected));
    expect(expected.map((e) => e.type)).toEqual(['patient.created', 'patient.created']);
    // data is the REST resource, byte for byte: snake_case keys, never renamed.
    expect(JSON.stringify(got[0].events.data)).toBe(JSON.stringify(expected[0].data));
    expect(got[0].events.data).toHaveProperty('first_name');
    sub.stop();
  });

  it('filters by types and by the key’s scopes as GET /v1/events does', async () => {
    const s = open(bearer(noChat));
    const all = s.subscribe(EVENTS);
    const updates = s.subscribe(EVENTS, { types: ['PATIENT_UPDATED'] });
    await until(() => app.server.app.eventHub.size >= 2);
    await app.server.network.inbound({ clinicPhone, from: `+97250${3000000 + ++n}`, text: 'hi' });
    const id = await createPatient();
    expect((await app.send('PATCH', `/v1/patients/${id}`, { last_name: 'Changed' }, writer)).status).toBe(
      200,
    );
    const got = await updates.waitFor(1);
    await all.waitFor(2);
    expect(got[0].events.type).toBe('PATIENT_UPDATED');
    // The inbound message's chat.message.received never reaches a key without chat:read.
    expect(all.results.map((r) => r.events.type)).toEqual(['PATIENT_CREATED', 'PATIENT_UPDATED']);
  });

  it('refuses an unknown type (not an EventType) and a chat type without chat:read (forbidden)', async () => {
    const s = open(bearer(noChat));
    const unknown = s.subscribe(EVENTS, { types: ['PATIENT_EXPLODED'] });
    const chat = s.subscribe(EVENTS, { types: ['CHAT_MESSAGE_RECEIVED'] });
    await until(() => unknown.errors.length > 0 && chat.errors.length > 0);
    expect(unknown.errors[0].extensions.code).toBe('invalid_request');
    expect(unknown.errors[0].message).toMatch(/"PATIENT_EXPLODED" does not exist in "EventType" enum/);
    expect(chat.errors[0].extensions.code).toBe('forbidden');
  });

  it('needs webhooks:manage, as GET /v1/events does', async () => {
    const s = open(bearer(chatRead));
    const sub = s.subscribe(EVENTS);
    await until(() => sub.errors.length > 0);
    expect(sub.errors[0].extensions.code).toBe('forbidden');
  });

  it('applies the depth and cost limits of HTTP (this app: depth 4, cost 50)', async () => {
    const s = open(bearer(chatRead));
    const deep = s.subscribe(
      'subscription { conversationsChanged { messages(first: 2) { edges { node { id } } } } }',
    );
    const costly = s.subscribe(
      'subscription { conversationsChanged { messages(first: 60) { edges { cursor } } } }',
    );
    const fine = s.subscribe(
      'subscription { conversationsChanged { messages(first: 10) { edges { cursor } } } }',
    );
    await until(() => deep.errors.length > 0 && costly.errors.length > 0);
    expect(deep.errors[0].extensions).toMatchObject({ code: 'query_too_complex', limit: 'depth', max: 4 });
    expect(costly.errors[0].extensions).toMatchObject({ code: 'query_too_complex', limit: 'cost', max: 50 });
    // The one within the limits runs: it is in the event hub.
    await until(() => app.server.app.eventHub.size === 1);
    expect(fine.errors).toEqual([]);
  });

  it('runs a query on the socket through the same runner, answered as over HTTP', async () => {
    await createPatient();
    const s = open(bearer(full));
    const q = s.subscribe('{ events(first: 1) { edges { node { id type } } } }');
    await until(() => q.completed);
    const http = await app.gql('{ events(first: 1) { edges { node { id type } } } }', {}, full);
    expect(q.results).toEqual([http.body.data]);
    const denied = open(bearer(chatRead)).subscribe('{ events(first: 1) { edges { node { id } } } }');
    await until(() => denied.errors.length > 0);
    expect(denied.errors[0].extensions.code).toBe('forbidden');
  });

  it('is refused over plain HTTP: subscriptions are served over the websocket', async () => {
    const r = await app.gql('subscription { events { id } }', {}, full);
    expect(JSON.stringify(r.body)).toMatch(/WebSocket/);
  });

  it('replays after an event id, then goes live with no gap and no duplicate', async () => {
    const s = open(bearer(full));
    const first = s.subscribe(EVENTS, { types: ['PATIENT_CREATED'] });
    await until(() => app.server.app.eventHub.size === 1);
    await createPatient();
    const [seen] = await first.waitFor(1);
    await first.stop();
    // Missed while disconnected.
    await createPatient();
    await createPatient();
    const again = s.subscribe(EVENTS, { types: ['PATIENT_CREATED'], after: seen.events.id });
    // Committed while the replay is read: live, buffered, deduplicated.
    const during = createPatient();
    await during;
    await createPatient();
    const got = await again.waitFor(4);
    await new Promise((r) => setTimeout(r, 200));
    const ids = again.results.map((r) => Number(r.events.id.slice(4)));
    expect(ids).toHaveLength(4);
    expect(new Set(ids).size).toBe(4);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    const expected = (await latestEvents(4)).map((e) => e.id);
    expect(got.map((r) => r.events.id)).toEqual(expected);
    expect(Number(expected[0].slice(4))).toBeGreaterThan(Number(seen.events.id.slice(4)));
  });

  it('skips, once live, what the replay yielded: an event heard while the outbox was read comes once', async () => {
    for (let i = 0; i < 3; i++) await createPatient();
    const [e1, e2, e3] = await latestEvents(3);
    const hub = new EventHub();
    const ctx = systemContext(
      { em: app.orm.em, services: {} as AppServices },
      { clinicId, clinicKind: 'dental', country: 'IL', clock: app.clock, scopes: ['webhooks:manage'] },
    );
    // The relay has published up to e3: the replay reads e2 and e3.
    hub.advance(Number(e3.id.slice(4)));
    const feed = liveEvents(ctx, hub, { after: e1.id });
    // Heard live before the replay's read answers: e3 again (which the replay reads), then a later one.
    const row = await app.orm.em.fork().findOneOrFail(Event, Number(e3.id.slice(4)), { filters: false });
    const live = {
      id: row.id,
      clinicId,
      type: row.type,
      scope: row.scope,
      data: row.data,
      createdAt: row.createdAt,
    };
    hub.publish(live);
    hub.publish({ ...live, id: row.id + 1000 });
    const got = [];
    for (let i = 0; i < 3; i++) got.push((await feed.next()).value);
    expect(got.map((e) => e?.id)).toEqual([e2.id, e3.id, `evt_${row.id + 1000}`]);
    expect(got[1]).toEqual(e3);
    await feed.return?.();
    expect(hub.size).toBe(0);
  });

  it('refuses an after that is not an event id', async () => {
    const s = open(bearer(full));
    const sub = s.subscribe(EVENTS, { after: 'pat_1' });
    await until(() => sub.errors.length > 0);
    expect(sub.errors[0].extensions.code).toBe('validation_failed');
  });
});

describe('revocation', () => {
  it('closes the key’s sockets with 4403 at once, and only its own', async () => {
    const doomed = await app.key(clinicId, ['webhooks:manage']);
    const a = open(bearer(doomed));
    const b = open(bearer(full));
    const subA = a.subscribe(EVENTS);
    const subB = b.subscribe(EVENTS);
    await Promise.all([a.connected, b.connected]);
    await until(() => app.server.app.eventHub.size === 2);
    const row = await app.orm.em.fork().findOneOrFail(ApiKey, { prefix: doomed.slice(0, 14) });
    await revokeApiKey(app.orm.em.fork(), `key_${row.id}`);
    const closed = await within(a.closed);
    // REST's 401 for that key now, in its words (src/server/close-reason.ts).
    expect(closed).toEqual({ code: 4403, reason: 'unauthenticated: Invalid or revoked API key.' });
    await createPatient();
    await subB.waitFor(1);
    expect(subA.results).toEqual([]);
  });
});

describe('scope loss', () => {
  it('closes the sockets of a key that lost a scope it had (4403); a key that kept them stays', async () => {
    const narrowed = await app.key(clinicId, ['webhooks:manage', 'chat:read']);
    const kept = await app.key(clinicId, ['webhooks:manage', 'chat:read']);
    const a = open(bearer(narrowed));
    const b = open(bearer(kept));
    a.subscribe(EVENTS);
    const subB = b.subscribe(EVENTS);
    await Promise.all([a.connected, b.connected]);
    await until(() => app.server.app.eventHub.size === 2);
    const em = app.orm.em.fork();
    const row = await em.findOneOrFail(ApiKey, { prefix: narrowed.slice(0, 14) });
    row.scopes = ['webhooks:manage'];
    await em.flush();
    await announceKeyChange(em, row.hash);
    const closed = await within(a.closed);
    // REST's 403 for what the key lost.
    expect(closed).toEqual({
      code: 4403,
      reason: 'forbidden: This API key lacks the scope required here: chat:read.',
    });
    await createPatient();
    await subB.waitFor(1);
  });
});

describe('typed chat subscriptions', () => {
  it('follow a conversation’s new messages and status changes, and the conversation list', async () => {
    const phone = `+97250${4000000 + ++n}`;
    const first = (await app.server.network.inbound({ clinicPhone, from: phone, text: 'Hello' })) as {
      conversation_id: string;
    };
    const s = open(bearer(chatRead));
    const messages = s.subscribe(
      'subscription($c: ID!) { conversationMessages(conversationId: $c) { id direction status text conversationId } }',
      { c: first.conversation_id },
    );
    const list = s.subscribe('subscription { conversationsChanged { id lastMessagePreview } }');
    await until(() => app.server.app.eventHub.size >= 2);
    const sent = await app.post('/v1/chat/messages', { to: phone, text: 'See you at 10' }, chatWrite);
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    // The sandbox network's receipts: sent, delivered, read.
    const got = await messages.waitFor(3);
    // One per receipt; each carries the status after its write. Receipts are separate callbacks:
    // under load two may commit in either order, so only the final state is certain.
    const statuses = got.map((r) => r.conversationMessages.status);
    expect(statuses).toHaveLength(3);
    expect(statuses.every((x) => ['SENT', 'DELIVERED', 'READ'].includes(x))).toBe(true);
    expect(statuses).toContain('READ');
    for (const r of got) {
      expect(r.conversationMessages).toMatchObject({
        id: sent.body.data.id,
        direction: 'OUTBOUND',
        text: 'See you at 10',
        conversationId: first.conversation_id,
      });
    }
    // The message as REST presents it (the event's data), status as of each change.
    const rest = await app.get(`/v1/chat/messages/${sent.body.data.id}`, chatRead);
    expect(rest.body.data.status).toBe('read');
    await app.server.network.inbound({ clinicPhone, from: phone, text: 'Thanks' });
    const more = await messages.waitFor(4);
    expect(more[3].conversationMessages).toMatchObject({ direction: 'INBOUND', text: 'Thanks' });
    const changes = await list.waitFor(4);
    expect(changes.every((r) => r.conversationsChanged.id === first.conversation_id)).toBe(true);
    expect(changes[3].conversationsChanged.lastMessagePreview).toBe('Thanks');
  });

  it('refuse another clinic’s conversation (not_found) and a key without chat:read (forbidden)', async () => {
    const s = open(bearer(noChat));
    const denied = s.subscribe('subscription { conversationsChanged { id } }');
    const t = open(bearer(chatRead));
    const unknown = t.subscribe(
      'subscription { conversationMessages(conversationId: "conv_999999") { id } }',
    );
    await until(() => denied.errors.length > 0 && unknown.errors.length > 0);
    expect(denied.errors[0].extensions.code).toBe('forbidden');
    expect(unknown.errors[0].extensions.code).toBe('not_found');
  });
});

describe('rate limit', () => {
  let limited: TestApp;
  let key: string;
  beforeAll(async () => {
    limited = await startTestApp({ limits: { rateLimitPoints: 2, rateLimitWindowSeconds: 60 } });
    const c = await limited.clinicWithKey('dental', ['webhooks:manage'], 'subs limited');
    key = c.key;
  });

  it('spends each subscription’s cost from the key’s budget when it starts, as HTTP does', async () => {
    const s = connect(limited.url, bearer(key));
    sockets.push(s);
    const one = s.subscribe('subscription { events { id } }');
    const two = s.subscribe('subscription { events { id } }');
    await until(() => limited.server.app.eventHub.size === 2);
    const three = s.subscribe('subscription { events { id } }');
    await until(() => three.errors.length > 0);
    expect(three.errors[0].extensions.code).toBe('rate_limited');
    expect([one.errors, two.errors]).toEqual([[], []]);
    // The HTTP budget is the same one.
    expect((await limited.get('/v1/events', key)).status).toBe(429);
  });
});
