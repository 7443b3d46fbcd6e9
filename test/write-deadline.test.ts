import http from 'node:http';
import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Clinic } from '../src/entities/index.ts';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * A 504 on a write means nothing was written (docs/limits.md, "A 504 on a write"). A write is
 * held past the request deadline behind a lock a second connection of the test holds (a row
 * lock, the provider's booking lock, a commit held by a deferred trigger) or behind a slow
 * network inside its transaction; the lock is released after the 504, and nothing of the write
 * is found: row, event, Idempotency-Key. Its body arrives half a deadline late: the statement
 * that waits starts then, so PostgreSQL's statement_timeout (= the deadline) would end it only
 * later, and the release in between is what lets a write that is not stopped commit.
 */
const DEADLINE = 1000;
const BODY_LATE = 500;
/** After the 504 and before the waiting statement's own statement_timeout. */
const RELEASE_AFTER_504 = 150;

let app: TestApp;
let clinicId: number;
let key: string;
let patientId: number;
let ids: { patient: string; branch: string; provider: string; type: string; providerId: number };
const holders: pg.Client[] = [];

beforeAll(async () => {
  app = await startTestApp({ limits: { requestDeadlineMs: DEADLINE } });
  ({ clinicId, key } = await app.clinicWithKey('dental', [
    'patients:write',
    'patients:read',
    'appointments:write',
    'appointments:read',
    'chat:write',
  ]));
  const fx = fixtures(app.orm, clinicId);
  const cat = await fx.catalog();
  patientId = (await fx.patient({ first: 'Dana', last: 'Cohen', phone: '0501234567' })).id;
  ids = {
    patient: `pat_${patientId}`,
    branch: `br_${cat.branch.id}`,
    provider: `prv_${cat.provider.id}`,
    type: `apt_${cat.type.id}`,
    providerId: cat.provider.id,
  };
});

afterEach(async () => {
  for (const h of holders.splice(0)) await h.end().catch(() => {});
});

/** A second connection of the test, holding what the write will wait for. */
async function holder(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: (app as TestApp & { databaseUrl: string }).databaseUrl });
  await c.connect();
  holders.push(c);
  return c;
}

/** A request whose headers go at once and whose JSON body follows `lateMs` later. */
function lateBody(
  method: string,
  path: string,
  body: unknown,
  lateMs: number,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; at: number }> {
  const data = JSON.stringify(body);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${app.url}${path}`,
      {
        method,
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(data)),
          authorization: `Bearer ${key}`,
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), at: performance.now() - started });
        });
      },
    );
    req.on('error', reject);
    req.flushHeaders();
    setTimeout(() => req.end(data), lateMs);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const eventsOf = async (objectId: string) =>
  (
    await app.orm.em
      .fork()
      .getConnection()
      .execute<{ type: string }[]>(
        `select "type" from "event" where "clinic_id" = ? and "data"->>'id' = ? order by "id"`,
        [clinicId, objectId],
      )
  ).map((e) => e.type);

const firstName = async () =>
  (await app.get(`/v1/patients/${ids.patient}`, key)).body.data.first_name as string;

/** Statements of the database waiting for a lock (the stopped write's must be gone). */
async function lockWaits(): Promise<number> {
  const [row] = await app.orm.em
    .fork()
    .getConnection()
    .execute<{ n: number }[]>(
      `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
    );
  return row.n;
}

/**
 * Holds every write at its outbox insert, past its last read (which the deadline stopped even
 * before: src/lib/budget.ts): a trigger there waits for an advisory lock the test holds.
 */
async function holdOutbox(): Promise<pg.Client> {
  const ddl = app.orm.em.fork().getConnection();
  await ddl.execute(`create or replace function test_hold_outbox() returns trigger language plpgsql as $$
    begin perform pg_advisory_xact_lock(4243); return new; end $$`);
  await ddl.execute(`create trigger test_hold_outbox before insert on "event"
    for each row execute function test_hold_outbox()`);
  const h = await holder();
  await h.query('select pg_advisory_lock(4243)');
  return h;
}

const letOutboxGo = (h: pg.Client) => h.query('select pg_advisory_unlock(4243)');

afterEach(async () => {
  await app.orm.em.fork().getConnection().execute('drop trigger if exists test_hold_outbox on "event"');
});

