import { beforeAll, describe, expect, it } from 'vitest';
import { readScopes, writeScopes } from '../src/auth/scopes.ts';
import { type IdKind, toId } from '../src/lib/ids.ts';
import { clinicReaders } from '../src/lib/request-context.ts';
import { restRoutes } from '../src/rest/routes.ts';
import { allWrites } from '../src/services/all-writes.ts';
import { fixtures } from './fixtures.ts';
import { deliveryFixtures } from './full-fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/** A key acts on its own clinic only: another clinic's ids are 404 everywhere, its lists invisible. */
let app: TestApp;
let keyA: string;
let keyB: string;
let clinicA: number;
const b: Record<string, string> = {};

beforeAll(async () => {
  app = await startTestApp();
  // webhooks:manage too: the events (GET /v1/events/{id}) are the clinic's records as well.
  const A = await app.clinicWithKey('veterinary', [...readScopes, 'webhooks:manage'], 'A');
  const B = await app.clinicWithKey('veterinary', [...readScopes, 'webhooks:manage'], 'B');
  keyA = A.key;
  keyB = B.key;
  clinicA = A.clinicId;
  const fa = fixtures(app.orm, A.clinicId);
  await fa.catalog();
  await fa.patient({ first: 'Alice', last: 'OfA', phone: '050-000-0001', email: 'shared@example.com' });
  const fb = fixtures(app.orm, B.clinicId);
  const cb = await fb.catalog();
  const owner = await fb.owner({ first: 'Bob', last: 'OfB', phone: '050-000-0002' });
  const p = await fb.patient({
    first: 'Bella',
    last: 'OfB',
    phone: '050-000-0002',
    email: 'shared@example.com',
    owner,
    species: cb.species,
  });
  const appt = await fb.appointment(p, { branch: cb.branch }, 1);
  const treatment = await fb.treatment(p, { appointment: appt }, 1);
  const payment = await fb.payment(p, cb.account, 1);
  b.Treatment = `trt_${treatment.id}`;
  b.Payment = `pay_${payment.id}`;
  b.Owner = `own_${owner.id}`;
  b.patient = `pat_${p.id}`;
  b.appointment = `appt_${appt.id}`;
  b.species = `spc_${cb.species.id}`;
  // Every catalog entry kind, by its id kind (GET and writes of /v1/catalog/<list>/{id}).
  for (const [kind, e] of Object.entries({
    Branch: cb.branch,
    AppointmentType: cb.type,
    AppointmentStatus: cb.status,
    TreatmentMenuItem: cb.menuItem,
    Provider: cb.provider,
    BillingAccount: cb.account,
    Species: cb.species,
    Breed: cb.breed,
    Vaccine: cb.rabies,
    Measurement: cb.weight,
  }))
    b[kind] = toId(kind as IdKind, e.id);
  const chat = await fb.chat('050-000-0002');
  b.Patient = b.patient;
  b.Appointment = b.appointment;
  b.Conversation = `conv_${chat.conversation.id}`;
  b.Message = `out_${chat.outbound.id}`;
  // A recorded call of B's patient, its recording available (GET /v1/calls/{id}/recording).
  b.Call = `call_${(await fb.call(p, 5)).id}`;
  await fa.chat('050-000-0001');
  // An event of B, recorded by a real write (animal.updated).
  const writeB = await app.key(B.clinicId, ['patients:write']);
  expect((await app.send('PATCH', `/v1/animals/${b.patient}`, { first_name: 'Bella' }, writeB)).status).toBe(
    200,
  );
  b.Event = (await app.get('/v1/events?limit=1', keyB)).body.data[0].id;
  // A webhook subscription of B (GET and DELETE /v1/webhooks/{id}).
  b.WebhookSubscription = (
    await app.post('/v1/webhooks', { url: 'https://hooks.example.com/b' }, keyB)
  ).body.data.id;
  // An attempt of B's delivery log (POST /v1/webhooks/{id}/deliveries/{delivery_id}/retry).
  await deliveryFixtures(app.orm, B.clinicId, Number(b.WebhookSubscription.slice('wh_'.length)));
  b.WebhookDelivery = (
    await app.get(`/v1/webhooks/${b.WebhookSubscription}/deliveries?limit=1`, keyB)
  ).body.data[0].id;
});

