import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * Treatments written over REST and GraphQL (issue 16): recorded under a patient, changed,
 * cancelled; each records its event with `data` equal to the GET body; GET /v1/treatments lists
 * them; retries (Idempotency-Key) and races (If-Match) as for appointments.
 */
let app: TestApp;
let clinicId: number;
let write: string;
let read: string;
let other: string;
let ids: {
  patient: string;
  patient2: string;
  menuItem: string;
  provider: string;
  appt: string;
  appt2: string;
};
let foreign: { patient: string; menuItem: string };

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('dental', ['treatments:write', 'treatments:read']);
  clinicId = c.clinicId;
  write = c.key;
  read = await app.key(clinicId, ['treatments:read']);
  const fx = fixtures(app.orm, clinicId);
  const cat = await fx.catalog();
  const patient = await fx.patient({ first: 'Dana', last: 'Cohen', phone: '0501234567' });
  const patient2 = await fx.patient({ first: 'Noa', last: 'Levi' });
  const appt = await fx.appointment(patient, { branch: cat.branch }, 0);
  const appt2 = await fx.appointment(patient2, { branch: cat.branch }, 60);
  ids = {
    patient: `pat_${patient.id}`,
    patient2: `pat_${patient2.id}`,
    menuItem: `trm_${cat.menuItem.id}`,
    provider: `prv_${cat.provider.id}`,
    appt: `appt_${appt.id}`,
    appt2: `appt_${appt2.id}`,
  };
  const o = await app.clinicWithKey('dental', ['treatments:write', 'treatments:read']);
  other = o.key;
  const ofx = fixtures(app.orm, o.clinicId);
  const ocat = await ofx.catalog();
  foreign = {
    patient: `pat_${(await ofx.patient({ first: 'Other', last: 'Clinic' })).id}`,
    menuItem: `trm_${ocat.menuItem.id}`,
  };
});

beforeEach(() => app.clock.set('2026-11-20T08:00:00Z'));

const performed = '2026-11-19T10:00:00.000Z';

const create = (body: Record<string, unknown>, key = write, headers: Record<string, string> = {}) =>
  app.post(`/v1/patients/${ids.patient}/treatments`, { performed_at: performed, ...body }, key, headers);

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
  (await app.get(`/v1/treatments/${id}?response_format=detailed`, read)).body.data;

