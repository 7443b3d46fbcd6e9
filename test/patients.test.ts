import { beforeAll, describe, expect, it } from 'vitest';
import { readScopes } from '../src/auth/scopes.ts';
import { Appointment, Patient } from '../src/entities/index.ts';
import { Patient as PatientResource } from '../src/services/patients/patient.resource.ts';
import { CORE, fieldsIn } from '../src/services/resource.ts';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';

let app: TestApp;
let key: string;
let f: ReturnType<typeof fixtures>;
let cat: Awaited<ReturnType<ReturnType<typeof fixtures>['catalog']>>;
const ids: Record<string, string> = {};

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('dental', readScopes);
  key = c.key;
  f = fixtures(app.orm, c.clinicId);
  cat = await f.catalog();
  const eva = await f.patient({
    first: 'Éva',
    last: 'Szabó',
    phone: '050-123-4567',
    email: 'Eva.Szabo@Example.com',
    status: cat.patientStatus,
  });
  const dana = await f.patient({ first: 'Dana', last: 'Cohen', phone: '+972 52 765 4321' });
  const danny = await f.patient({ first: 'Danny', last: 'Evans', phone: null });
  ids.eva = `pat_${eva.id}`;
  ids.dana = `pat_${dana.id}`;
  ids.danny = `pat_${danny.id}`;
  const a1 = await f.appointment(
    eva,
    { branch: cat.branch, type: cat.type, status: cat.status, provider: cat.provider },
    100,
  );
  await f.appointment(eva, { branch: cat.branch }, 200);
  await f.appointment(eva, { branch: cat.branch }, 300);
  ids.a1 = `appt_${a1.id}`;
  await f.treatment(eva, { menuItem: cat.menuItem, appointment: a1 }, 110);
  await f.treatment(eva, { menuItem: cat.menuItem }, 210);
  const pay = await f.payment(eva, cat.account, 120);
  await f.payment(eva, cat.account, 130, pay);
});

const get = (path: string, k: string | null = key) => app.get(path, k);
const names = (body: any) => body.data.map((p: any) => p.first_name);