async function holdPatientRow(): Promise<pg.Client> {
  const h = await holder();
  await h.query('begin');
  await h.query('select 1 from "patient" where "id" = $1 for update', [patientId]);
  return h;
}

describe('a write held past the deadline', () => {
  it('REST: 504, its lock wait is cancelled at once, and nothing is written once the lock is let go', async () => {
    const before = await firstName();
    const eventsBefore = await eventsOf(ids.patient);
    const h = await holdPatientRow();
    const r = await lateBody('PATCH', `/v1/patients/${ids.patient}`, { first_name: 'Held' }, BODY_LATE);
    expect(r.status).toBe(504);
    expect(r.body.error.code).toBe('deadline_exceeded');
    expect(r.at).toBeLessThan(DEADLINE + 300);
    // Cancelled, not left waiting for its statement_timeout with a connection and its locks.
    await sleep(100);
    expect(await lockWaits()).toBe(0);
    await sleep(RELEASE_AFTER_504 - 100);
    await h.query('commit');
    await sleep(DEADLINE);
    expect(await firstName()).toBe(before);
    expect(await eventsOf(ids.patient)).toEqual(eventsBefore);
  });

  it('REST: held at its outbox insert, past its last read: 504, and nothing is written', async () => {
    const before = await firstName();
    const eventsBefore = await eventsOf(ids.patient);
    const h = await holdOutbox();
    const r = await lateBody('PATCH', `/v1/patients/${ids.patient}`, { first_name: 'AtOutbox' }, BODY_LATE);
    expect(r.status).toBe(504);
    await sleep(RELEASE_AFTER_504);
    await letOutboxGo(h);
    await sleep(DEADLINE);
    expect(await firstName()).toBe(before);
    expect(await eventsOf(ids.patient)).toEqual(eventsBefore);
  });

  it('GraphQL: the same mutation is a 504 with nothing written', async () => {
    const before = await firstName();
    const eventsBefore = await eventsOf(ids.patient);
    const h = await holdOutbox();
    const r = await lateBody(
      'POST',
      '/graphql',
      {
        query:
          'mutation($id: ID!) { updatePatient(input: { id: $id, firstName: "HeldGql" }) { patient { id } } }',
        variables: { id: ids.patient },
      },
      BODY_LATE,
    );
    expect(r.status).toBe(504);
    await sleep(RELEASE_AFTER_504);
    await letOutboxGo(h);
    await sleep(DEADLINE);
    expect(await firstName()).toBe(before);
    expect(await eventsOf(ids.patient)).toEqual(eventsBefore);
  });

  it('GraphQL, two mutations, the first committed and the second held: 200, the second an error at its path, the first kept', async () => {
    const before = await firstName();
    const h = await holdPatientRow();
    const r = await lateBody(
      'POST',
      '/graphql',
      {
        query: `mutation($id: ID!) {
          createPatient(input: { firstName: "Committed", lastName: "First" }) { patient { id } }
          updatePatient(input: { id: $id, firstName: "HeldSecond" }) { patient { id } }
        }`,
        variables: { id: ids.patient },
      },
      BODY_LATE,
    );
    // Not a 504: that would say nothing was written, and the first mutation was. (Its answer is
    // not in `data`: the mutations' types are non-null, so the second's null reaches the root.)
    expect(r.status).toBe(200);
    expect(r.body.errors[0]).toMatchObject({
      path: ['updatePatient'],
      extensions: { code: 'deadline_exceeded' },
    });
    await sleep(RELEASE_AFTER_504);
    await h.query('commit');
    await sleep(DEADLINE);
    expect(await firstName()).toBe(before);
    const [created] = await app.orm.em
      .fork()
      .getConnection()
      .execute<{ n: number }[]>(
        `select count(*)::int as n from "patient" where "clinic_id" = ? and "first_name" = 'Committed'`,
        [clinicId],
      );
    expect(created.n).toBe(1);
  });

  it('a booking behind its provider lock: 504, no appointment, no event, and its Idempotency-Key free for the retry', async () => {
    app.clock.set('2026-11-20T08:00:00Z');
    const body = {
      patient_id: ids.patient,
      branch_id: ids.branch,
      provider_id: ids.provider,
      type_id: ids.type,
      start: '2026-12-01T09:00:00.000Z',
    };
    const idem = { 'idempotency-key': 'held-booking-1' };
    const appointments = async () =>
      (
        await app.orm.em
          .fork()
          .getConnection()
          .execute<{ n: number }[]>(
            `select count(*)::int as n from "appointment" where "clinic_id" = ? and "patient_id" = ?`,
            [clinicId, patientId],
          )
      )[0].n;
    expect(await appointments()).toBe(0);
    const h = await holder();
    await h.query('select pg_advisory_lock($1::int, $2::int)', [0x61707074, ids.providerId]);
    const r = await lateBody('POST', '/v1/appointments', body, BODY_LATE, idem);
    expect(r.status).toBe(504);
    await sleep(100);
    expect(await lockWaits()).toBe(0);
    await sleep(RELEASE_AFTER_504 - 100);
    await h.query('select pg_advisory_unlock($1::int, $2::int)', [0x61707074, ids.providerId]);
    await sleep(DEADLINE);
    expect(await appointments()).toBe(0);
    // The retry with the same key runs afresh (not a 409, not a replay of nothing).
    const retry = await app.post('/v1/appointments', body, key, idem);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(await eventsOf(retry.body.data.id)).toEqual(['appointment.created']);
  });

  it('a chat reaction (a network call inside its transaction) held behind its message row: 504, not recorded', async () => {
    const em = app.orm.em.fork();
    const clinic = await em.findOneOrFail(Clinic, clinicId);
    app.clock.set('2026-11-01T10:00:00Z');
    const m = (await app.server.network.inbound({
      clinicPhone: clinic.phone as string,
      from: '+972509876543',
      text: 'Hello',
    })) as { id: string };
    const eventsBefore = await eventsOf(m.id);
    const h = await holder();
    await h.query('begin');
    await h.query('select 1 from "message" where "id" = $1 for update', [Number(m.id.slice(3))]);
    const r = await lateBody('POST', `/v1/chat/messages/${m.id}/reaction`, { emoji: '👍' }, BODY_LATE);
    expect(r.status).toBe(504);
    await sleep(RELEASE_AFTER_504);
    await h.query('commit');
    await sleep(DEADLINE);
    const read = await app.key(clinicId, ['chat:read']);
    expect((await app.get(`/v1/chat/messages/${m.id}`, read)).body.data.reactions.clinic).toBe(null);
    expect(await eventsOf(m.id)).toEqual(eventsBefore);
  });
});

