import { beforeAll, describe, expect, it } from 'vitest';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * The small things a first-time integrator meets (issue 26): a wrong type is named as one, an
 * unknown field lists the fields the operation takes, a new appointment starts with the clinic's
 * default status, a booking outside the provider's working hours is refused unless staff
 * override it, and a lone UTF-16 surrogate is refused instead of becoming U+FFFD.
 */
let app: TestApp;
let key: string;
let clinicId: number;
let ids: { patient: string; branch: string; provider: string; type: string; status: string };

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('dental', [
    'patients:write',
    'patients:read',
    'appointments:write',
    'appointments:read',
    'catalog:write',
    'catalog:read',
  ]);
  key = c.key;
  clinicId = c.clinicId;
  const fx = fixtures(app.orm, clinicId);
  const cat = await fx.catalog();
  const patient = await fx.patient({ first: 'Dana', last: 'Cohen' });
  ids = {
    patient: `pat_${patient.id}`,
    branch: `br_${cat.branch.id}`,
    provider: `prv_${cat.provider.id}`,
    type: `apt_${cat.type.id}`,
    status: `aps_${cat.status.id}`,
  };
  app.clock.set('2026-11-20T08:00:00Z');
});

const refusal = async (path: string, body: unknown, method = 'POST') => {
  const r = await app.send(method, path, body, key);
  expect(r.status, JSON.stringify(r.body)).toBe(422);
  return r.body.error as { param: string; message: string };
};

describe('a wrong type', () => {
  it('is named as a wrong type, not as a missing field', async () => {
    expect(await refusal('/v1/patients', { first_name: 5 })).toMatchObject({
      param: 'first_name',
      message: 'first_name must be a string, not a number.',
    });
    expect(await refusal('/v1/patients', { first_name: 'A', address: 'x' })).toMatchObject({
      param: 'address',
      message: 'address must be an object, not a string.',
    });
    expect(await refusal('/v1/patients', { first_name: 'A', contacts: {} })).toMatchObject({
      param: 'contacts',
      message: 'contacts must be an array, not an object.',
    });
    expect(
      await refusal('/v1/catalog/appointments/types', { name: 'X', duration_minutes: '30' }),
    ).toMatchObject({
      param: 'duration_minutes',
      message: 'duration_minutes must be a number, not a string.',
    });
    expect(await refusal('/v1/patients', { first_name: 'A', email: true })).toMatchObject({
      param: 'email',
      message: 'email must be a string, not a boolean.',
    });
    expect(
      await refusal('/v1/catalog/appointments/types', { name: null, duration_minutes: 30 }),
    ).toMatchObject({ param: 'name', message: 'name must be a string, not null.' });
    // Left out is still "required".
    expect(await refusal('/v1/catalog/appointments/types', { name: 'X' })).toMatchObject({
      message: 'duration_minutes is required.',
    });
  });
});

describe('an unknown body field', () => {
  it('lists the fields the operation takes, as an unknown query parameter does', async () => {
    const e = await refusal('/v1/patients', { frist_name: 'Dana' });
    expect(e.param).toBe('frist_name');
    expect(e.message).toMatch(
      /^Unknown field frist_name\. This operation takes: first_name, last_name, phone, /,
    );
    const nested = await refusal('/v1/patients', { first_name: 'A', address: { line1: 'x', zip: '1' } });
    expect(nested.param).toBe('address.zip');
    expect(nested.message).toMatch(/^Unknown field address\.zip\. address takes: line1, line2, city, /);
  });
});

const book = (body: Record<string, unknown>) =>
  app.post(
    '/v1/appointments',
    { patient_id: ids.patient, branch_id: ids.branch, provider_id: ids.provider, type_id: ids.type, ...body },
    key,
  );

describe("a new appointment's status", () => {
  it("is the clinic's first pickable status (Scheduled), in the row, the answer and the event", async () => {
    const r = await book({ start: '2026-12-02T06:00:00Z' });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.data.status).toMatchObject({ id: ids.status, name: 'Scheduled' });
    expect((await app.get(`/v1/appointments/${r.body.data.id}`, key)).body.data.status.id).toBe(ids.status);
    const [event] = await app.orm.em
      .fork()
      .getConnection()
      .execute<{ data: any }[]>(
        "select data from event where clinic_id = ? and type = 'appointment.created' and data->>'id' = ?",
        [clinicId, r.body.data.id],
      );
    expect(event.data.status).toMatchObject({ id: ids.status, name: 'Scheduled' });
    // An explicit status_id still wins.
    const other = await app.post(
      '/v1/catalog/appointments/statuses',
      { name: 'Confirmed', color: '#0a0' },
      key,
    );
    const chosen = await book({ start: '2026-12-02T07:00:00Z', status_id: other.body.data.id });
    expect(chosen.body.data.status.id).toBe(other.body.data.id);
  });
});

