import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openOrm } from '../src/db/orm.ts';
import { Clinic } from '../src/entities/index.ts';
import { FixedClock } from '../src/lib/clock.ts';
import { sweeperOf } from '../src/lib/periodic-sweep.ts';
import { startJobs } from '../src/server/jobs.ts';
import { EventEnvelope } from '../src/services/events/event.resource.ts';
import { eventRetentionSweep, pruneEvents } from '../src/services/events/retention.ts';
import { graphqlOf } from './graphql-form.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * The outbox read back (issue 16): GET /v1/events and /v1/events/{id}, the `events` connection
 * and node(id:), scope webhooks:manage, chat.* only with chat:read, and the retention sweep
 * driven by the injected clock. Events come from real writes (POST /v1/patients, an inbound chat
 * message through the sandbox network's signed callback); only the retention test backdates them.
 */
let app: TestApp & { databaseUrl: string };
let clinicId: number;
let otherClinic: number;
let clinicPhone: string;
let writer: string;
/** webhooks:manage + chat:read + patients:read */
let full: string;
/** webhooks:manage without chat:read */
let noChat: string;
/** everything but webhooks:manage */
let noManage: string;
let otherWriter: string;
let otherFull: string;
let n = 0;

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('dental', ['patients:write'], 'events A');
  clinicId = c.clinicId;
  writer = c.key;
  full = await app.key(clinicId, ['webhooks:manage', 'chat:read', 'patients:read']);
  noChat = await app.key(clinicId, ['webhooks:manage', 'patients:read']);
  noManage = await app.key(clinicId, ['chat:read', 'patients:read']);
  clinicPhone = (await app.orm.em.fork().findOneOrFail(Clinic, clinicId)).phone as string;
  const o = await app.clinicWithKey('dental', ['patients:write'], 'events B');
  otherClinic = o.clinicId;
  otherWriter = o.key;
  otherFull = await app.key(otherClinic, ['webhooks:manage', 'chat:read']);
});

beforeEach(() => app.clock.set('2026-11-01T10:00:00Z'));

/** A patient created through the API: records patient.created. */
async function createPatient(first = `P${++n}`, key = writer): Promise<string> {
  const r = await app.post('/v1/patients', { first_name: first, last_name: 'Events' }, key);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.data.id;
}

/** An inbound chat message through the sandbox network's signed callback: chat.message.received. */
async function inboundMessage(): Promise<string> {
  const m = (await app.server.network.inbound({
    clinicPhone,
    from: `+97250${String(2000000 + ++n * 13)}`,
    text: 'Hello from the events test',
  })) as { id: string };
  return m.id;
}

interface EventRow {
  id: number;
  clinic_id: number;
  type: string;
  scope: string;
  data: any;
  created_at: Date;
}

const sql = () => app.orm.em.fork().getConnection();

async function storedEvents(clinic = clinicId): Promise<EventRow[]> {
  return sql().execute<EventRow[]>(
    'select "id", "clinic_id", "type", "scope", "data", "created_at" from "event" where "clinic_id" = ? order by "id"',
    [clinic],
  );
}

const envelopeOf = (row: EventRow) => ({
  id: `evt_${row.id}`,
  type: row.type,
  created_at: new Date(row.created_at).toISOString(),
  data: row.data,
});

/** Every page of a list, following next_cursor. */
async function allPages(path: string, key = full, onPage?: () => Promise<void>) {
  const out: any[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 50; i++) {
    const sep = path.includes('?') ? '&' : '?';
    const r = await app.get(`${path}${cursor ? `${sep}cursor=${cursor}` : ''}`, key);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    out.push(...r.body.data);
    cursor = r.body.next_cursor;
    if (!cursor) return out;
    await onPage?.();
  }
  throw new Error('too many pages');
}

