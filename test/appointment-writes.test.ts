import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * Appointments written over REST and GraphQL (issue 16): book, change, cancel; each records its
 * event with `data` equal to the GET body; overlaps are 409s naming the booking in the way, and
 * of two parallel bookings of one slot exactly one wins; retries (Idempotency-Key) and races
 * (If-Match) behave as docs/decisions.md says.
 */
let app: TestApp;
let clinicId: number;
let write: string;
let read: string;
let other: string;
let ids: { patient: string; branch: string; provider: string; type: string; status: string };
let otherPatient: string;

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('dental', ['appointments:write', 'appointments:read']);
  clinicId = c.clinicId;
  write = c.key;
  read = await app.key(clinicId, ['appointments:read', 'webhooks:manage']);
  const fx = fixtures(app.orm, clinicId);
  const cat = await fx.catalog();
  const patient = await fx.patient({ first: 'Dana', last: 'Cohen', phone: '0501234567' });
  ids = {
    patient: `pat_${patient.id}`,
    branch: `br_${cat.branch.id}`,
    provider: `prv_${cat.provider.id}`,
    type: `apt_${cat.type.id}`,
    status: `aps_${cat.status.id}`,
  };
  const o = await app.clinicWithKey('dental', ['appointments:write']);
  other = o.key;
  const ofx = fixtures(app.orm, o.clinicId);
  await ofx.catalog();
  otherPatient = `pat_${(await ofx.patient({ first: 'Other', last: 'Clinic' })).id}`;
});

beforeEach(() => app.clock.set('2026-11-20T08:00:00Z'));

let slot = 0;
/** A fresh hour for each booking, so tests do not collide with each other's. */
const nextStart = () => new Date(Date.UTC(2026, 11, 1, 6) + ++slot * 3600_000).toISOString();

const book = (body: Record<string, unknown>, key = write, headers: Record<string, string> = {}) =>
  app.post(
    '/v1/appointments',
    { patient_id: ids.patient, branch_id: ids.branch, provider_id: ids.provider, ...body },
    key,
    headers,
  );

async function eventsOf(objectId: string) {
  return app.orm.em
    .fork()
    .getConnection()
    .execute<{ type: string; data: any }[]>(
      `select "type", "data" from "event" where "clinic_id" = ? and "data"->>'id' = ? order by "id"`,
      [clinicId, objectId],
    );
}

const detailed = async (id: string) =>
  (await app.get(`/v1/appointments/${id}?response_format=detailed`, read)).body.data;

