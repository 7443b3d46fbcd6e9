import { beforeAll, describe, expect, it } from 'vitest';
import { readScopes } from '../src/auth/scopes.ts';
import { Appointment } from '../src/services/appointments/appointment.resource.ts';
import { Patient as PatientResource } from '../src/services/patients/patient.resource.ts';
import { fixtures } from './fixtures.ts';
import { graphqlOf } from './graphql-form.ts';
import { selectionOf, startTestApp, type TestApp } from './helpers.ts';

let app: TestApp;
let key: string;
const ids: Record<string, string> = {};

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('veterinary', readScopes);
  key = c.key;
  const f = fixtures(app.orm, c.clinicId);
  const cat = await f.catalog();
  const owner = await f.owner({ first: 'Noa', last: 'Levi', phone: '054-123-0000' });
  const rex = await f.patient({
    first: 'Rex',
    last: 'Levi',
    phone: '054-123-0000',
    owner,
    species: cat.species,
    status: cat.patientStatus,
  });
  const tom = await f.patient({ first: 'Tom', last: 'Levi', phone: '054-123-0000', owner, species: cat.cat });
  await f.patient({ first: 'Stray', last: null });
  for (let i = 0; i < 7; i++) await f.appointment(rex, { branch: cat.branch, status: cat.status }, i * 60);
  await f.treatment(rex, { menuItem: cat.menuItem }, 5);
  await f.payment(rex, cat.account, 5);
  ids.rex = `pat_${rex.id}`;
  ids.tom = `pat_${tom.id}`;
});

const gql = (q: string, v: Record<string, unknown> = {}, k: string | null = key) => app.gql(q, v, k);

/** Rex's summary as an appointment's `patient { id firstName lastName phone owner {…} species { name } }`. */
const rexSummary = (owner: Record<string, unknown>) => ({
  id: ids.rex,
  firstName: 'Rex',
  lastName: 'Levi',
  phone: '0541230000',
  owner,
  species: { name: 'Dog' },
});