describe('GET /v1/events', () => {
  it('answers the envelope as stored; data is what a GET of the object answered, never rebuilt', async () => {
    const id = await createPatient('Envelope');
    const [row] = (await storedEvents()).filter((e) => e.data.id === id);
    expect(row.type).toBe('patient.created');

    const list = await app.get('/v1/events?limit=1', full);
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([envelopeOf(row)]);
    expect(Object.keys(list.body.data[0])).toEqual(['id', 'type', 'created_at', 'data']);
    const one = await app.get(`/v1/events/evt_${row.id}`, full);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ data: envelopeOf(row) });
    const get = await app.get(`/v1/patients/${id}?response_format=detailed`, full);
    expect(one.body.data.data).toEqual(get.body.data);

    // A later change records its own event; the first one still says what was true then.
    app.clock.set('2026-11-01T10:05:00Z');
    const patch = await app.send('PATCH', `/v1/patients/${id}`, { first_name: 'Renamed' }, writer);
    expect(patch.status).toBe(200);
    expect((await app.get(`/v1/events/evt_${row.id}`, full)).body.data.data.first_name).toBe('Envelope');
    const latest = (await app.get('/v1/events?limit=1', full)).body.data[0];
    expect(latest).toMatchObject({ type: 'patient.updated', created_at: '2026-11-01T10:05:00.000Z' });
    expect(latest.data).toEqual(
      (await app.get(`/v1/patients/${id}?response_format=detailed`, full)).body.data,
    );
  });

  it('lists newest first (created_at, then id, descending), page after page', async () => {
    app.clock.set('2026-11-02T09:00:00Z');
    await createPatient();
    await createPatient(); // the same created_at: the later id first
    app.clock.set('2026-11-02T09:01:00Z');
    await createPatient();
    const stored = await storedEvents();
    const expected = [...stored]
      .sort((a, b) => +b.created_at - +a.created_at || b.id - a.id)
      .map((e) => `evt_${e.id}`);
    expect(stored.length).toBeGreaterThan(4);
    const listed = await allPages('/v1/events?limit=2');
    expect(listed.map((e) => e.id)).toEqual(expected);
  });

  it('created_since: oldest first, and paging misses nothing and repeats nothing while events arrive', async () => {
    app.clock.set('2026-11-03T08:00:00Z');
    await createPatient(); // before the sync point: not listed
    app.clock.set('2026-11-03T09:00:00Z');
    const first = [await createPatient(), await createPatient(), await createPatient()];
    let minute = 0;
    const arriving: string[] = [];
    const listed = await allPages('/v1/events?created_since=2026-11-03T09:00:00Z&limit=2', full, async () => {
      if (arriving.length >= 4) return;
      app.clock.set(`2026-11-03T10:0${++minute}:00Z`);
      arriving.push(await createPatient());
    });
    const ids = listed.map((e) => e.data.id);
    expect(ids).toEqual([...first, ...arriving]);
    expect(new Set(listed.map((e) => e.id)).size).toBe(listed.length);
    const times = listed.map((e) => e.created_at);
    expect(times).toEqual([...times].sort());

    // A date alone is midnight UTC; a cursor of the other order is refused.
    const sinceDay = await app.get('/v1/events?created_since=2026-11-03&limit=1', full);
    expect(sinceDay.body.data[0].created_at).toBe('2026-11-03T08:00:00.000Z');
    const newest = await app.get('/v1/events?limit=1', full);
    const crossed = await app.get(
      `/v1/events?created_since=2026-11-03&cursor=${newest.body.next_cursor}`,
      full,
    );
    expect(crossed.status).toBe(422);
    expect(crossed.body.error.param).toBe('cursor');
    const bad = await app.get('/v1/events?created_since=last%20week', full);
    expect(bad.status).toBe(422);
    expect(bad.body.error.param).toBe('created_since');
  });

  it('filters by type: one, several (repeated or comma-separated); an unknown type is a 422 naming it', async () => {
    const id = await createPatient();
    app.clock.set('2026-11-01T10:10:00Z');
    await app.send('PATCH', `/v1/patients/${id}`, { last_name: 'Changed' }, writer);
    await inboundMessage();
    const stored = await storedEvents();
    const ofTypes = (...types: string[]) =>
      stored
        .filter((e) => types.includes(e.type))
        .sort((a, b) => +b.created_at - +a.created_at || b.id - a.id)
        .map((e) => `evt_${e.id}`);

    const updated = await allPages('/v1/events?type=patient.updated&limit=100');
    expect(updated.map((e) => e.id)).toEqual(ofTypes('patient.updated'));
    expect(updated.length).toBeGreaterThan(0);
    const two = ofTypes('patient.updated', 'chat.message.received');
    expect(
      (await allPages('/v1/events?type=patient.updated&type=chat.message.received')).map((e) => e.id),
    ).toEqual(two);
    expect(
      (await allPages('/v1/events?type=chat.message.received,patient.updated')).map((e) => e.id),
    ).toEqual(two);
    const none = await app.get('/v1/events?type=call.completed', full);
    expect(none.body).toEqual({ data: [], next_cursor: null });

    for (const q of [
      'type=patient.deleted',
      'type=patient.created,patient.deleted',
      'type=patient.created&type=PATIENT.CREATED',
    ]) {
      const r = await app.get(`/v1/events?${q}`, full);
      expect(r.status, q).toBe(422);
      expect(r.body.error.code).toBe('validation_failed');
      expect(r.body.error.param).toBe('type');
      expect(r.body.error.message).toMatch(/Unknown event type '(patient\.deleted|PATIENT\.CREATED)'/);
    }
  });
});