describe('book', () => {
  it('201 with the appointment; end from the type; appointment.created carries the GET body', async () => {
    const start = nextStart();
    const r = await book({ type_id: ids.type, start, note: 'First visit' });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({
      patient: { id: ids.patient, first_name: 'Dana' },
      branch: { id: ids.branch },
      provider: { id: ids.provider },
      type: { id: ids.type },
      start,
      end: new Date(new Date(start).getTime() + 30 * 60_000).toISOString(),
      note: 'First visit',
      cancelled_at: null,
    });
    expect(r.headers.get('etag')).toBe(`"${new Date(r.body.data.updated_at).getTime()}"`);
    const events = await eventsOf(r.body.data.id);
    expect(events.map((e) => e.type)).toEqual(['appointment.created']);
    expect(events[0].data).toEqual(await detailed(r.body.data.id));
    // The answer and the event are one object presented once (present-by-id.ts): each is compared
    // with a fresh GET, never with the other.
    expect(r.body.data).toEqual(await detailed(r.body.data.id));
  });

  it('one instant: the row and its event carry the write’s time, however far the clock runs meanwhile', async () => {
    const booked = await book({ type_id: ids.type, start: nextStart() });
    const clock = app.clock;
    const now = clock.now.bind(clock);
    // Every reading of the clock is 7 ms later than the one before. A change goes through the
    // entity's hooks and a flush (versionedTimestamps), which read the clock themselves.
    clock.now = () => {
      clock.advance(7);
      return now();
    };
    try {
      const r = await app.send('PATCH', `/v1/appointments/${booked.body.data.id}`, { note: 'Moved' }, write);
      expect(r.status).toBe(200);
      const [row] = await app.orm.em
        .fork()
        .getConnection()
        .execute<{ created_at: Date }[]>(
          `select "created_at" from "event" where "clinic_id" = ? and "type" = 'appointment.updated' and "data"->>'id' = ?`,
          [clinicId, r.body.data.id],
        );
      expect(new Date(row.created_at).toISOString()).toBe(r.body.data.updated_at);
    } finally {
      clock.now = now;
    }
  });

  it('422 naming the field: missing, wrong type, unknown field, malformed and foreign ids, end before start', async () => {
    const start = nextStart();
    const cases: [Record<string, unknown>, string][] = [
      [{ start: undefined }, 'start'],
      [{ start: 'tomorrow' }, 'start'],
      [{ start, end: start }, 'end'],
      [{ start }, 'end'],
      [{ start, type_id: ids.type, colour: 'red' }, 'colour'],
      [{ start, type_id: ids.type, patient_id: 'pat_x' }, 'patient_id'],
      [{ start, type_id: ids.type, patient_id: otherPatient }, 'patient_id'],
      [{ start, type_id: ids.type, branch_id: 12 }, 'branch_id'],
      [{ start, type_id: ids.type, note: 5 }, 'note'],
    ];
    for (const [body, param] of cases) {
      const r = await book(body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.error).toMatchObject({ code: 'validation_failed', param });
    }
    expect((await app.post('/v1/appointments', [], write)).status).toBe(422);
  });

  it('403 without appointments:write; another clinic cannot see or change it', async () => {
    const start = nextStart();
    const r = await book({ type_id: ids.type, start }, read);
    expect(r.status).toBe(403);
    expect(r.body.error.required_scopes).toEqual(['appointments:write']);
    const ok = await book({ type_id: ids.type, start });
    expect(
      (await app.send('PATCH', `/v1/appointments/${ok.body.data.id}`, { note: 'x' }, other)).status,
    ).toBe(404);
    expect((await app.post(`/v1/appointments/${ok.body.data.id}/cancel`, {}, other)).status).toBe(404);
  });

  it('an overlap with an active booking of the provider is a 409 naming it; a cancelled one frees the slot', async () => {
    const start = nextStart();
    const first = await book({ type_id: ids.type, start });
    const later = new Date(new Date(start).getTime() + 15 * 60_000).toISOString();
    const clash = await book({ type_id: ids.type, start: later });
    expect(clash.status).toBe(409);
    expect(clash.body.error.code).toBe('conflict');
    expect(clash.body.error.message).toContain(first.body.data.id);
    // Back to back is not an overlap.
    const after = new Date(new Date(start).getTime() + 30 * 60_000).toISOString();
    expect((await book({ type_id: ids.type, start: after })).status).toBe(201);
    const cancel = await app.post(`/v1/appointments/${first.body.data.id}/cancel`, { reason: 'Sick' }, write);
    expect(cancel.status).toBe(200);
    expect(cancel.body.data).toMatchObject({ cancellation_reason: 'Sick' });
    expect(cancel.body.data.cancelled_at).toBe('2026-11-20T08:00:00.000Z');
    expect((await eventsOf(first.body.data.id)).map((e) => e.type)).toEqual([
      'appointment.created',
      'appointment.cancelled',
    ]);
    const laterEnd = new Date(new Date(start).getTime() + 30 * 60_000).toISOString();
    expect((await book({ start: later, end: laterEnd })).status).toBe(201);
    expect((await app.post(`/v1/appointments/${first.body.data.id}/cancel`, {}, write)).status).toBe(409);
  });

  it('of parallel bookings of one slot exactly one wins; the others are 409s', async () => {
    const start = nextStart();
    const results = await Promise.all(Array.from({ length: 8 }, () => book({ type_id: ids.type, start })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    const winner = results.find((r) => r.status === 201)?.body.data.id;
    expect(results.filter((r) => r.status === 409).every((r) => r.body.error.code === 'conflict')).toBe(true);
    const page = await app.get(
      `/v1/appointments?from=${encodeURIComponent(start)}&to=${encodeURIComponent(new Date(new Date(start).getTime() + 60_000).toISOString())}`,
      read,
    );
    expect(page.body.data.map((a: any) => a.id)).toEqual([winner]);
  });

  it('Idempotency-Key: the same body answers the first result and books once; another body is a 409', async () => {
    const start = nextStart();
    const key = `k-${start}`;
    const a = await book({ type_id: ids.type, start }, write, { 'idempotency-key': key });
    const b = await book({ type_id: ids.type, start }, write, { 'idempotency-key': key });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(b.body).toEqual(a.body);
    expect((await eventsOf(a.body.data.id)).length).toBe(1);
    const c = await book({ type_id: ids.type, start, note: 'other' }, write, { 'idempotency-key': key });
    expect(c.status).toBe(409);
    expect(c.body.error.param).toBe('Idempotency-Key');
  });
});

describe('change', () => {
  it('moves keep the length, record appointment.updated, bump updated_at and the ETag', async () => {
    const start = nextStart();
    const a = (await book({ type_id: ids.type, start })).body.data;
    app.clock.set('2026-11-20T09:00:00Z');
    const moved = nextStart();
    const r = await app.send(
      'PATCH',
      `/v1/appointments/${a.id}`,
      { start: moved, status_id: ids.status, note: null },
      write,
    );
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ start: moved, status: { id: ids.status }, note: null });
    expect(new Date(r.body.data.end).getTime() - new Date(moved).getTime()).toBe(30 * 60_000);
    expect(r.body.data.updated_at).toBe('2026-11-20T09:00:00.000Z');
    const events = await eventsOf(a.id);
    expect(events.map((e) => e.type)).toEqual(['appointment.created', 'appointment.updated']);
    expect(events[1].data).toEqual(await detailed(a.id));
    const got = await app.get(`/v1/appointments/${a.id}`, read);
    expect(got.headers.get('etag')).toBe(r.headers.get('etag'));
  });

  it('If-Match: the current ETag passes; a stale one is a 412 and changes nothing', async () => {
    const a = await book({ type_id: ids.type, start: nextStart() });
    const etag = a.headers.get('etag') as string;
    const ok = await app.send('PATCH', `/v1/appointments/${a.body.data.id}`, { note: 'one' }, write, {
      'if-match': etag,
    });
    expect(ok.status).toBe(200);
    // Same clock: updated_at still moves (by a millisecond), so the old ETag is stale.
    expect(ok.headers.get('etag')).not.toBe(etag);
    const stale = await app.send('PATCH', `/v1/appointments/${a.body.data.id}`, { note: 'two' }, write, {
      'if-match': etag,
    });
    expect(stale.status).toBe(412);
    expect(stale.body.error.code).toBe('precondition_failed');
    expect((await detailed(a.body.data.id)).note).toBe('one');
    const bad = await app.send('PATCH', `/v1/appointments/${a.body.data.id}`, { note: 'x' }, write, {
      'if-match': 'yesterday',
    });
    expect(bad.status).toBe(422);
    expect(bad.body.error.param).toBe('If-Match');
    const cancel = await app.post(`/v1/appointments/${a.body.data.id}/cancel`, {}, write, {
      'if-match': etag,
    });
    expect(cancel.status).toBe(412);
  });

  it('a move onto another booking is a 409; patient_id cannot be changed', async () => {
    const s1 = nextStart();
    const a = (await book({ type_id: ids.type, start: s1 })).body.data;
    const b = (await book({ type_id: ids.type, start: nextStart() })).body.data;
    const r = await app.send('PATCH', `/v1/appointments/${b.id}`, { start: s1 }, write);
    expect(r.status).toBe(409);
    expect(r.body.error.message).toContain(a.id);
    const p = await app.send('PATCH', `/v1/appointments/${b.id}`, { patient_id: ids.patient }, write);
    expect(p.status).toBe(422);
    expect(p.body.error.param).toBe('patient_id');
    expect((await app.send('PATCH', '/v1/appointments/appt_999999', { note: 'x' }, write)).status).toBe(404);
    expect((await app.send('PUT', `/v1/appointments/${b.id}`, { note: 'x' }, write)).status).toBe(405);
  });
});