describe('record', () => {
  it('201; price from the menu item, status planned; treatment.created carries the GET body', async () => {
    const r = await create({
      treatment_id: ids.menuItem,
      provider_id: ids.provider,
      appointment_id: ids.appt,
      teeth: ['11', '55'],
      note: 'Upper front',
    });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({
      patient: { id: ids.patient, first_name: 'Dana' },
      appointment_id: ids.appt,
      treatment: { id: ids.menuItem, name: 'Cleaning', code: 'D1110' },
      provider: { id: ids.provider },
      teeth: ['11', '55'],
      price: 250,
      status: 'planned',
      performed_at: performed,
      note: 'Upper front',
      cancelled_at: null,
      cancellation_reason: null,
    });
    expect(r.headers.get('etag')).toBe(`"${new Date(r.body.data.updated_at).getTime()}"`);
    const events = await eventsOf(r.body.data.id);
    expect(events.map((e) => e.type)).toEqual(['treatment.created']);
    expect(events[0].data).toEqual(await detailed(r.body.data.id));
    // The answer and the event are one object presented once (present-by-id.ts): each is compared
    // with a fresh GET, never with the other.
    expect(r.body.data).toEqual(await detailed(r.body.data.id));
    const own = await create({ price: 99.5, status: 'completed', description: 'Filling' });
    expect(own.body.data).toMatchObject({ price: 99.5, status: 'completed', treatment: null });
  });

  it('422 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ performed_at: undefined }, 'performed_at'],
      [{ performed_at: 'yesterday' }, 'performed_at'],
      [{ status: 'done' }, 'status'],
      [{ teeth: ['19'] }, 'teeth[0]'],
      [{ teeth: '11' }, 'teeth'],
      [{ price: -1 }, 'price'],
      [{ price: 1.234 }, 'price'],
      [{ colour: 'red' }, 'colour'],
      [{ treatment_id: 'trm_x' }, 'treatment_id'],
      [{ treatment_id: foreign.menuItem }, 'treatment_id'],
      [{ provider_id: 'prv_999999' }, 'provider_id'],
      // Another patient's appointment is refused like an unknown one.
      [{ appointment_id: ids.appt2 }, 'appointment_id'],
      [{ appointment_id: 'appt_999999' }, 'appointment_id'],
    ];
    for (const [body, param] of cases) {
      const r = await create(body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.error).toMatchObject({ code: 'validation_failed', param });
    }
  });

  it('403 without treatments:write; another clinic: its patient is a 404, ours too', async () => {
    const r = await create({}, read);
    expect(r.status).toBe(403);
    expect(r.body.error.required_scopes).toEqual(['treatments:write']);
    const ok = await create({});
    const t = ok.body.data.id;
    expect(
      (await app.post(`/v1/patients/${foreign.patient}/treatments`, { performed_at: performed }, write))
        .status,
    ).toBe(404);
    expect(
      (await app.post(`/v1/patients/${ids.patient}/treatments`, { performed_at: performed }, other)).status,
    ).toBe(404);
    expect(
      (await app.post('/v1/patients/pat_999999/treatments', { performed_at: performed }, write)).status,
    ).toBe(404);
    expect((await app.send('PATCH', `/v1/treatments/${t}`, { note: 'x' }, other)).status).toBe(404);
    expect((await app.post(`/v1/treatments/${t}/cancel`, {}, other)).status).toBe(404);
    expect((await app.get(`/v1/treatments/${t}`, other)).status).toBe(404);
  });

  it('If-Match does not apply to a creation under a patient (422)', async () => {
    const r = await create({}, write, { 'if-match': '"1"' });
    expect(r.status).toBe(422);
    expect(r.body.error.param).toBe('If-Match');
  });

  it('Idempotency-Key: the same body answers the first result once; another body is a 409', async () => {
    const key = 'trt-key-1';
    const a = await create({ note: 'once' }, write, { 'idempotency-key': key });
    const b = await create({ note: 'once' }, write, { 'idempotency-key': key });
    expect(b.status).toBe(201);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(b.body).toEqual(a.body);
    expect((await eventsOf(a.body.data.id)).length).toBe(1);
    const c = await create({ note: 'twice' }, write, { 'idempotency-key': key });
    expect(c.status).toBe(409);
  });
});

describe('change and cancel', () => {
  it('PATCH records treatment.updated; null clears; cancel sets the reason; a cancelled one is a 409', async () => {
    const t = (await create({ treatment_id: ids.menuItem, note: 'n' })).body.data;
    app.clock.set('2026-11-20T09:00:00Z');
    const r = await app.send(
      'PATCH',
      `/v1/treatments/${t.id}`,
      { status: 'completed', note: null, teeth: ['21'], appointment_id: ids.appt, treatment_id: null },
      write,
    );
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      status: 'completed',
      note: null,
      teeth: ['21'],
      appointment_id: ids.appt,
      treatment: null,
      price: 250,
      updated_at: '2026-11-20T09:00:00.000Z',
    });
    const bad = await app.send('PATCH', `/v1/treatments/${t.id}`, { appointment_id: ids.appt2 }, write);
    expect(bad.status).toBe(422);
    expect(bad.body.error.param).toBe('appointment_id');
    const p = await app.send('PATCH', `/v1/treatments/${t.id}`, { patient_id: ids.patient2 }, write);
    expect(p.body.error.param).toBe('patient_id');
    const cancel = await app.post(`/v1/treatments/${t.id}/cancel`, { reason: 'Entered in error' }, write);
    expect(cancel.status).toBe(200);
    expect(cancel.body.data).toMatchObject({
      cancelled_at: '2026-11-20T09:00:00.000Z',
      cancellation_reason: 'Entered in error',
    });
    const events = await eventsOf(t.id);
    expect(events.map((e) => e.type)).toEqual([
      'treatment.created',
      'treatment.updated',
      'treatment.cancelled',
    ]);
    expect(events[2].data).toEqual(await detailed(t.id));
    expect((await app.post(`/v1/treatments/${t.id}/cancel`, {}, write)).status).toBe(409);
    expect((await app.send('PATCH', `/v1/treatments/${t.id}`, { note: 'x' }, write)).status).toBe(409);
    expect((await app.send('PATCH', '/v1/treatments/trt_999999', { note: 'x' }, write)).status).toBe(404);
  });

  it('If-Match: a stale ETag is a 412 and changes nothing', async () => {
    const a = await create({});
    const etag = a.headers.get('etag') as string;
    const ok = await app.send('PATCH', `/v1/treatments/${a.body.data.id}`, { note: 'one' }, write, {
      'if-match': etag,
    });
    expect(ok.status).toBe(200);
    const stale = await app.send('PATCH', `/v1/treatments/${a.body.data.id}`, { note: 'two' }, write, {
      'if-match': etag,
    });
    expect(stale.status).toBe(412);
    expect((await detailed(a.body.data.id)).note).toBe('one');
    expect(
      (await app.post(`/v1/treatments/${a.body.data.id}/cancel`, {}, write, { 'if-match': etag })).status,
    ).toBe(412);
  });
});

