import { beforeAll, describe, expect, it } from 'vitest';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * Patients written at dental clinics (POST/PATCH /v1/patients → patient.*) and clients and animals
 * at veterinary ones (POST/PATCH /v1/clients and /v1/animals → animal.*): each event's data equals
 * the GET of the object; a client's change records animal.updated for each of its animals; what
 * the API writes is found by phone and name search; each route is a 404 at the other kind.
 */
let app: TestApp;
let dental: { clinicId: number; key: string };
let vet: { clinicId: number; key: string };
let dentalRead: string;
let otherDental: string;
let otherVet: string;
let ids: { status: string; dog: string; cat: string; beagle: string; siamese: string; vetStatus: string };
let foreignClient: string;

beforeAll(async () => {
  app = await startTestApp();
  dental = await app.clinicWithKey('dental', ['patients:write', 'patients:read']);
  dentalRead = await app.key(dental.clinicId, ['patients:read', 'webhooks:manage']);
  const cat = await fixtures(app.orm, dental.clinicId).catalog();
  vet = await app.clinicWithKey('veterinary', ['patients:write', 'patients:read']);
  const vcat = await fixtures(app.orm, vet.clinicId).catalog();
  ids = {
    status: `pst_${cat.patientStatus.id}`,
    vetStatus: `pst_${vcat.patientStatus.id}`,
    dog: `spc_${vcat.species.id}`,
    cat: `spc_${vcat.cat.id}`,
    beagle: `brd_${vcat.breed.id}`,
    siamese: `brd_${vcat.catBreed.id}`,
  };
  otherDental = (await app.clinicWithKey('dental', ['patients:write', 'patients:read'])).key;
  const ov = await app.clinicWithKey('veterinary', ['patients:write', 'patients:read']);
  otherVet = ov.key;
  foreignClient = `own_${(await fixtures(app.orm, ov.clinicId).owner({ first: 'Far', last: 'Away' })).id}`;
});

async function eventsOf(clinicId: number, objectId: string) {
  return app.orm.em
    .fork()
    .getConnection()
    .execute<{ type: string; scope: string; data: any }[]>(
      `select "type", "scope", "data" from "event" where "clinic_id" = ? and "data"->>'id' = ? order by "id"`,
      [clinicId, objectId],
    );
}

const patientGet = async (id: string) =>
  (await app.get(`/v1/patients/${id}?response_format=detailed`, dentalRead)).body.data;
const animalGet = async (id: string) =>
  (await app.get(`/v1/animals/${id}?response_format=detailed&include=owner,species`, vet.key)).body.data;

let n = 0;
const newPatient = (body: Record<string, unknown> = {}, key = dental.key, headers = {}) =>
  app.post('/v1/patients', { first_name: 'Dana', last_name: `Cohen${++n}`, ...body }, key, headers);