describe('chat events need chat:read', () => {
  it('a key with chat:read sees them; one without does not, and asking for a chat type is 403', async () => {
    const messageId = await inboundMessage();
    const [row] = (await storedEvents()).filter((e) => e.data.id === messageId);
    expect(row).toMatchObject({ type: 'chat.message.received', scope: 'chat:read' });
    const get = await app.get(`/v1/chat/messages/${messageId}`, full);
    expect(row.data).toEqual(get.body.data);

    const seen = await allPages('/v1/events?limit=100', full);
    expect(seen.map((e) => e.id)).toContain(`evt_${row.id}`);
    expect((await app.get(`/v1/events/evt_${row.id}`, full)).body.data).toEqual(envelopeOf(row));

    const unseen = await allPages('/v1/events?limit=100', noChat);
    expect(unseen.length).toBeGreaterThan(0);
    expect(unseen.filter((e) => e.type.startsWith('chat.'))).toEqual([]);
    expect(unseen.length).toBe(seen.filter((e) => !e.type.startsWith('chat.')).length);
    const byId = await app.get(`/v1/events/evt_${row.id}`, noChat);
    expect(byId.status).toBe(404);
    expect(byId.body.error.code).toBe('not_found');
    for (const q of ['type=chat.message.received', 'type=patient.created,chat.message.sent']) {
      const r = await app.get(`/v1/events?${q}`, noChat);
      expect(r.status, q).toBe(403);
      expect(r.body.error).toMatchObject({ code: 'forbidden', required_scopes: ['chat:read'] });
    }
  });
});

describe('scope and isolation', () => {
  it('needs webhooks:manage: 403 naming it on the list and on an event', async () => {
    const [row] = await storedEvents();
    for (const path of ['/v1/events', `/v1/events/evt_${row.id}`]) {
      const r = await app.get(path, noManage);
      expect(r.status, path).toBe(403);
      expect(r.body.error).toMatchObject({ code: 'forbidden', required_scopes: ['webhooks:manage'] });
    }
    const g = await app.gql(`{ events(first: 1) { edges { node { id } } } }`, {}, noManage);
    expect(g.body.data.events).toBeNull();
    expect(g.body.errors[0].extensions).toMatchObject({
      code: 'forbidden',
      required_scopes: ['webhooks:manage'],
    });
  });

  it("another clinic's events are a 404 and never listed; malformed ids are a 404", async () => {
    const theirs = await createPatient('Theirs', otherWriter);
    const [row] = (await storedEvents(otherClinic)).filter((e) => e.data.id === theirs);
    expect((await app.get(`/v1/events/evt_${row.id}`, otherFull)).status).toBe(200);
    for (const id of [`evt_${row.id}`, 'evt_0', 'evt_99999999', `pat_${row.id}`, String(row.id), 'evt_1x']) {
      const r = await app.get(`/v1/events/${id}`, full);
      expect(r.status, id).toBe(404);
      expect(r.body.error.code).toBe('not_found');
    }
    const mine = await allPages('/v1/events?limit=100', full);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.map((e) => e.id)).not.toContain(`evt_${row.id}`);
    const own = new Set((await storedEvents()).map((e) => `evt_${e.id}`));
    expect(mine.every((e) => own.has(e.id))).toBe(true);
  });
});