describe('GraphQL', () => {
  it('the same writes as mutations, with extensions.param and expectedUpdatedAt', async () => {
    const start = nextStart();
    const r = await app.gql(
      `mutation($input: CreateAppointmentInput!) { createAppointment(input: $input) { appointment { id start end patient { id } } } }`,
      {
        input: {
          patientId: ids.patient,
          branchId: ids.branch,
          providerId: ids.provider,
          typeId: ids.type,
          start,
        },
      },
      write,
    );
    expect(r.body.errors).toBeUndefined();
    const id = r.body.data.createAppointment.appointment.id;
    expect(r.body.data.createAppointment.appointment.patient.id).toBe(ids.patient);
    const bad = await app.gql(
      `mutation($id: ID!) { updateAppointment(input: { id: $id, end: "soon" }) { appointment { id } } }`,
      { id },
      write,
    );
    expect(bad.body.errors[0].extensions).toMatchObject({ code: 'validation_failed', param: 'input.end' });
    const stale = await app.gql(
      `mutation($id: ID!) { cancelAppointment(input: { id: $id, expectedUpdatedAt: "2020-01-01T00:00:00Z" }) { appointment { id } } }`,
      { id },
      write,
    );
    expect(stale.body.errors[0].extensions.code).toBe('precondition_failed');
    const got = await app.gql(`query($id: ID!) { node(id: $id) { id } }`, { id }, read);
    expect(got.body.data?.node?.id ?? null).toBe(id);
  });
});