describe('dental patients', () => {
  it('201; phone and email normalised; patient.created carries the GET body; phone and name search find it', async () => {
    const r = await newPatient({
      last_name: 'Avrahami',
      phone: '+972 52-000-1122',
      email: 'Dana.A@Example.com',
      gender: 'female',
      birth_date: '1990-05-01',
      status_id: ids.status,
      address: { line1: '1 Herzl St', city: 'Tel Aviv', country: 'IL' },
      contacts: [{ type: 'phone', value: '03-555-0100', label: 'work' }],
      id_number: '123456782',
    });
    expect(r.status).toBe(201);
    const p = r.body.data;
    expect(p).toMatchObject({
      first_name: 'Dana',
      last_name: 'Avrahami',
      phone: '0520001122',
      email: 'Dana.A@Example.com',
      gender: 'female',
      birth_date: '1990-05-01',
      status: { id: ids.status },
      address: { line1: '1 Herzl St', line2: null, city: 'Tel Aviv', postal_code: null, country: 'IL' },
      // Contacts are stored and shown in E.164, as the seeded ones.
      contacts: [{ type: 'phone', value: '+97235550100', label: 'work' }],
      id_number: '123456782',
      balance: null,
    });
    expect(p.id).toMatch(/^pat_\d+$/);
    expect(r.headers.get('etag')).toBe(`"${new Date(p.updated_at).getTime()}"`);
    const events = await eventsOf(dental.clinicId, p.id);
    expect(events.map((e) => [e.type, e.scope])).toEqual([['patient.created', 'patients:read']]);
    expect(events[0].data).toEqual(await patientGet(p.id));
    expect(events[0].data).toEqual(p);

    const byPhone = await app.get('/v1/patients?phone=052-000-1122', dentalRead);
    expect(byPhone.body.data.map((x: any) => x.id)).toEqual([p.id]);
    const byEmail = await app.get('/v1/patients?email=dana.a@example.com', dentalRead);
    expect(byEmail.body.data.map((x: any) => x.id)).toEqual([p.id]);
    for (const q of ['avrah', 'Dana Avra', 'Avrahami Dana'])
      expect(
        (await app.get(`/v1/patients?query=${encodeURIComponent(q)}`, dentalRead)).body.data.map(
          (x: any) => x.id,
        ),
        q,
      ).toEqual([p.id]);
  });

  it('422 naming the field: no name, bad values, unknown fields (top level and nested), foreign ids', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ first_name: undefined, last_name: undefined }, 'first_name'],
      [{ first_name: null, last_name: null }, 'first_name'],
      [{ first_name: '  ' }, 'first_name'],
      [{ gender: 'other' }, 'gender'],
      [{ birth_date: '1990-02-30' }, 'birth_date'],
      [{ birth_date: '01/05/1990' }, 'birth_date'],
      [{ phone: 'call me' }, 'phone'],
      [{ email: 'not-an-email' }, 'email'],
      [{ status_id: 'pst_x' }, 'status_id'],
      [{ status_id: 'pst_999999' }, 'status_id'],
      [{ address: { line1: 5 } }, 'address.line1'],
      [{ address: { zip: '1' } }, 'address.zip'],
      [{ contacts: [{ type: 'fax', value: '1' }] }, 'contacts[0].type'],
      [{ contacts: [{ type: 'phone', value: 'nope' }] }, 'contacts[0].value'],
      [{ colour: 'red' }, 'colour'],
      [{ balance: 5 }, 'balance'],
    ];
    for (const [body, param] of cases) {
      const r = await newPatient(body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.error, JSON.stringify(body)).toMatchObject({ code: 'validation_failed', param });
    }
  });

  it('403 without patients:write; 404 at a veterinary clinic; another clinic cannot change it', async () => {
    const r = await newPatient({}, dentalRead);
    expect(r.status).toBe(403);
    expect(r.body.error.required_scopes).toEqual(['patients:write']);
    expect((await newPatient({}, vet.key)).status).toBe(404);
    const p = (await newPatient()).body.data;
    expect((await app.send('PATCH', `/v1/patients/${p.id}`, { first_name: 'X' }, vet.key)).status).toBe(404);
    expect((await app.send('PATCH', `/v1/patients/${p.id}`, { first_name: 'X' }, otherDental)).status).toBe(
      404,
    );
    expect((await app.get(`/v1/patients/${p.id}`, otherDental)).status).toBe(404);
    expect((await patientGet(p.id)).first_name).toBe('Dana');
  });

  it('Idempotency-Key: the same body answers the first result and creates once; another body is a 409', async () => {
    const headers = { 'idempotency-key': 'create-patient-1' };
    const body = { first_name: 'Once', last_name: 'Only' };
    const a = await app.post('/v1/patients', body, dental.key, headers);
    const b = await app.post('/v1/patients', body, dental.key, headers);
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(b.body).toEqual(a.body);
    expect((await eventsOf(dental.clinicId, a.body.data.id)).length).toBe(1);
    expect((await app.get('/v1/patients?query=once%20only', dentalRead)).body.data.length).toBe(1);
    const c = await app.post('/v1/patients', { ...body, last_name: 'Twice' }, dental.key, headers);
    expect(c.status).toBe(409);
    expect(c.body.error.param).toBe('Idempotency-Key');
  });

  it('PATCH: absent keeps, null clears, names re-folded for search; patient.updated = GET; If-Match 412', async () => {
    const created = await newPatient({ phone: '0501112233', email: 'a@example.com', gender: 'male' });
    const p = created.body.data;
    app.clock.set('2026-11-01T11:00:00Z');
    const r = await app.send(
      'PATCH',
      `/v1/patients/${p.id}`,
      { last_name: 'Mizrahi', email: null, status_id: ids.status },
      dental.key,
      { 'if-match': created.headers.get('etag') as string },
    );
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      first_name: 'Dana',
      last_name: 'Mizrahi',
      phone: '0501112233',
      email: null,
      gender: 'male',
      status: { id: ids.status },
      updated_at: '2026-11-01T11:00:00.000Z',
    });
    const events = await eventsOf(dental.clinicId, p.id);
    expect(events.map((e) => e.type)).toEqual(['patient.created', 'patient.updated']);
    expect(events[1].data).toEqual(await patientGet(p.id));
    const found = await app.get('/v1/patients?query=mizra', dentalRead);
    expect(found.body.data.map((x: any) => x.id)).toEqual([p.id]);
    expect((await app.get('/v1/patients?email=a@example.com', dentalRead)).body.data).toEqual([]);

    const stale = await app.send('PATCH', `/v1/patients/${p.id}`, { gender: null }, dental.key, {
      'if-match': created.headers.get('etag') as string,
    });
    expect(stale.status).toBe(412);
    expect(stale.body.error.code).toBe('precondition_failed');
    expect((await patientGet(p.id)).gender).toBe('male');
    const noName = await app.send(
      'PATCH',
      `/v1/patients/${p.id}`,
      { first_name: null, last_name: null },
      dental.key,
    );
    expect(noName.status).toBe(422);
    expect(noName.body.error.param).toBe('first_name');
    expect((await app.send('PATCH', '/v1/patients/pat_999999', { gender: null }, dental.key)).status).toBe(
      404,
    );
  });

  it('GraphQL: createPatient and updatePatient run the same writes', async () => {
    const r = await app.gql(
      'mutation($input: CreatePatientInput!) { createPatient(input: $input) { patient { id firstName phone address { city } } } }',
      { input: { firstName: 'Gal', phone: '050-999-8877', address: { city: 'Haifa' } } },
      dental.key,
    );
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.createPatient.patient).toMatchObject({
      firstName: 'Gal',
      phone: '0509998877',
      address: { city: 'Haifa' },
    });
    const bad = await app.gql(
      'mutation($id: ID!) { updatePatient(input: { id: $id, birthDate: "1990-02-30" }) { patient { id } } }',
      { id: r.body.data.createPatient.patient.id },
      dental.key,
    );
    expect(bad.body.errors[0].extensions).toMatchObject({
      code: 'validation_failed',
      param: 'input.birthDate',
    });
  });

  it("GraphQL's refusals name the input's fields as written; REST's 422 for the same input is unchanged", async () => {
    const create =
      'mutation($input: CreatePatientInput!) { createPatient(input: $input) { patient { id } } }';
    // [REST body, the same as a GraphQL input, REST's param, GraphQL's param, REST's message]
    const cases: [Record<string, unknown>, Record<string, unknown>, string, string, string][] = [
      [
        { birth_date: '1990-02-30' },
        { birthDate: '1990-02-30' },
        'birth_date',
        'input.birthDate',
        "birth_date is not a date on the calendar ('1990-02-30').",
      ],
      [
        { contacts: [{ type: 'phone', value: 'nope' }] },
        { contacts: [{ type: 'PHONE', value: 'nope' }] },
        'contacts[0].value',
        'input.contacts[0].value',
        "contacts[0].value: 'nope' is not a phone number.",
      ],
      [
        { address: { postal_code: 'x'.repeat(500) } },
        { address: { postalCode: 'x'.repeat(500) } },
        'address.postal_code',
        'input.address.postalCode',
        'address.postal_code: Too big: expected string to have <=20 characters',
      ],
      [
        { status_id: 'pst_999999' },
        { statusId: 'pst_999999' },
        'status_id',
        'input.statusId',
        'status_id: no such record at this clinic.',
      ],
    ];
    for (const [body, input, restParam, gqlParam, restMessage] of cases) {
      const rest = await newPatient(body);
      expect(rest.status, restParam).toBe(422);
      const { request_id: _, ...error } = rest.body.error;
      expect(Object.keys(rest.body.error), restParam).toEqual([
        'code',
        'message',
        'request_id',
        'doc_url',
        'param',
      ]);
      expect(error, restParam).toEqual({
        code: 'validation_failed',
        message: restMessage,
        doc_url: '/errors#validation_failed',
        param: restParam,
      });
      const gql = await app.gql(
        create,
        { input: { firstName: 'Dana', lastName: 'Gql', ...input } },
        dental.key,
      );
      expect(gql.body.errors?.[0]?.extensions, gqlParam).toMatchObject({
        code: 'validation_failed',
        param: gqlParam,
      });
      // The same sentence, naming the field as the caller wrote it.
      expect(gql.body.errors[0].message).toBe(gqlParam + error.message.slice(restParam.length));
    }

    // The headers' refusals name the input's idempotencyKey and expectedUpdatedAt.
    const keyed = { firstName: 'Key', lastName: 'Once', idempotencyKey: 'gql-names-1' };
    expect((await app.gql(create, { input: keyed }, dental.key)).body.errors).toBeUndefined();
    const reused = await app.gql(create, { input: { ...keyed, lastName: 'Twice' } }, dental.key);
    expect(reused.body.errors[0].extensions).toMatchObject({
      code: 'conflict',
      param: 'input.idempotencyKey',
    });
    expect(reused.body.errors[0].message).toContain('input.idempotencyKey');
    expect(reused.body.errors[0].message).not.toContain('Idempotency-Key');
    const badKey = await app.gql(create, { input: { ...keyed, idempotencyKey: 'with space' } }, dental.key);
    expect(badKey.body.errors[0].extensions).toMatchObject({
      code: 'validation_failed',
      param: 'input.idempotencyKey',
    });
    const restReused = await app.post('/v1/patients', { first_name: 'Key', last_name: 'Twice' }, dental.key, {
      'idempotency-key': 'rest-names-1',
    });
    expect(restReused.status).toBe(201);
    const restConflict = await app.post(
      '/v1/patients',
      { first_name: 'Key', last_name: 'Thrice' },
      dental.key,
      {
        'idempotency-key': 'rest-names-1',
      },
    );
    expect(restConflict.body.error).toMatchObject({
      code: 'conflict',
      param: 'Idempotency-Key',
      message: 'This Idempotency-Key was used with another request body; use a new key for a new request.',
    });

    const id = (await newPatient()).body.data.id;
    const update =
      'mutation($input: UpdatePatientInput!) { updatePatient(input: $input) { patient { id } } }';
    const stale = await app.gql(
      update,
      { input: { id, expectedUpdatedAt: '2020-01-01T00:00:00Z', gender: 'MALE' } },
      dental.key,
    );
    expect(stale.body.errors[0].extensions).toMatchObject({
      code: 'precondition_failed',
      param: 'input.expectedUpdatedAt',
    });
    expect(stale.body.errors[0].message).not.toContain('If-Match');
    // Other snake_case names in a sentence become GraphQL's too; REST's sentence stays.
    expect(stale.body.errors[0].message).toMatch(
      /the version input\.expectedUpdatedAt names \(its updatedAt is now /,
    );
    const noName = await app.gql(update, { input: { id, firstName: null, lastName: null } }, dental.key);
    expect(noName.body.errors[0]).toMatchObject({
      message: 'A patient needs a firstName or a lastName.',
      extensions: { code: 'validation_failed', param: 'input.firstName' },
    });
    const restNoName = await app.send(
      'PATCH',
      `/v1/patients/${id}`,
      { first_name: null, last_name: null },
      dental.key,
    );
    expect(restNoName.body.error).toMatchObject({
      message: 'A patient needs a first_name or a last_name.',
      param: 'first_name',
    });
    const notADate = await app.gql(update, { input: { id, expectedUpdatedAt: 'yesterday' } }, dental.key);
    expect(notADate.body.errors[0].extensions).toMatchObject({
      code: 'validation_failed',
      param: 'input.expectedUpdatedAt',
    });
    expect(notADate.body.errors[0].message).toMatch(/^input\.expectedUpdatedAt /);
    const restStale = await app.send('PATCH', `/v1/patients/${id}`, { gender: 'male' }, dental.key, {
      'if-match': '"1577836800000"',
    });
    expect(restStale.body.error).toMatchObject({ code: 'precondition_failed', param: 'If-Match' });
    expect(restStale.body.error.message).toMatch(/the version If-Match names \(its updated_at is now /);
  });

  it('an enum value outside the set is a GraphQL validation error in our error shape', async () => {
    const r = await app.gql(
      'mutation { createPatient(input: {firstName: "Dana", lastName: "Enum", gender: OTHER}) { patient { id } } }',
      {},
      dental.key,
    );
    expect(r.body.data ?? null).toBeNull();
    expect(r.body.errors).toHaveLength(1);
    expect(r.body.errors[0].extensions).toMatchObject({ code: 'invalid_request' });
    expect(r.body.errors[0].extensions.request_id).toMatch(/^req_/);
    expect(r.body.errors[0].message).toMatch(/Value "OTHER" does not exist in "Gender" enum/);
    // As a variable, and in REST's spelling: the same refusal, naming the variable.
    const asVariable = await app.gql(
      'mutation($input: CreatePatientInput!) { createPatient(input: $input) { patient { id } } }',
      { input: { firstName: 'Dana', lastName: 'Enum', gender: 'female' } },
      dental.key,
    );
    expect(asVariable.body.errors[0].extensions).toMatchObject({ code: 'invalid_request' });
    expect(asVariable.body.errors[0].message).toMatch(/"female".*Gender/);
    expect(
      (await app.get('/v1/patients?query=Dana%20Enum', dentalRead)).body.data,
      'nothing written',
    ).toEqual([]);
  });
});