describe('GraphQL', () => {
  it('patients is a Relay connection with the REST filters', async () => {
    const r = await gql(
      '{ patients(first: 2, phone: "054-123-0000") { edges { cursor node { id firstName } } pageInfo { hasNextPage endCursor } } }',
    );
    expect(r.body.errors).toBeUndefined();
    const conn = r.body.data.patients;
    expect(conn.edges.map((e: any) => e.node.firstName)).toEqual(['Rex', 'Tom']);
    expect(conn.pageInfo.hasNextPage).toBe(false);
    const byName = await gql('{ patients(query: "str") { edges { node { firstName } } } }');
    expect(byName.body.data.patients.edges).toEqual([{ node: { firstName: 'Stray' } }]);
  });

  it('pages forward with first/after, refuses bad sizes with validation_failed, and has no last/before', async () => {
    const p1 = await gql(
      '{ patients(first: 1) { edges { node { firstName } } pageInfo { hasNextPage endCursor } } }',
    );
    expect(p1.body.data.patients.pageInfo.hasNextPage).toBe(true);
    const p2 = await gql(
      'query($a: String) { patients(first: 5, after: $a) { edges { node { firstName } } } }',
      {
        a: p1.body.data.patients.pageInfo.endCursor,
      },
    );
    expect(p2.body.data.patients.edges.map((e: any) => e.node.firstName)).toEqual(['Tom', 'Stray']);
    for (const q of [
      '{ patients(first: 0) { edges { cursor } } }',
      '{ patients(first: 101) { edges { cursor } } }',
      '{ patients(after: "bogus") { edges { cursor } } }',
    ]) {
      const r = await gql(q);
      expect(r.body.errors[0].extensions.code).toBe('validation_failed');
    }
    // Backward paging is not offered: last and before are not arguments of a connection.
    for (const arg of ['last: 1', 'before: "x"']) {
      const r = await gql(`{ patients(${arg}) { edges { cursor } } }`);
      expect(r.body.data).toBeUndefined();
      expect(r.body.errors[0].extensions.code).toBe('invalid_request');
      expect(r.body.errors[0].message).toContain(`Unknown argument "${arg.split(':')[0]}"`);
    }
  });

  it('patient(id:) and node(id:) take the REST id', async () => {
    const r = await gql(
      'query($id: ID!) { patient(id: $id) { id firstName status { name } } node(id: $id) { id ... on Patient { lastName } } }',
      { id: ids.rex },
    );
    expect(r.body.data).toEqual({
      patient: { id: ids.rex, firstName: 'Rex', status: { name: 'Active' } },
      node: { id: ids.rex, lastName: 'Levi' },
    });
    const missing = await gql('{ patient(id: "pat_999999") { id } }');
    expect(missing.body.data.patient).toBeNull();
    for (const id of [
      'nonsense',
      'pat_999999',
      'appt_999999',
      'trt_999999',
      'pay_999999',
      'spc_999999',
      'key_1',
    ]) {
      const r = await gql('query($id: ID!) { node(id: $id) { id } }', { id });
      expect(r.body.data, id).toEqual({ node: null });
      expect(r.body.errors[0].extensions.code, id).toBe('not_found');
    }
  });

  it('owner, species and the record connections on a patient, matching REST', async () => {
    const r = await gql(
      `query($id: ID!) { patient(id: $id) {
      owner { id firstName phone } species { name }
      appointments(first: 5) { edges { node { id start status { name } patient { id firstName lastName phone owner { id firstName } species { name } } } } pageInfo { hasNextPage endCursor } }
      treatments { edges { node { treatment { name } } } }
      payments { edges { node { amount method { type } } } }
    } }`,
      { id: ids.rex },
    );
    expect(r.body.errors).toBeUndefined();
    const p = r.body.data.patient;
    expect(p.owner).toMatchObject({ firstName: 'Noa', phone: '0541230000' });
    expect(p.species).toEqual({ name: 'Dog' });
    expect(p.appointments.edges).toHaveLength(5);
    expect(p.appointments.pageInfo.hasNextPage).toBe(true);
    const rest = (await app.get(`/v1/patients/${ids.rex}/appointments?limit=5`, key)).body;
    expect(p.appointments.edges.map((e: any) => e.node.id)).toEqual(rest.data.map((a: any) => a.id));
    for (const e of p.appointments.edges) {
      expect(e.node.patient).toEqual(rexSummary({ id: p.owner.id, firstName: 'Noa' }));
    }
    expect(p.appointments.pageInfo.endCursor).toBe(rest.next_cursor);
    const next = await gql(
      'query($id: ID!, $a: String) { patient(id: $id) { appointments(first: 5, after: $a) { edges { node { id } } } } }',
      {
        id: ids.rex,
        a: p.appointments.pageInfo.endCursor,
      },
    );
    expect(next.body.data.patient.appointments.edges).toHaveLength(2);
    expect(p.treatments.edges[0].node.treatment.name).toBe('Cleaning');
    expect(p.payments.edges[0].node).toEqual({ amount: 250, method: { type: 'CARD' } });
  });

  it("a patient's appointments read what the query selects and equal REST's", async () => {
    const rest = (await app.get(`/v1/patients/${ids.rex}/appointments?limit=5`, key)).body.data;
    // Every field of the definition but the patient (REST's patient summary is compared elsewhere).
    const all = await gql(
      `query($id: ID!) { patient(id: $id) { appointments(first: 5) { edges { node { ...All } } } } }
       fragment All on Appointment ${selectionOf(Appointment, ['patient'])}`,
      { id: ids.rex },
    );
    expect(all.body.errors).toBeUndefined();
    const nodes = all.body.data.patient.appointments.edges.map((e: any) => e.node);
    expect(nodes).toEqual(rest.map(({ patient: _, ...a }: any) => graphqlOf(a, Appointment)));
    const before = app.queries.length;
    const narrow = await gql(
      'query($id: ID!) { patient(id: $id) { appointments(first: 5) { edges { node { id start status { name } } } } } }',
      { id: ids.rex },
    );
    expect(narrow.body.data.patient.appointments.edges.map((e: any) => e.node)).toEqual(
      rest.map((a: any) => ({ id: a.id, start: a.start, status: a.status && { name: a.status.name } })),
    );
    const read = app.queries.slice(before).filter((q) => /from "appointment"/.test(q));
    expect(read).toHaveLength(1);
    expect(read[0]).toMatch(/appointment_status/);
    expect(read[0]).not.toMatch(/"branch"|"provider"|"appointment_type"|"note"|"updated_at"/);
  });

  it('owner and species read with the page come out the same through fields, fragments and inline fragments', async () => {
    const direct = await gql(
      '{ patients(first: 3) { edges { node { id owner { id firstName phone } species { id name } } } } }',
    );
    expect(direct.body.errors).toBeUndefined();
    const before = app.queries.length;
    const viaFragments = await gql(
      `query { patients(first: 3) { ...Page } }
       fragment Page on PatientConnection { edges { node { id ... on Patient { owner { id firstName phone } } ...Kind } } }
       fragment Kind on Patient { species { id name } }`,
    );
    expect(viaFragments.body.errors).toBeUndefined();
    expect(viaFragments.body.data).toEqual(direct.body.data);
    // Read with the page, through the fragments too: no separate owner or species statement.
    expect(app.queries.slice(before).filter((q) => /from "(owner|species)"/.test(q))).toEqual([]);
    const rex = direct.body.data.patients.edges.find((e: any) => e.node.id === ids.rex).node;
    expect(rex.owner).toMatchObject({ firstName: 'Noa', phone: '0541230000' });
    expect(rex.species.name).toBeTruthy();
    // The same through patient(id:), which loads owner and species by DataLoader instead.
    const one = await gql(
      'query($id: ID!) { patient(id: $id) { owner { id firstName phone } species { id name } } }',
      {
        id: ids.rex,
      },
    );
    expect(one.body.data.patient).toEqual({ owner: rex.owner, species: rex.species });
    const stray = direct.body.data.patients.edges.find(
      (e: any) => ![ids.rex, ids.tom].includes(e.node.id),
    ).node;
    expect(stray).toMatchObject({ owner: null, species: null });
  });

  it("the patients page reads what the query selects, its appointments' patient included", async () => {
    const rest = (await app.get('/v1/patients?limit=3&response_format=detailed', key)).body.data;
    const all = await gql(
      `{ patients(first: 3) { edges { node ${selectionOf(PatientResource, ['owner', 'species', 'breed'])} } } }`,
    );
    expect(all.body.data.patients.edges.map((e: any) => e.node)).toEqual(graphqlOf(rest, PatientResource));

    const before = app.queries.length;
    const narrow = await gql(
      `{ patients(first: 3) { edges { node { id appointments(first: 2) { edges { node {
         patient { id firstName lastName phone owner { firstName } species { name } } } } } } } } }`,
    );
    expect(narrow.body.errors).toBeUndefined();
    const rex = narrow.body.data.patients.edges.find((e: any) => e.node.id === ids.rex).node;
    expect(rex.appointments.edges).toHaveLength(2);
    for (const e of rex.appointments.edges) {
      expect(e.node.patient).toEqual(rexSummary({ firstName: 'Noa' }));
    }
    const page = app.queries.slice(before).find((q) => /from "patient"/.test(q)) ?? '';
    expect(page).toMatch(/"first_name"/);
    expect(page).not.toMatch(/"e"\."(email|created_at|address|status_id)"|"patient_status"/);
  });

  it('a sub-connection without its scope is forbidden while the patient still answers', async () => {
    const k = await app.key(
      Number(
        (await app.orm.em.fork().getConnection().execute('select clinic_id from patient limit 1'))[0]
          .clinic_id,
      ),
      ['patients:read'],
    );
    const r = await gql(
      'query($id: ID!) { patient(id: $id) { firstName payments { edges { node { id } } } } }',
      { id: ids.rex },
      k,
    );
    expect(r.body.errors[0]).toMatchObject({
      path: ['patient', 'payments'],
      extensions: { code: 'forbidden', required_scopes: ['payments:read'] },
    });
    expect(r.body.data).toEqual({ patient: { firstName: 'Rex', payments: null } });
  });

  it('a patient reached through node(id:) still needs patients:read', async () => {
    const clinicId = Number(
      (await app.orm.em.fork().getConnection().execute('select clinic_id from patient limit 1'))[0].clinic_id,
    );
    const k = await app.key(clinicId, ['catalog:read']);
    const r = await gql(
      'query($id: ID!) { node(id: $id) { id ... on Patient { firstName } } }',
      { id: ids.rex },
      k,
    );
    expect(r.body.data).toEqual({ node: null });
    expect(r.body.errors).toHaveLength(1);
    expect(r.body.errors[0].path).toEqual(['node']);
    expect(r.body.errors[0].extensions).toMatchObject({
      code: 'forbidden',
      required_scopes: ['patients:read'],
    });
  });

  it('an omitted variable takes its default, non-null ones included; an explicit null for one is refused', async () => {
    const q =
      'query($n: Int! = 2, $query: String = "Re") { patients(first: $n, query: $query) { edges { node { firstName } } } }';
    const omitted = await gql(q);
    expect(omitted.body.errors).toBeUndefined();
    expect(omitted.body.data.patients.edges).toEqual([{ node: { firstName: 'Rex' } }]);
    const given = await gql(q, { n: 3, query: null });
    expect(given.body.errors).toBeUndefined();
    expect(given.body.data.patients.edges).toHaveLength(3);
    const nulled = await gql(q, { n: null });
    expect(nulled.body.errors?.[0].message).toMatch(/\$n/);
  });

  it('invalid documents are invalid_request', async () => {
    const r = await gql('{ patients { nope } }');
    expect(r.body.errors[0].extensions.code).toBe('invalid_request');
  });
});
