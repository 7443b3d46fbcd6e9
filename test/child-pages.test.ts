import { beforeAll, describe, expect, it } from 'vitest';
import { readScopes } from '../src/auth/scopes.ts';
import { seedPatients } from '../src/demo/seed-patients.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * A page of patients plans its patients' first pages of appointments, treatments and payments
 * where the page is read (src/schema/child-pages.ts): what each selection of a list asks for, it
 * gets, read for the whole page in one statement of the selected columns only.
 */
let app: TestApp;
let key: string;
let clinicId: number;

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('veterinary', readScopes);
  key = c.key;
  clinicId = c.clinicId;
  await seedPatients(app.orm.em.fork(), clinicId, 120);
});

async function run(query: string, variables: Record<string, unknown> = {}, k = key) {
  const before = app.queries.length;
  const r = await app.gql(query, variables, k);
  const sql = app.queries.slice(before).filter((q) => /\bselect\b/i.test(q));
  return { body: r.body, sql, appointments: sql.filter((q) => /from "appointment"/.test(q)) };
}

const ids = (conn: any) => conn.edges.map((e: any) => e.node.id);

describe('child pages planned at the page of patients', () => {
  it('a nested list costs one statement whether the page holds 25 patients or 100', async () => {
    const q = (n: number) =>
      `{ patients(first: ${n}) { edges { node { id appointments(first: 5) { edges { node { id start } } } } } } }`;
    const small = await run(q(25));
    const large = await run(q(100));
    expect(large.body.errors).toBeUndefined();
    expect(large.body.data.patients.edges).toHaveLength(100);
    expect(small.appointments).toHaveLength(1);
    expect(large.appointments).toHaveLength(1);
    expect(large.sql.length).toBe(small.sql.length);
  });

  it('reads only the columns and joins the selection names', async () => {
    const bare = await run(
      '{ patients(first: 3) { edges { node { id appointments(first: 2) { edges { node { id } } } } } } }',
    );
    expect(bare.body.errors).toBeUndefined();
    expect(bare.appointments[0]).not.toMatch(/"end_at"|"appointment_status"|"branch"/);
    const more = await run(
      '{ patients(first: 3) { edges { node { id appointments(first: 2) { edges { node { id end status { name } } } } } } } }',
    );
    expect(more.appointments[0]).toMatch(/"end_at"/);
    expect(more.appointments[0]).toMatch(/"appointment_status"/);
    expect(more.appointments[0]).not.toMatch(/"branch"/);
  });

  it('gives each alias its own arguments; a fragment selecting the same field merges with it', async () => {
    const r = await run(
      `query($n: Int) { patients(first: 10) { edges { node { id ...More
        one: appointments(first: 1) { edges { node { id } } }
        some: appointments(first: $n) { edges { node { id } } }
      } } } }
      fragment More on Patient { some: appointments(first: $n) { edges { node { start } } } }`,
      { n: 3 },
    );
    expect(r.body.errors).toBeUndefined();
    const withMany = r.body.data.patients.edges
      .map((e: any) => e.node)
      .find((p: any) => p.some.edges.length === 3);
    expect(withMany).toBeDefined();
    expect(ids(withMany.one)).toEqual(ids(withMany.some).slice(0, 1));
    expect(withMany.some.edges[0].node.start).toEqual(expect.any(String));
    // One statement per response key, each for the whole page.
    expect(r.appointments).toHaveLength(2);
  });

  it('answers as a patient read on its own does, later pages included', async () => {
    const r = await run(
      '{ patients(first: 20) { edges { node { id appointments(first: 2) { pageInfo { hasNextPage endCursor } edges { cursor node { id start } } } } } } }',
    );
    const p = r.body.data.patients.edges
      .map((e: any) => e.node)
      .find((n: any) => n.appointments.pageInfo.hasNextPage);
    const one = await run(
      'query($id: ID!) { patient(id: $id) { appointments(first: 2) { pageInfo { hasNextPage endCursor } edges { cursor node { id start } } } } }',
      { id: p.id },
    );
    expect(one.body.data.patient.appointments).toEqual(p.appointments);
    const next = await run(
      'query($after: String) { patients(first: 20) { edges { node { id appointments(first: 2, after: $after) { edges { node { id } } } } } } }',
      { after: p.appointments.pageInfo.endCursor },
    );
    expect(next.body.errors).toBeUndefined();
    const same = next.body.data.patients.edges.find((e: any) => e.node.id === p.id).node;
    expect(ids(same.appointments)).not.toContain(p.appointments.edges[0].node.id);
  });

  it('the animals connection plans the same lists: each animal as patient(id:) answers it', async () => {
    const nested = '{ id appointments(first: 3) { pageInfo { hasNextPage } edges { node { id start } } } }';
    const animals = await run(`{ animals(first: 8) { edges { node ${nested} } } }`);
    expect(animals.body.errors).toBeUndefined();
    expect(animals.appointments).toHaveLength(1);
    const nodes = animals.body.data.animals.edges.map((e: any) => e.node);
    expect(nodes.filter((n: any) => n.appointments.edges.length).length).toBeGreaterThan(1);
    const alone = await run(
      `{ ${nodes.map((n: any, i: number) => `a${i}: patient(id: "${n.id}") ${nested}`).join(' ')} }`,
    );
    expect(nodes).toEqual(nodes.map((_: unknown, i: number) => alone.body.data[`a${i}`]));
  });

  it('reads nothing for a list the key lacks the scope for: null and forbidden, as before', async () => {
    const k = await app.key(clinicId, ['patients:read']);
    const r = await run(
      '{ patients(first: 3) { edges { node { id appointments(first: 2) { edges { node { id } } } } } } }',
      {},
      k,
    );
    expect(r.body.data.patients.edges[0].node).toEqual({ id: expect.any(String), appointments: null });
    expect(r.body.errors[0]).toMatchObject({
      path: ['patients', 'edges', 0, 'node', 'appointments'],
      extensions: { code: 'forbidden', required_scopes: ['appointments:read'] },
    });
    expect(r.appointments).toHaveLength(0);
  });

  it('a refused argument is refused by the list’s own field, named as the query wrote it', async () => {
    const r = await run(
      '{ patients(first: 2) { edges { node { id appointments(first: 0) { edges { node { id } } } } } } }',
    );
    expect(r.body.errors[0]).toMatchObject({ extensions: { code: 'validation_failed', param: 'first' } });
  });

  it('reads nothing for a list the variables leave out (@include / @skip on it)', async () => {
    const q = `query($with: Boolean!) { patients(first: 3) { edges { node { id
      appointments(first: 2) @include(if: $with) { edges { node { id } } }
      treatments(first: 2) @skip(if: $with) { edges { node { id } } } } } } }`;
    const out = await run(q, { with: false });
    expect(out.body.errors).toBeUndefined();
    expect(out.appointments).toHaveLength(0);
    expect(out.sql.filter((x) => /from "treatment"/.test(x))).toHaveLength(1);
    const inn = await run(q, { with: true });
    expect(inn.appointments).toHaveLength(1);
    expect(inn.sql.filter((x) => /from "treatment"/.test(x))).toHaveLength(0);
    expect(inn.body.data.patients.edges[0].node.appointments.edges).toBeDefined();
  });
});