describe('reads', () => {
  it('GET /v1/treatments filters by patient, appointment and time; GraphQL connection and node agree', async () => {
    const t = (
      await app.post(
        `/v1/patients/${ids.patient2}/treatments`,
        { performed_at: '2026-10-01T00:00:00Z', appointment_id: ids.appt2 },
        write,
      )
    ).body.data;
    const byPatient = await app.get(`/v1/treatments?patient_id=${ids.patient2}`, read);
    expect(byPatient.status).toBe(200);
    expect(byPatient.body.data.map((x: any) => x.id)).toEqual([t.id]);
    const byAppt = await app.get(`/v1/treatments?appointment_id=${ids.appt2}`, read);
    expect(byAppt.body.data.map((x: any) => x.id)).toEqual([t.id]);
    const bad = await app.get('/v1/treatments?provider_id=nope', read);
    expect(bad.status).toBe(422);
    const all = await app.get('/v1/treatments?limit=100', read);
    const times = all.body.data.map((x: any) => x.performed_at);
    expect([...times].sort().reverse()).toEqual(times);
    const gql = await app.gql(
      `query($p: String) { treatments(first: 5, patientId: $p) { edges { node { id status patient { id } } } } }`,
      { p: ids.patient2 },
      read,
    );
    expect(gql.body.errors).toBeUndefined();
    expect(gql.body.data.treatments.edges.map((e: any) => e.node.id)).toEqual([t.id]);
    const node = await app.gql(
      `query($id: ID!) { node(id: $id) { id ... on Treatment { status } } }`,
      { id: t.id },
      read,
    );
    expect(node.body.data.node).toEqual({ id: t.id, status: 'PLANNED' });
    expect(
      (await app.gql(`query($id: ID!) { node(id: $id) { id } }`, { id: t.id }, other)).body.data.node,
    ).toBeNull();
  });

  it('GraphQL mutations with extensions.param and expectedUpdatedAt', async () => {
    const r = await app.gql(
      `mutation($input: CreateTreatmentInput!) { createTreatment(input: $input) { treatment { id price patient { id } } } }`,
      { input: { id: ids.patient, performedAt: performed, treatmentId: ids.menuItem } },
      write,
    );
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.createTreatment.treatment).toMatchObject({ price: 250, patient: { id: ids.patient } });
    const id = r.body.data.createTreatment.treatment.id;
    const bad = await app.gql(
      `mutation($id: ID!) { updateTreatment(input: { id: $id, teeth: ["99"] }) { treatment { id } } }`,
      { id },
      write,
    );
    expect(bad.body.errors[0].extensions).toMatchObject({
      code: 'validation_failed',
      param: 'input.teeth[0]',
    });
    const stale = await app.gql(
      `mutation($id: ID!) { cancelTreatment(input: { id: $id, expectedUpdatedAt: "2020-01-01T00:00:00Z" }) { treatment { id } } }`,
      { id },
      write,
    );
    expect(stale.body.errors[0].extensions.code).toBe('precondition_failed');
  });
});
