import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { connect, type TestSocket, until } from './ws-client.ts';

/**
 * Live events are strictly id-ordered (src/services/events/relay.ts): ids are taken at INSERT, not
 * at commit, so a write holding a lower id may commit after a higher one. The relay publishes an
 * id only once every lower one has committed or aborted, so `after: <last id seen>` never skips
 * one. The write in flight is a raw transaction on its own connection, held open by the test.
 */
let app: TestApp & { databaseUrl: string };
let clinicId: number;
let writer: string;
let reader: string;
let n = 0;
const sockets: TestSocket[] = [];
const clients: pg.Client[] = [];

const EVENTS = 'subscription($after: ID) { events(types: [PATIENT_CREATED], after: $after) { id } }';
const idOf = (r: any) => Number(r.events.id.slice(4));
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('dental', ['patients:write'], 'order');
  clinicId = c.clinicId;
  writer = c.key;
  reader = await app.key(clinicId, ['webhooks:manage']);
  const first = await createPatient();
  // Relayed before any test subscribes: it must not arrive as one of a test's live events.
  await until(() => app.server.app.eventHub.watermark >= first);
});

afterEach(async () => {
  await Promise.all(sockets.splice(0).map((s) => s.dispose()));
  await Promise.all(clients.splice(0).map((c) => c.end().catch(() => {})));
  await until(() => app.server.app.eventHub.size === 0);
});

async function createPatient(): Promise<number> {
  const r = await app.post('/v1/patients', { first_name: `O${++n}`, last_name: 'Order' }, writer);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  // The newest committed event of the clinic: the patient's (a write in flight is not visible).
  const rows = await app.orm.em
    .getConnection()
    .execute<{ id: number }[]>(`select max("id") as "id" from "event" where "clinic_id" = ?`, [clinicId]);
  return Number(rows[0].id);
}

/** A write in flight: its event row inserted (its id taken), its transaction still open. */
async function writeInFlight(): Promise<{ id: number; client: pg.Client }> {
  const client = new pg.Client({ connectionString: app.databaseUrl });
  clients.push(client);
  await client.connect();
  await client.query('begin');
  const { rows } = await client.query<{ id: number }>(
    `insert into "event" ("clinic_id", "type", "scope", "data", "created_at")
       select "clinic_id", "type", "scope", "data", now() from "event"
        where "clinic_id" = $1 and "type" = 'patient.created' order by "id" desc limit 1
     returning "id"`,
    [clinicId],
  );
  return { id: rows[0].id, client };
}

function subscribe(after?: number) {
  const s = connect(app.url, { Authorization: `Bearer ${reader}` });
  sockets.push(s);
  return s.subscribe(EVENTS, after === undefined ? {} : { after: `evt_${after}` });
}

describe('a write committing after a later one', () => {
  it('holds the later event back until the earlier commits, then yields both in id order', async () => {
    const sub = subscribe();
    await until(() => app.server.app.eventHub.size === 1);
    const early = await writeInFlight();
    const late = await createPatient();
    expect(late).toBeGreaterThan(early.id);
    await pause(300);
    expect(sub.results.map(idOf)).toEqual([]);
    await early.client.query('commit');
    await sub.waitFor(2);
    await pause(100);
    expect(sub.results.map(idOf)).toEqual([early.id, late]);
  });

  it("holds back a later write that took its transaction id before the earlier one did (above a snapshot's xmax)", async () => {
    const sub = subscribe();
    await until(() => app.server.app.eventHub.size === 1);
    // The later write takes a transaction id first, its event id last; the earlier one the reverse.
    const later = new pg.Client({ connectionString: app.databaseUrl });
    clients.push(later);
    await later.connect();
    await later.query('begin');
    await later.query('select pg_current_xact_id()');
    const early = await writeInFlight();
    const { rows } = await later.query<{ id: number }>(
      `insert into "event" ("clinic_id", "type", "scope", "data", "created_at")
         select "clinic_id", "type", "scope", "data", now() from "event"
          where "clinic_id" = $1 and "type" = 'patient.created' order by "id" desc limit 1
       returning "id"`,
      [clinicId],
    );
    const lateId = Number(rows[0].id);
    expect(lateId).toBeGreaterThan(early.id);
    await later.query('commit');
    await pause(300);
    expect(sub.results.map(idOf)).toEqual([]);
    await early.client.query('commit');
    await sub.waitFor(2);
    await pause(100);
    expect(sub.results.map(idOf)).toEqual([early.id, lateId]);
  });

  it('loses nothing when a client resumes after the last id it saw while the earlier was in flight', async () => {
    const before = await createPatient();
    const early = await writeInFlight();
    const late = await createPatient();
    // Connected while `early` is open, sees what it sees, disconnects.
    const first = subscribe(before);
    await until(() => app.server.app.eventHub.size === 1);
    await pause(300);
    const seen = first.results.map(idOf);
    first.stop();
    await Promise.all(sockets.splice(0).map((s) => s.dispose()));
    await until(() => app.server.app.eventHub.size === 0);
    await early.client.query('commit');
    // Resumes from the last id it saw (or where it started).
    const again = subscribe(seen.at(-1) ?? before);
    await until(() => seen.length + again.results.length >= 2);
    await pause(100);
    expect([...seen, ...again.results.map(idOf)]).toEqual([early.id, late]);
  });

  it('keeps the order when the relay loses its connection while it waits', async () => {
    const sub = subscribe();
    await until(() => app.server.app.eventHub.size === 1);
    const early = await writeInFlight();
    const late = await createPatient();
    await pause(100);
    const { rows } = await early.client.query<{ pid: number }>(
      `select pid from pg_stat_activity where application_name like 'clinic-gateway events%' and datname = current_database()`,
    );
    expect(rows).toHaveLength(1);
    await early.client.query('select pg_terminate_backend($1)', [rows[0].pid]);
    await pause(100);
    await early.client.query('commit');
    await sub.waitFor(2, 8000);
    await pause(100);
    expect(sub.results.map(idOf)).toEqual([early.id, late]);
  });

  it('does not wait for an aborted write: the later events arrive at once', async () => {
    const sub = subscribe();
    await until(() => app.server.app.eventHub.size === 1);
    const aborted = await writeInFlight();
    const late = await createPatient();
    await pause(100);
    await aborted.client.query('rollback');
    const started = Date.now();
    await sub.waitFor(1);
    expect(Date.now() - started).toBeLessThan(1000);
    await pause(100);
    expect(sub.results.map(idOf)).toEqual([late]);
  });

  it('does not wait for a transaction that wrote no event', async () => {
    const sub = subscribe();
    await until(() => app.server.app.eventHub.size === 1);
    const other = new pg.Client({ connectionString: app.databaseUrl });
    clients.push(other);
    await other.connect();
    await other.query('begin');
    await other.query('select pg_current_xact_id()');
    const late = await createPatient();
    const got = await sub.waitFor(1, 2000);
    expect(got.map(idOf)).toEqual([late]);
    await other.query('rollback');
  });
});

afterAll(async () => {
  await Promise.all(sockets.map((s) => s.dispose()));
  await Promise.all(clients.map((c) => c.end().catch(() => {})));
});