describe('clinic isolation', () => {
  it('knows an id of B for every kind of path id', () => {
    const kinds = new Set(restRoutes.flatMap((r) => Object.values(r.ids ?? {})));
    for (const kind of kinds) expect(b[kind], kind).toMatch(/^[a-z]+_\d+$/);
  });

  it.each(
    restRoutes
      .filter((r) => r.path.includes(':id') && r.method === 'GET')
      .map((r) => [r.path, r.ids?.id ?? 'Patient']),
  )("404 on %s with another clinic's id", async (path, kind) => {
    const url = `/v1${path.replace(':id', () => b[kind])}`;
    expect((await app.get(url, keyB)).status).toBe(200);
    const r = await app.get(url, keyA);
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('not_found');
  });

  it("writes on another clinic's ids are a 404 and change nothing", async () => {
    const writeA = await app.key(clinicA, ['chat:write']);
    const react = await app.post(`/v1/chat/messages/${b.Message}/reaction`, { emoji: '👍' }, writeA);
    expect(react.status).toBe(404);
    const handled = await app.post(
      `/v1/chat/conversations/${b.Conversation}/handled`,
      { handled: true },
      writeA,
    );
    expect(handled.status).toBe(404);
    const mine = await app.get(`/v1/chat/conversations/${b.Conversation}`, keyB);
    expect(mine.body.data.is_handled).toBe(false);
  });

  it.each(
    allWrites()
      .filter((op) => op.ids?.id)
      .map((op) => [op.method, op.path, op] as const),
  )("%s %s on another clinic's id is a 404 and changes nothing", async (method, path, op) => {
    const writeA = await app.key(clinicA, [...new Set([...writeScopes, ...op.scopes])]);
    const kind = op.ids?.id as string;
    const url = `/v1${path.replace(':id', () => b[kind]).replace(':delivery_id', () => b.WebhookDelivery)}`;
    // The object the path names, as its owner reads it.
    const read = restRoutes.find((r) => r.method === 'GET' && r.ids?.id === kind && r.path.endsWith('/:id'));
    const get = `/v1${read?.path.replace(':id', () => b[kind])}`;
    const before = (await app.get(get, keyB)).body;
    const r = await app.send(method, url, op.example, writeA);
    expect(r.status, JSON.stringify(r.body)).toBe(404);
    expect(r.body.error.code).toBe('not_found');
    expect((await app.get(get, keyB)).body).toEqual(before);
  });

  it("lists and searches never show another clinic's rows", async () => {
    for (const q of [
      '',
      '?query=bella',
      '?phone=0500000002',
      '?email=shared%40example.com',
      '?include=owner,species',
    ]) {
      const r = await app.get(`/v1/patients${q}`, keyA);
      expect(r.body.data.every((p: any) => p.first_name === 'Alice')).toBe(true);
    }
    expect((await app.get(`/v1/patients?email=shared%40example.com`, keyA)).body.data).toHaveLength(1);
    for (const path of [
      '/v1/chat/conversations',
      '/v1/chat/messages',
      '/v1/chat/conversations?phone=0500000002',
    ]) {
      const r = await app.get(path, keyA);
      expect(
        r.body.data.every((x: any) => x.patient_phone === '0500000001'),
        path,
      ).toBe(true);
    }
    expect((await app.get('/v1/chat/messages?phone=0500000002', keyA)).body.data).toEqual([]);
    const events = await app.get('/v1/events', keyA);
    expect(events.status).toBe(200);
    expect(events.body.data.map((e: any) => e.id)).not.toContain(b.Event);
  });

  it("catalog lists are per clinic, and another clinic's species filters to nothing", async () => {
    for (const r of restRoutes.filter((x) => x.path.startsWith('/catalog') && !x.path.includes(':'))) {
      const a = (await app.get(`/v1${r.path}`, keyA)).body.data.map((x: any) => x.id);
      const bb = (await app.get(`/v1${r.path}`, keyB)).body.data.map((x: any) => x.id);
      expect(a.filter((id: string) => bb.includes(id))).toEqual([]);
    }
    expect((await app.get(`/v1/catalog/breeds?species_id=${b.species}`, keyA)).body.data).toEqual([]);
  });

  it("a filter on another clinic's appointment finds nothing", async () => {
    const own = (await app.get('/v1/patients', keyA)).body.data[0].id;
    expect(
      (await app.get(`/v1/patients/${own}/treatments?appointment_id=${b.appointment}`, keyA)).body.data,
    ).toEqual([]);
  });

  it("GraphQL: patient() and node() are null for another clinic's id", async () => {
    const r = await app.gql(
      'query($id: ID!) { patient(id: $id) { id } node(id: $id) { id } }',
      { id: b.patient },
      keyA,
    );
    expect(r.body.data).toEqual({ patient: null, node: null });
    const own = await app.gql(
      'query($id: ID!) { node(id: $id) { id ... on Patient { firstName } } }',
      { id: b.patient },
      keyB,
    );
    expect(own.body.data.node).toEqual({ id: b.patient, firstName: 'Bella' });
  });
});

describe("the clinics' shared read handles (clinicReader)", () => {
  it('are one per clinic, bound to it, and hold no entities after every route above', () => {
    const handles = clinicReaders(app.orm.em);
    const clinics = handles.map((em) => em.getFilterParams<{ clinicId: number }>('tenant')?.clinicId);
    expect(clinics).toContain(clinicA);
    expect(new Set(clinics).size).toBe(handles.length);
    for (const em of handles) expect(em.getUnitOfWork().getIdentityMap().values()).toEqual([]);
  });
});