describe('GraphQL', () => {
  const connection = `query($types: [EventType!], $since: String, $after: String) {
    events(types: $types, createdSince: $since, first: 2, after: $after) {
      pageInfo { hasNextPage endCursor } edges { cursor node { id type createdAt data } } } }`;
  /** A REST page's envelopes as GraphQL answers them: createdAt, type PATIENT_CREATED, data as it is. */
  const restPages = async (path: string, key: string) => graphqlOf(await allPages(path, key), EventEnvelope);

  async function allNodes(key: string, variables: Record<string, unknown>) {
    const out: any[] = [];
    let after: string | null = null;
    for (let i = 0; i < 50; i++) {
      const r = await app.gql(connection, { ...variables, after }, key);
      expect(r.body.errors, JSON.stringify(r.body.errors)).toBeUndefined();
      out.push(...r.body.data.events.edges.map((e: any) => e.node));
      if (!r.body.data.events.pageInfo.hasNextPage) return out;
      after = r.body.data.events.pageInfo.endCursor;
    }
    throw new Error('too many pages');
  }

  it('events(types:, createdSince:, first, after) = GET /v1/events with the same filters', async () => {
    await createPatient();
    await inboundMessage();
    for (const key of [full, noChat]) {
      expect(await allNodes(key, {})).toEqual(await restPages('/v1/events?limit=100', key));
      // An empty list is no filter, as an absent one (the spec: empty event_types means every type).
      expect(await allNodes(key, { types: [] })).toEqual(await restPages('/v1/events?limit=100', key));
      expect(await allNodes(key, { types: ['PATIENT_CREATED', 'PATIENT_UPDATED'] })).toEqual(
        await restPages('/v1/events?type=patient.created,patient.updated', key),
      );
    }
    const since = await allNodes(full, { since: '2026-11-01T10:00:00Z' });
    expect(since).toEqual(await restPages('/v1/events?created_since=2026-11-01T10:00:00Z', full));
    // data is the REST resource, keys as REST spells them, never renamed.
    const created = since.find((e) => e.type === 'PATIENT_CREATED');
    expect(Object.keys(created.data)).toContain('first_name');
    expect(Object.keys(created.data)).not.toContain('firstName');
    // The set of types is the EventType enum: an unknown one is refused before anything runs.
    const unknown = await app.gql(connection, { types: ['nope'] }, full);
    expect(unknown.body.data).toBeUndefined();
    expect(unknown.body.errors[0].extensions.code).toBe('invalid_request');
    expect(unknown.body.errors[0].message).toContain('EventType');
    const badSince = await app.gql(connection, { since: 'yesterday' }, full);
    expect(badSince.body.errors[0].extensions).toMatchObject({
      code: 'validation_failed',
      param: 'createdSince',
    });
    const chat = await app.gql(connection, { types: ['CHAT_MESSAGE_RECEIVED'] }, noChat);
    expect(chat.body.errors[0].extensions).toMatchObject({
      code: 'forbidden',
      required_scopes: ['chat:read'],
    });
  });

  it('node(id:) is the envelope; a chat event without chat:read, or another clinic’s, is null with not_found', async () => {
    const messageId = await inboundMessage();
    const events = await storedEvents();
    const chat = events.find((e) => e.data.id === messageId) as EventRow;
    const patient = events.find((e) => e.type === 'patient.created') as EventRow;
    const q = 'query($id: ID!) { node(id: $id) { id ... on Event { type createdAt data } } }';
    for (const row of [chat, patient]) {
      const r = await app.gql(q, { id: `evt_${row.id}` }, full);
      expect(r.body.errors).toBeUndefined();
      expect(r.body.data.node).toEqual(graphqlOf(envelopeOf(row), EventEnvelope));
    }
    const hidden = await app.gql(q, { id: `evt_${chat.id}` }, noChat);
    expect(hidden.body.data.node).toBeNull();
    expect(hidden.body.errors[0].extensions.code).toBe('not_found');
    const [theirs] = await storedEvents(otherClinic);
    const foreign = await app.gql(q, { id: `evt_${theirs.id}` }, full);
    expect(foreign.body.data.node).toBeNull();
    expect(foreign.body.errors[0].extensions.code).toBe('not_found');
    const scope = await app.gql(q, { id: `evt_${patient.id}` }, noManage);
    expect(scope.body.data.node).toBeNull();
    expect(scope.body.errors[0].extensions).toMatchObject({
      code: 'forbidden',
      required_scopes: ['webhooks:manage'],
    });
  });
});