describe('GET /v1/patients', () => {
  it('returns a page in the spec shape, concise by default', async () => {
    const r = await get('/v1/patients');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['data', 'next_cursor']);
    expect(r.body.next_cursor).toBeNull();
    expect(names(r.body)).toEqual(['Éva', 'Dana', 'Danny']);
    const eva = r.body.data[0];
    // Concise: the core fields of the definition (the spec's, and any added since).
    expect(Object.keys(eva).sort()).toEqual(fieldsIn(PatientResource, CORE).sort());
    expect(eva).toMatchObject({
      id: ids.eva,
      first_name: 'Éva',
      last_name: 'Szabó',
      phone: '0501234567',
      email: 'Eva.Szabo@Example.com',
      gender: 'female',
      birth_date: expect.stringMatching(/^\d{4}-\d\d-\d\d$/),
      status: { id: expect.stringMatching(/^pst_\d+$/), name: 'Active', color: '#0f0' },
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    for (const k of ['address', 'contacts', 'balance', 'id_number', 'owner', 'species'])
      expect(eva).not.toHaveProperty(k);
  });

  it('response_format=detailed adds address, contacts, balance and id_number', async () => {
    const r = await get('/v1/patients?response_format=detailed&limit=1');
    expect(r.status).toBe(200);
    expect(r.body.data[0]).toMatchObject({
      address: { line1: expect.any(String), city: 'Tel Aviv', country: 'IL' },
      contacts: [{ type: 'phone', value: '+972501111111', label: 'work' }],
      balance: 12.5,
      id_number: expect.any(String),
    });
    expect((await get('/v1/patients?response_format=verbose')).status).toBe(422);
  });

  it.each([
    ['0501234567'],
    ['050-123-4567'],
    ['050 123 4567'],
    ['%2B972501234567'],
    ['%2B972-50-123-4567'],
    ['972501234567'],
    ['+972501234567'], // "+" decoded as a space by the query string
  ])('finds by phone %s whatever the separators', async (phone) => {
    const r = await get(`/v1/patients?phone=${phone}`);
    expect(r.status).toBe(200);
    expect(r.body.data.map((p: any) => p.id)).toEqual([ids.eva]);
  });

  it('an unparseable phone is a 422, an unknown one an empty page', async () => {
    expect((await get('/v1/patients?phone=abc')).status).toBe(422);
    expect((await get('/v1/patients?phone=0509999999')).body).toEqual({ data: [], next_cursor: null });
  });

  it('finds by email case-insensitively', async () => {
    const r = await get('/v1/patients?email=eva.szabo%40example.COM');
    expect(r.body.data.map((p: any) => p.id)).toEqual([ids.eva]);
  });

  it.each([
    ['eva', ['Éva', 'Danny']],
    ['ÉVA', ['Éva', 'Danny']],
    ['éva sz', ['Éva']],
    ['szabo', ['Éva']],
    ['Szab', ['Éva']],
    ['eva szabo', ['Éva']],
    ['szabo eva', ['Éva']],
    ['dan', ['Dana', 'Danny']],
    ['dana cohen', ['Dana']],
    ['cohen', ['Dana']],
    ['evans', ['Danny']],
    ['va', []],
    ['%', []],
  ])('name search %s', async (q, expected) => {
    const r = await get(`/v1/patients?query=${encodeURIComponent(q)}`);
    expect(r.status).toBe(200);
    expect(names(r.body)).toEqual(expected);
  });

  it('combines filters with AND', async () => {
    expect(names((await get('/v1/patients?query=dan&phone=0527654321')).body)).toEqual(['Dana']);
    expect(names((await get('/v1/patients?query=eva&phone=0527654321')).body)).toEqual([]);
  });
});

describe('hostile input', () => {
  it('an unknown query parameter is a 422 naming it, after authentication', async () => {
    const r = await get('/v1/patients?qeury=dan');
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: 'validation_failed', param: 'qeury' });
    expect(r.body.error.message).toMatch(/takes: phone, email, query/);
    expect((await get('/v1/catalog/branches?limit=5')).body.error).toMatchObject({ param: 'limit' });
    expect((await get('/v1/patients?qeury=dan', null)).status).toBe(401);
    expect((await get(`/v1/patients/${ids.eva}/treatments?limit=5`)).status).toBe(200);
  });

  it.each(['response_format', 'appointment_id', 'query', 'cursor', 'include'])(
    'an empty %s is a 422 naming it',
    async (param) => {
      const path = param === 'appointment_id' ? `/v1/patients/${ids.eva}/treatments` : '/v1/patients';
      const r = await get(`${path}?${param}=`);
      expect(r.status).toBe(422);
      expect(r.body.error).toMatchObject({ code: 'validation_failed', param });
      expect(r.body.error.message).toMatch(/is empty/);
    },
  );

  it('a parameter given twice is a 422 naming it, unless it is a list', async () => {
    const r = await get('/v1/patients?phone=050&phone=052');
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: 'validation_failed', param: 'phone' });
    expect(r.body.error.message).toMatch(/more than once/);
    expect((await get('/v1/patients?include=owner&include=owner')).status).not.toBe(422);
  });

  it.each(['query', 'email', 'phone'])('a NUL byte in %s is a 422 naming it', async (param) => {
    const r = await get(`/v1/patients?${param}=a%00b`);
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: 'validation_failed', param });
    const g = await app.gql(
      `query($v: String) { patients(${param}: $v) { edges { node { id } } } }`,
      { v: 'a\u0000b' },
      key,
    );
    expect(g.body.errors[0].extensions).toMatchObject({ code: 'validation_failed', param });
  });
});