describe('veterinary clients and animals', () => {
  const newClient = (body: Record<string, unknown> = {}, key = vet.key, headers = {}) =>
    app.post('/v1/clients', { first_name: 'Noa', last_name: 'Levi', ...body }, key, headers);
  const newAnimal = (client: string, body: Record<string, unknown> = {}, key = vet.key, headers = {}) =>
    app.post(
      '/v1/animals',
      { client_id: client, first_name: 'Rex', species_id: ids.dog, ...body },
      key,
      headers,
    );

  it('a client: 201 with the Client resource, no event; GET /v1/clients/{id} and the list answer it', async () => {
    const r = await newClient({
      phone: '054-123-0000',
      email: 'noa@example.com',
      address: { line1: '5 Rothschild Blvd', city: 'Tel Aviv' },
    });
    expect(r.status).toBe(201);
    const c = r.body.data;
    expect(c).toMatchObject({
      first_name: 'Noa',
      last_name: 'Levi',
      phone: '0541230000',
      email: 'noa@example.com',
      address: {
        line1: '5 Rothschild Blvd',
        line2: null,
        city: 'Tel Aviv',
        postal_code: null,
        country: null,
      },
    });
    expect(c.id).toMatch(/^own_\d+$/);
    expect(await eventsOf(vet.clinicId, c.id)).toEqual([]);
    expect((await app.get(`/v1/clients/${c.id}?response_format=detailed`, vet.key)).body.data).toEqual(c);
    expect((await app.get(`/v1/clients/${c.id}`, vet.key)).body.data.address).toBeUndefined();
    const list = await app.get('/v1/clients?limit=100&response_format=detailed', vet.key);
    expect(list.status).toBe(200);
    expect(list.body.data).toContainEqual(c);
    expect((await app.get(`/v1/clients/${c.id}`, otherVet)).status).toBe(404);
  });

  it('an animal: 201 with owner and species; the client’s phone copied; animal.created = GET /v1/animals/{id}', async () => {
    const c = (await newClient({ phone: '054-222-3344', email: 'Owner@Example.com' })).body.data;
    const r = await newAnimal(c.id, {
      breed_id: ids.beagle,
      gender: 'male',
      birth_date: '2020-05-01',
      status_id: ids.vetStatus,
    });
    expect(r.status).toBe(201);
    const a = r.body.data;
    expect(a).toMatchObject({
      first_name: 'Rex',
      last_name: null,
      phone: '0542223344',
      email: 'Owner@Example.com',
      gender: 'male',
      birth_date: '2020-05-01',
      status: { id: ids.vetStatus },
      owner: { id: c.id, first_name: 'Noa', phone: '0542223344' },
      species: { id: ids.dog, name: 'Dog' },
    });
    const events = await eventsOf(vet.clinicId, a.id);
    expect(events.map((e) => [e.type, e.scope])).toEqual([['animal.created', 'patients:read']]);
    expect(events[0].data).toEqual(await animalGet(a.id));
    expect(events[0].data).toEqual(
      (await app.get(`/v1/patients/${a.id}?response_format=detailed&include=owner,species`, vet.key)).body
        .data,
    );
    expect(events[0].data).toEqual(a);
    const byPhone = await app.get('/v1/patients?phone=0542223344', vet.key);
    expect(byPhone.body.data.map((x: any) => x.id)).toEqual([a.id]);
    const animals = await app.get('/v1/animals?limit=100&include=owner', vet.key);
    expect(animals.body.data.map((x: any) => x.id)).toContain(a.id);
    expect((await app.get(`/v1/animals?client_id=${c.id}`, vet.key)).body.data.map((x: any) => x.id)).toEqual(
      [a.id],
    );
    // A breed alone sets its species.
    const cat = await newAnimal(c.id, { first_name: 'Mitzi', species_id: undefined, breed_id: ids.siamese });
    expect(cat.body.data.species).toEqual({ id: ids.cat, name: 'Cat' });
  });

  it('422s: client_id required and the clinic’s own, breed of another species, unknown fields', async () => {
    const c = (await newClient()).body.data;
    const cases: [Record<string, unknown>, string][] = [
      [{ client_id: undefined }, 'client_id'],
      [{ client_id: 'pat_1' }, 'client_id'],
      [{ client_id: foreignClient }, 'client_id'],
      [{ first_name: undefined }, 'first_name'],
      [{ breed_id: ids.siamese }, 'breed_id'],
      [{ species_id: 'spc_999999' }, 'species_id'],
      [{ last_name: 'Levi' }, 'last_name'],
      [{ phone: '0501234567' }, 'phone'],
    ];
    for (const [body, param] of cases) {
      const r = await newAnimal(c.id, body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.error, JSON.stringify(body)).toMatchObject({ code: 'validation_failed', param });
    }
    for (const [body, param] of [
      [{ first_name: null, last_name: null }, 'first_name'],
      [{ phone: 'x' }, 'phone'],
      [{ animals: [] }, 'animals'],
    ] as const) {
      const r = await newClient(body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.error.param).toBe(param);
    }
    const a = (await newAnimal(c.id)).body.data;
    const r = await app.send('PATCH', `/v1/animals/${a.id}`, { breed_id: ids.siamese }, vet.key);
    expect(r.status).toBe(422);
    expect(r.body.error.param).toBe('breed_id');
  });

  it('403 without patients:write; every vet route a 404 at a dental clinic and the dental ones at a vet clinic', async () => {
    const readOnly = await app.key(vet.clinicId, ['patients:read']);
    const c = await newClient({}, readOnly);
    expect(c.status).toBe(403);
    expect(c.body.error.required_scopes).toEqual(['patients:write']);
    const client = (await newClient()).body.data;
    const animal = (await newAnimal(client.id)).body.data;
    expect((await newAnimal(client.id, {}, readOnly)).status).toBe(403);
    expect((await newClient({}, dental.key)).status).toBe(404);
    expect((await newAnimal(client.id, {}, dental.key)).status).toBe(404);
    expect(
      (await app.send('PATCH', `/v1/clients/${client.id}`, { first_name: 'X' }, dental.key)).status,
    ).toBe(404);
    expect(
      (await app.send('PATCH', `/v1/animals/${animal.id}`, { first_name: 'X' }, dental.key)).status,
    ).toBe(404);
    for (const path of ['/v1/animals', `/v1/animals/${animal.id}`, '/v1/clients', `/v1/clients/${client.id}`])
      expect((await app.get(path, dentalRead)).status, path).toBe(404);
    expect((await app.send('PATCH', `/v1/patients/${animal.id}`, { first_name: 'X' }, vet.key)).status).toBe(
      404,
    );
    // Another veterinary clinic sees neither.
    expect((await app.send('PATCH', `/v1/clients/${client.id}`, { first_name: 'X' }, otherVet)).status).toBe(
      404,
    );
    expect((await app.send('PATCH', `/v1/animals/${animal.id}`, { first_name: 'X' }, otherVet)).status).toBe(
      404,
    );
    expect((await app.get(`/v1/animals/${animal.id}`, otherVet)).status).toBe(404);
  });

  it('a client’s change records animal.updated for each of its animals, showing the new owner; phone search follows', async () => {
    const c = (await newClient({ phone: '054-555-0001', email: 'old@example.com' })).body.data;
    const rex = (await newAnimal(c.id)).body.data;
    const bella = (await newAnimal(c.id, { first_name: 'Bella' })).body.data;
    const otherOwner = (await newClient({ first_name: 'Someone' })).body.data;
    const bystander = (await newAnimal(otherOwner.id, { first_name: 'Kitty' })).body.data;
    const r = await app.send(
      'PATCH',
      `/v1/clients/${c.id}`,
      { last_name: 'Peretz', phone: '054-555-0002', email: 'New@Example.com', address: { city: 'Haifa' } },
      vet.key,
    );
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      last_name: 'Peretz',
      phone: '0545550002',
      address: { city: 'Haifa' },
    });
    expect(await eventsOf(vet.clinicId, c.id)).toEqual([]);
    for (const a of [rex, bella]) {
      const events = await eventsOf(vet.clinicId, a.id);
      expect(
        events.map((e) => e.type),
        a.first_name,
      ).toEqual(['animal.created', 'animal.updated']);
      expect(events[1].data.owner).toMatchObject({ id: c.id, last_name: 'Peretz', phone: '0545550002' });
      expect(events[1].data).toMatchObject({ phone: '0545550002', email: 'New@Example.com' });
      expect(events[1].data).toEqual(await animalGet(a.id));
    }
    expect((await eventsOf(vet.clinicId, bystander.id)).map((e) => e.type)).toEqual(['animal.created']);
    const byPhone = await app.get('/v1/patients?phone=0545550002', vet.key);
    expect(byPhone.body.data.map((x: any) => x.id).sort()).toEqual([rex.id, bella.id].sort());
    expect((await app.get('/v1/patients?phone=0545550001', vet.key)).body.data).toEqual([]);
    expect((await app.get('/v1/patients?email=new@example.com', vet.key)).body.data.length).toBe(2);

    // Moving an animal to another client takes that client's phone.
    const moved = await app.send(
      'PATCH',
      `/v1/animals/${bella.id}`,
      { client_id: otherOwner.id, first_name: 'Belle' },
      vet.key,
    );
    expect(moved.status).toBe(200);
    expect(moved.body.data).toMatchObject({ first_name: 'Belle', phone: null, owner: { id: otherOwner.id } });
    const events = await eventsOf(vet.clinicId, bella.id);
    expect(events.at(-1)?.type).toBe('animal.updated');
    expect(events.at(-1)?.data).toEqual(await animalGet(bella.id));
    expect((await app.get('/v1/patients?query=belle', vet.key)).body.data.map((x: any) => x.id)).toEqual([
      bella.id,
    ]);
  });

  it('If-Match on clients and animals; Idempotency-Key on POST /v1/clients', async () => {
    const created = await newClient({}, vet.key, { 'idempotency-key': 'client-1' });
    const again = await newClient({}, vet.key, { 'idempotency-key': 'client-1' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(created.body);
    const etag = created.headers.get('etag') as string;
    const ok = await app.send('PATCH', `/v1/clients/${created.body.data.id}`, { email: 'a@b.co' }, vet.key, {
      'if-match': etag,
    });
    expect(ok.status).toBe(200);
    const stale = await app.send(
      'PATCH',
      `/v1/clients/${created.body.data.id}`,
      { email: 'c@d.co' },
      vet.key,
      {
        'if-match': etag,
      },
    );
    expect(stale.status).toBe(412);
    const a = await newAnimal(created.body.data.id);
    const aTag = a.headers.get('etag') as string;
    expect(
      (
        await app.send('PATCH', `/v1/animals/${a.body.data.id}`, { gender: 'female' }, vet.key, {
          'if-match': aTag,
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await app.send('PATCH', `/v1/animals/${a.body.data.id}`, { gender: 'male' }, vet.key, {
          'if-match': aTag,
        })
      ).status,
    ).toBe(412);
    expect((await animalGet(a.body.data.id)).gender).toBe('female');
  });
});