describe('retention', () => {
  const DAY = 86_400_000;

  /** A subscription of `clinic` and one delivery of each event. */
  async function deliveriesOf(clinic: number, events: number[]): Promise<void> {
    const [sub] = await sql().execute<{ id: number }[]>(
      `insert into "webhook_subscription" ("clinic_id", "url", "event_types", "secret", "created_at", "updated_at")
       values (?, 'https://example.com/hook', '{}', 'whsec_test', now(), now()) returning "id"`,
      [clinic],
    );
    for (const id of events)
      await sql().execute(
        `insert into "webhook_delivery" ("clinic_id", "subscription_id", "event_id", "status", "created_at", "updated_at")
         values (?, ?, ?, 'succeeded', now(), now())`,
        [clinic, sub.id, id],
      );
  }

  /** Events recorded by real writes, then backdated to `daysAgo` before the clock. */
  async function eventAged(daysAgo: number, key: string, clinic: number): Promise<number> {
    const patient = await createPatient(`Aged${daysAgo}`, key);
    const [row] = (await storedEvents(clinic)).filter((e) => e.data.id === patient);
    await sql().execute('update "event" set "created_at" = ? where "id" = ?', [
      new Date(app.clock.now().getTime() - daysAgo * DAY),
      row.id,
    ]);
    return row.id;
  }

  const ids = async (table: string) =>
    (await sql().execute<{ id: number }[]>(`select "id" from "${table}" order by "id"`)).map((r) => r.id);

  it('the sweep deletes events older than 30 days by the injected clock, every clinic’s, with their deliveries; nothing else', async () => {
    app.clock.set('2026-12-15T12:00:00Z');
    const oldA = await eventAged(31, writer, clinicId);
    const youngA = await eventAged(29, writer, clinicId);
    const oldB = await eventAged(45, otherWriter, otherClinic);
    const youngB = await eventAged(1, otherWriter, otherClinic);
    await deliveriesOf(clinicId, [oldA, youngA]);
    await deliveriesOf(otherClinic, [oldB, youngB]);
    const eventsBefore = await ids('event');
    // Older than 30 days at the clock: these two, and what earlier tests recorded in November.
    const gone = (
      await sql().execute<{ id: number }[]>('select "id" from "event" where "created_at" < ?', [
        new Date('2026-11-15T12:00:00Z'),
      ])
    ).map((r) => r.id);
    expect(gone).toEqual(expect.arrayContaining([oldA, oldB]));
    expect(gone).not.toContain(youngA);
    expect(gone).not.toContain(youngB);
    const deliveriesBefore = await sql().execute<{ id: number; event_id: number }[]>(
      'select "id", "event_id" from "webhook_delivery"',
    );
    const patientsBefore = await ids('patient');
    const subscriptionsBefore = await ids('webhook_subscription');

    expect(await app.server.eventRetention.sweep()).toBe(gone.length);

    expect(await ids('event')).toEqual(eventsBefore.filter((id) => !gone.includes(id)));
    expect(await ids('webhook_delivery')).toEqual(
      deliveriesBefore
        .filter((d) => !gone.includes(d.event_id))
        .map((d) => d.id)
        .sort((a, b) => a - b),
    );
    expect((await ids('webhook_delivery')).length).toBe(deliveriesBefore.length - 2);
    expect(await ids('patient')).toEqual(patientsBefore);
    expect(await ids('webhook_subscription')).toEqual(subscriptionsBefore);
    expect((await app.get(`/v1/events/evt_${oldA}`, full)).status).toBe(404);
    expect((await app.get(`/v1/events/evt_${youngA}`, full)).status).toBe(200);

    // A day later the 29-day-old event is 30 days old: still kept (older than 30 days goes).
    app.clock.set('2026-12-16T12:00:00Z');
    expect(await app.server.eventRetention.sweep()).toBe(0);
    app.clock.set('2026-12-16T12:00:00.001Z');
    expect(await app.server.eventRetention.sweep()).toBe(1);
    expect((await app.get(`/v1/events/evt_${youngA}`, full)).status).toBe(404);
  });

  it('deletes a backlog in bounded batches, oldest first', async () => {
    app.clock.set('2027-03-01T00:00:00Z');
    const aged = [];
    for (let i = 0; i < 5; i++) aged.push(await eventAged(40 + i, writer, clinicId));
    const before = new Date(app.clock.now().getTime() - 30 * DAY);
    const old = await sql().execute<{ n: string }[]>(
      'select count(*) as n from "event" where "created_at" < ?',
      [before],
    );
    const total = Number(old[0].n);
    expect(total).toBeGreaterThanOrEqual(5);
    // Two batches of two: the four oldest; the rest on the next call.
    expect(await pruneEvents(app.orm.em, before, { batch: 2, maxBatches: 2 })).toBe(4);
    const left = await sql().execute<{ id: number; created_at: Date }[]>(
      'select "id", "created_at" from "event" where "created_at" < ? order by "created_at"',
      [before],
    );
    expect(left).toHaveLength(total - 4);
    // The rest on the next calls. A row a delivery worker holds (the foreign key's KEY SHARE lock while it records an
    // attempt) is skipped, not waited for, and goes on a later call: as the periodic sweep retries.
    let rest = 0;
    for (let i = 0; i < 50 && rest < total - 4; i++) {
      rest += await pruneEvents(app.orm.em, before, { batch: 2 });
      if (rest < total - 4) await new Promise((r) => setTimeout(r, 50));
    }
    expect(rest).toBe(total - 4);
    expect(await ids('event')).not.toContain(aged[0]);
  });

  it("runs by itself on its schedule (the queue's), and never with 0 days", { timeout: 30_000 }, async () => {
    const clock = new FixedClock('2027-06-01T00:00:00Z');
    app.clock.set('2027-06-01T00:00:00Z');
    const old = await eventAged(60, writer, clinicId);
    // A second process's queue on the same database, its sweeps every second.
    const orm = await openOrm(app.databaseUrl);
    const jobs = await startJobs({
      orm,
      clock,
      tuning: { sweepSeconds: 1 },
      sweeps: { retentionDays: 30, work: true },
    });
    try {
      for (let i = 0; i < 200 && (await ids('event')).includes(old); i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(await ids('event')).not.toContain(old);
    } finally {
      await jobs.stop(0);
      await orm.close();
    }
    // 0 days: events are kept, the sweep does nothing.
    const later = await eventAged(60, writer, clinicId);
    const keep = sweeperOf(eventRetentionSweep({ em: app.orm.em, clock, days: 0 }));
    expect(await keep.sweep()).toBe(0);
    expect(await ids('event')).toContain(later);
  });
});