describe('a booking outside working hours', () => {
  let provider: string;
  beforeAll(async () => {
    const p = await app.post('/v1/catalog/providers', { name: 'Dr. Hours', type: 'dentist' }, key);
    provider = p.body.data.id;
    // Mondays 09:00–17:00 UTC (the clinic's zone); closed every other day.
    const put = await app.send(
      'PUT',
      `/v1/catalog/providers/${provider}/working_hours`,
      { data: [{ branch_id: ids.branch, weekday: 1, start: '09:00', end: '17:00' }] },
      key,
    );
    expect(put.status, JSON.stringify(put.body)).toBe(200);
  });

  it('is refused on a closed day (a 422 naming start) unless staff set outside_hours', async () => {
    // 2026-12-06 is a Sunday: /v1/availability offers nothing that day.
    const slots = await app.get(
      `/v1/availability?appointment_type_id=${ids.type}&provider_id=${provider}&from=2026-12-06&to=2026-12-07`,
      key,
    );
    expect(slots.body.data).toEqual([]);
    const sunday = await book({ provider_id: provider, start: '2026-12-06T10:00:00Z' });
    expect(sunday.status).toBe(422);
    expect(sunday.body.error.param).toBe('start');
    expect(sunday.body.error.message).toMatch(/outside_hours/);
    // Monday evening, past 17:00, and a booking running over the end of the day's hours.
    expect((await book({ provider_id: provider, start: '2026-12-07T17:00:00Z' })).status).toBe(422);
    expect((await book({ provider_id: provider, start: '2026-12-07T16:45:00Z' })).status).toBe(422);
    const monday = await book({ provider_id: provider, start: '2026-12-07T09:00:00Z' });
    expect(monday.status, JSON.stringify(monday.body)).toBe(201);
    const forced = await book({ provider_id: provider, start: '2026-12-06T10:00:00Z', outside_hours: true });
    expect(forced.status, JSON.stringify(forced.body)).toBe(201);
    // Moving a booking onto a closed day is refused the same way.
    const moved = await app.send(
      'PATCH',
      `/v1/appointments/${monday.body.data.id}`,
      { start: '2026-12-08T09:00:00Z' },
      key,
    );
    expect(moved.status).toBe(422);
    expect(moved.body.error.param).toBe('start');
  });

  it('a provider who keeps no working hours takes bookings at any time', async () => {
    expect((await book({ start: '2026-12-06T03:00:00Z' })).status).toBe(201);
  });
});

describe('a lone UTF-16 surrogate', () => {
  it('is refused in a REST body (a 422 naming the field), as an escape or as raw bytes', async () => {
    for (const sent of ['\\ud800', '\\udc00', 'a\\ud83dz', '\\ud83d\\u0041']) {
      const r = await app.post('/v1/patients', `{"first_name":"Dana","last_name":"x${sent}"}`, key);
      expect(r.status, sent).toBe(422);
      expect(r.body.error.param).toBe('last_name');
      expect(r.body.error.message).toMatch(/lone UTF-16 surrogate/);
    }
    const nested = await app.post('/v1/patients', '{"first_name":"A","address":{"city":"\\udfff"}}', key);
    expect(nested.body.error.param).toBe('address.city');
    // A pair is a character (an emoji), stored as sent.
    const pair = await app.post('/v1/patients', '{"first_name":"Dana \\ud83d\\ude00"}', key);
    expect(pair.status).toBe(201);
    expect(pair.body.data.first_name).toBe('Dana 😀');
    // The same surrogate sent as (invalid) UTF-8 bytes is no text at all.
    const bytes = Buffer.concat([
      Buffer.from('{"first_name":"'),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from('"}'),
    ]);
    const raw = await fetch(`${app.url}/v1/patients`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: bytes,
    });
    expect(raw.status).toBe(400);
    expect(((await raw.json()) as any).error.message).toMatch(/UTF-8/);
  });

  it('is refused in GraphQL variables, naming the variable path', async () => {
    const body = `{"query":"mutation($i: CreatePatientInput) { createPatient(input: $i) { patient { id } } }","variables":{"i":{"firstName":"\\ud800"}}}`;
    const r = await app.post('/graphql', body, key);
    expect(r.body.errors[0].extensions).toMatchObject({ code: 'validation_failed', param: 'i.firstName' });
    // In the document itself, GraphQL's own parser refuses it.
    const literal = await app.gql(
      'mutation { createPatient(input: {firstName: "\\ud800"}) { patient { id } } }',
      {},
      key,
    );
    expect(literal.body.errors[0].message).toMatch(/Invalid Unicode escape/);
  });
});