describe('pagination', () => {
  it.each(['0', '101', 'abc', '-1', '1.5', '+5', '%2B5', '', '%205'])('limit=%s is a 422', async (limit) => {
    const r = await get(`/v1/patients?limit=${limit}`);
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: 'validation_failed', param: 'limit' });
  });

  it.each([
    'garbage!',
    'WyJwYXQiLDFd'.slice(0, -2),
    Buffer.from(JSON.stringify(['appt', '2026-01-01T00:00:00.000Z', 1])).toString('base64url'),
    Buffer.from(JSON.stringify(['pat', 'x'])).toString('base64url'),
    Buffer.from('{"a":1}').toString('base64url'),
    Buffer.from(JSON.stringify(['pat', 2_147_483_648])).toString('base64url'),
  ])('a tampered or foreign cursor %s is a 422', async (cursor) => {
    const r = await get(`/v1/patients?cursor=${cursor}`);
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: 'validation_failed', param: 'cursor' });
  });

  it('walks every row once across inserts and deletes between pages', async () => {
    const c = await app.clinicWithKey('dental', ['patients:read']);
    const g = fixtures(app.orm, c.clinicId);
    const made = [];
    for (let i = 0; i < 7; i++) made.push(await g.patient({ first: `P${i}`, last: 'Page' }));
    const seen: string[] = [];
    let r = await app.get('/v1/patients?limit=3', c.key);
    seen.push(...names(r.body));
    // Delete the last row of the page just read and the first row of the next page; insert new rows.
    await g.em.nativeDelete(Patient, { id: { $in: [made[2].id, made[3].id] } });
    await g.patient({ first: 'P7', last: 'Page' });
    r = await app.get(`/v1/patients?limit=3&cursor=${r.body.next_cursor}`, c.key);
    seen.push(...names(r.body));
    await g.patient({ first: 'P8', last: 'Page' });
    while (r.body.next_cursor) {
      r = await app.get(`/v1/patients?limit=3&cursor=${r.body.next_cursor}`, c.key);
      seen.push(...names(r.body));
    }
    expect(seen).toEqual(['P0', 'P1', 'P2', 'P4', 'P5', 'P6', 'P7', 'P8']);
  });

  it.each([
    ['appointments', 'appt'],
    ['treatments', 'trt'],
    ['payments', 'pay'],
  ])('an edited sort value in a %s cursor is a 422, never a database error', async (list, tag) => {
    for (const sortValue of [
      'abc',
      5,
      null,
      '2026-13-45T00:00:00.000Z',
      '2026-01-01',
      '0000-01-01T00:00:00.000Z',
    ]) {
      const cursor = Buffer.from(JSON.stringify([tag, sortValue, 1])).toString('base64url');
      const r = await get(`/v1/patients/${ids.eva}/${list}?cursor=${cursor}`);
      expect(r.status, String(sortValue)).toBe(422);
      expect(r.body.error).toMatchObject({ code: 'validation_failed', param: 'cursor' });
    }
  });

  it('keyset on time plus id survives ties, inserts and deletes between pages', async () => {
    const c = await app.clinicWithKey('dental', ['patients:read', 'appointments:read']);
    const g = fixtures(app.orm, c.clinicId);
    const gc = await g.catalog();
    const p = await g.patient({ first: 'Tie', last: 'Break' });
    // Newest first: minutes 50, 40, 40, 40, 30, 20, 10; three rows share one start time.
    const made: Appointment[] = [];
    for (const m of [10, 20, 30, 40, 40, 40, 50]) made.push(await g.appointment(p, { branch: gc.branch }, m));
    const list = (cursor?: string) =>
      app.get(`/v1/patients/pat_${p.id}/appointments?limit=2${cursor ? `&cursor=${cursor}` : ''}`, c.key);
    const seen: number[] = [];
    const take = (r: any) => seen.push(...r.body.data.map((a: any) => Number(a.id.slice(5))));
    let r = await list();
    take(r); // 50 and the first of the 40s
    // Delete a tied row after the cursor and the row the cursor points at; insert one newer than
    // the cursor (must not appear) and one older (must appear).
    await g.em.nativeDelete(Appointment, { id: { $in: [made[4].id, seen[1]] } });
    const newer = await g.appointment(p, { branch: gc.branch }, 45);
    const older = await g.appointment(p, { branch: gc.branch }, 5);
    while (r.body.next_cursor) {
      r = await list(r.body.next_cursor);
      take(r);
    }
    const tied = [made[3].id, made[4].id, made[5].id].sort((a, b) => b - a);
    const expected = [
      made[6].id,
      tied[0],
      ...tied.slice(1).filter((id) => id !== made[4].id),
      made[2].id,
      made[1].id,
      made[0].id,
      older.id,
    ];
    expect(seen).toEqual(expected);
    expect(seen).not.toContain(newer.id);
  });

  it('keyset on time plus id pages appointments without gaps or repeats', async () => {
    const all = (await get(`/v1/patients/${ids.eva}/appointments?limit=100`)).body.data.map((a: any) => a.id);
    const paged: string[] = [];
    let cursor = '';
    do {
      const r = await get(`/v1/patients/${ids.eva}/appointments?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      paged.push(...r.body.data.map((a: any) => a.id));
      cursor = r.body.next_cursor ?? '';
    } while (cursor);
    expect(paged).toEqual(all);
    expect(all).toHaveLength(3);
  });
});

describe('GET /v1/patients/{id}', () => {
  it('returns {data: patient}', async () => {
    const r = await get(`/v1/patients/${ids.eva}?response_format=detailed`);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ id: ids.eva, first_name: 'Éva', balance: 12.5 });
  });

  it.each(['pat_999999', '12', 'appt_1', 'pat_abc', 'pat_1.5', 'pat_99999999999999999999'])(
    '404 for %s',
    async (id) => {
      const r = await get(`/v1/patients/${id}`);
      expect(r.status).toBe(404);
      expect(r.body.error).toMatchObject({ code: 'not_found', request_id: expect.stringMatching(/^req_/) });
    },
  );
});

describe('patient sub-resources', () => {
  it('appointments newest first, with embedded references', async () => {
    const r = await get(`/v1/patients/${ids.eva}/appointments`);
    expect(r.status).toBe(200);
    expect(r.body.data.map((a: any) => a.start)).toEqual([
      '2026-01-01T14:00:00.000Z',
      '2026-01-01T12:20:00.000Z',
      '2026-01-01T10:40:00.000Z',
    ]);
    expect(r.body.data[2]).toMatchObject({
      id: ids.a1,
      patient: { id: ids.eva, first_name: 'Éva', last_name: 'Szabó', phone: '0501234567' },
      branch: { id: expect.stringMatching(/^br_/), name: 'Main branch' },
      provider: { name: 'Dr. Levi' },
      type: { name: 'Check-up' },
      status: { name: 'Scheduled', color: '#00f' },
      end: '2026-01-01T11:10:00.000Z',
      cancelled_at: null,
    });
    expect(r.body.data[2].patient).not.toHaveProperty('owner');
  });

  it('treatments, filtered by appointment_id', async () => {
    const all = await get(`/v1/patients/${ids.eva}/treatments`);
    expect(all.body.data).toHaveLength(2);
    const one = await get(`/v1/patients/${ids.eva}/treatments?appointment_id=${ids.a1}`);
    expect(one.body.data).toHaveLength(1);
    expect(one.body.data[0]).toMatchObject({
      appointment_id: ids.a1,
      treatment: { name: 'Cleaning', code: 'D1110' },
      teeth: ['11', '12'],
    });
    expect((await get(`/v1/patients/${ids.eva}/treatments?appointment_id=appt_999999`)).body.data).toEqual(
      [],
    );
    expect((await get(`/v1/patients/${ids.eva}/treatments?appointment_id=nope`)).status).toBe(422);
    // An unknown patient is a 404 whatever the filter (the patient is looked up first).
    expect((await get('/v1/patients/pat_999999/treatments?appointment_id=nope')).status).toBe(404);
    const g = await app.gql(
      `{ patient(id: "${ids.eva}") { treatments(appointmentId: "nope") { edges { node { id } } } } }`,
      {},
      key,
    );
    // Named as the query wrote it, message included.
    expect(g.body.errors[0].extensions).toMatchObject({ code: 'validation_failed', param: 'appointmentId' });
    expect(g.body.errors[0].message).toMatch(/^appointmentId /);
  });

  it('payments and refunds, never card details', async () => {
    const r = await get(`/v1/patients/${ids.eva}/payments`);
    expect(r.status).toBe(200);
    expect(r.body.data.map((p: any) => [p.amount, p.is_refund])).toEqual([
      [50, true],
      [250, false],
    ]);
    expect(r.body.data[0]).toMatchObject({
      currency: 'ILS',
      method: { type: 'card' },
      refund_of_id: r.body.data[1].id,
    });
    const text = JSON.stringify(r.body);
    expect(text).not.toContain('4242');
    expect(text).not.toContain('SECRET');
    expect(text).not.toContain('method_details');
  });

  it.each(['appointments', 'treatments', 'payments'])('%s of an unknown patient is a 404', async (sub) => {
    expect((await get(`/v1/patients/pat_999999/${sub}`)).status).toBe(404);
  });

  it('a patient without records gets an empty page', async () => {
    expect((await get(`/v1/patients/${ids.dana}/appointments`)).body).toEqual({
      data: [],
      next_cursor: null,
    });
  });
});

describe('veterinary include=owner,species', () => {
  let vetKey: string;
  let rex: string;
  beforeAll(async () => {
    const c = await app.clinicWithKey('veterinary', readScopes);
    vetKey = c.key;
    const g = fixtures(app.orm, c.clinicId);
    const vc = await g.catalog();
    const owner = await g.owner({ first: 'Noa', last: 'Mizrahi', phone: '054-111-2222' });
    const p = await g.patient({
      first: 'Rex',
      last: 'Mizrahi',
      phone: '054-111-2222',
      owner,
      species: vc.species,
      breed: vc.breed,
    });
    rex = `pat_${p.id}`;
    await g.appointment(p, { branch: vc.branch }, 10);
    await g.treatment(p, {}, 10);
    await g.payment(p, vc.account, 10);
  });

  const owner = {
    id: expect.stringMatching(/^own_/),
    first_name: 'Noa',
    last_name: 'Mizrahi',
    phone: '0541112222',
    email: 'noa@example.com',
  };

  it('embeds owner and species in the patient on list and get', async () => {
    for (const path of ['/v1/patients?include=owner,species', `/v1/patients/${rex}?include=owner,species`]) {
      const r = await app.get(path, vetKey);
      const p = Array.isArray(r.body.data) ? r.body.data[0] : r.body.data;
      expect(p.owner).toEqual(owner);
      expect(p.species).toEqual({ id: expect.stringMatching(/^spc_/), name: 'Dog' });
    }
  });

  it('embeds only what is asked for, and accepts repeated values', async () => {
    const oo = await app.get('/v1/patients?include=owner', vetKey);
    const onlyOwner = oo.body.data[0];
    expect(onlyOwner.owner).toEqual(owner);
    expect(onlyOwner).not.toHaveProperty('species');
    const rr = await app.get('/v1/patients?include=owner&include=species', vetKey);
    const repeated = rr.body.data[0];
    expect(repeated).toHaveProperty('species');
    const none = (await app.get('/v1/patients', vetKey)).body.data[0];
    expect(none).not.toHaveProperty('owner');
    expect(none).not.toHaveProperty('species');
  });

  it.each(['appointments', 'treatments', 'payments'])(
    'embeds them in the patient summary of %s',
    async (sub) => {
      const r = await app.get(`/v1/patients/${rex}/${sub}?include=owner,species`, vetKey);
      expect(r.status).toBe(200);
      expect(r.body.data[0].patient).toMatchObject({ id: rex, owner, species: { name: 'Dog' } });
    },
  );

  it.each(['/v1/patients', `/v1/patients/pat_1`, `/v1/patients/pat_1/appointments`])(
    'an unknown include on %s is a 422',
    async (path) => {
      const r = await app.get(`${path}?include=owner,vet`, vetKey);
      expect(r.status).toBe(422);
      expect(r.body.error).toMatchObject({ code: 'validation_failed', param: 'include' });
    },
  );

  it('at a dental clinic the embedded owner and species are null', async () => {
    const r = await get('/v1/patients?include=owner,species&limit=1');
    expect(r.body.data[0]).toMatchObject({ owner: null, species: null });
  });
});