describe('a write that ends in time, or whose commit is under way at the deadline', () => {
  it('released just before the deadline: a 2xx that committed', async () => {
    const h = await holdPatientRow();
    const pending = app.send('PATCH', `/v1/patients/${ids.patient}`, { first_name: 'InTime' }, key);
    await sleep(DEADLINE - 250);
    await h.query('commit');
    const r = await pending;
    expect(r.status).toBe(200);
    expect(r.body.data.first_name).toBe('InTime');
    expect(await firstName()).toBe('InTime');
  });

  it('a commit held past the deadline answers what it did: the 2xx, committed', async () => {
    // A deferred trigger runs at COMMIT and waits for the test's advisory lock there.
    const ddl = app.orm.em.fork().getConnection();
    await ddl.execute(`create or replace function test_hold_commit() returns trigger language plpgsql as $$
      begin perform pg_advisory_xact_lock(4242); return null; end $$`);
    await ddl.execute(`create constraint trigger test_hold_commit after update on "patient"
      deferrable initially deferred for each row execute function test_hold_commit()`);
    try {
      const h = await holder();
      await h.query('select pg_advisory_lock(4242)');
      const r0 = lateBody('PATCH', `/v1/patients/${ids.patient}`, { first_name: 'Committing' }, BODY_LATE);
      await sleep(DEADLINE + RELEASE_AFTER_504);
      await h.query('select pg_advisory_unlock(4242)');
      const r = await r0;
      expect(r.status).toBe(200);
      expect(r.at).toBeGreaterThan(DEADLINE);
      expect(r.body.data.first_name).toBe('Committing');
      expect(await firstName()).toBe('Committing');
    } finally {
      await ddl.execute('drop trigger test_hold_commit on "patient"');
    }
  });
});
