import { beforeAll, describe, expect, it } from 'vitest';
import { readScopes } from '../src/auth/scopes.ts';
import { seedPatients } from '../src/demo/seed-patients.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/** A page costs a fixed number of SQL statements whatever its size: no N+1 anywhere. */
let app: TestApp;
let key: string;

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('veterinary', readScopes);
  key = c.key;
  await seedPatients(app.orm.em.fork(), c.clinicId, 150);
  // Two treatments and two payments for each patient (the seed writes appointments only).
  const sql = app.orm.em.fork().getConnection();
  const [account] = await sql.execute<{ id: number }[]>(
    `insert into billing_account (clinic_id, business_name) values (?, 'Clinic Ltd.') returning id`,
    [c.clinicId],
  );
  await sql.execute(
    `insert into treatment (clinic_id, patient_id, status, performed_at, created_at, updated_at)
     select clinic_id, id, 'completed', now() - n * interval '1 day', now(), now()
     from patient, generate_series(1, 2) n where clinic_id = ?`,
    [c.clinicId],
  );
  await sql.execute(
    `insert into payment (clinic_id, patient_id, billing_account_id, amount, currency, method_type, paid_at, created_at, updated_at)
     select clinic_id, id, ?, 10 * n, 'ILS', 'cash', now() - n * interval '1 day', now(), now()
     from patient, generate_series(1, 2) n where clinic_id = ?`,
    [account.id, c.clinicId],
  );
});

async function statements(run: () => Promise<unknown>): Promise<number> {
  const before = app.queries.length;
  await run();
  return app.queries.slice(before).filter((q) => /\b(select|insert|update|delete)\b/i.test(q)).length;
}

describe('statement counts', () => {
  it('REST: a page of 100 patients with include=owner,species costs what a page of 5 does', async () => {
    const page = async (n: number) => {
      const r = await app.get(`/v1/patients?limit=${n}&include=owner,species&response_format=detailed`, key);
      expect(r.status).toBe(200);
      expect(r.body.data).toHaveLength(n);
      expect(r.body.data.every((p: any) => p.owner && p.species)).toBe(true);
    };
    const small = await statements(() => page(5));
    const large = await statements(() => page(100));
    expect(large).toBe(small);
    expect(large).toBe(2); // key lookup + one joined select
  });

  it('REST: appointment pages embed patient, owner and species at a fixed cost', async () => {
    const [busiest] = await app.orm.em
      .fork()
      .getConnection()
      .execute<{ patient_id: number; n: string }[]>(
        'select patient_id, count(*) as n from appointment group by patient_id order by n desc limit 1',
      );
    expect(Number(busiest.n)).toBeGreaterThan(1);
    const withMany = `pat_${busiest.patient_id}`;
    const small = await statements(() =>
      app.get(`/v1/patients/${withMany}/appointments?limit=1&include=owner,species`, key),
    );
    let fetched = 0;
    const large = await statements(async () => {
      const r = await app.get(`/v1/patients/${withMany}/appointments?limit=100&include=owner,species`, key);
      fetched = r.body.data.length;
      expect(r.body.data.every((a: any) => a.patient.owner && a.patient.species)).toBe(true);
    });
    expect(fetched).toBe(Number(busiest.n));
    expect(large).toBe(small);
    expect(large).toBe(3); // key, patient, the page
  });

  it('GraphQL: patients with owner, species and their first appointments, treatments and payments', async () => {
    const q = (n: number) =>
      app.gql(
        `{ patients(first: ${n}) { edges { node { id owner { id firstName } species { name }
           appointments(first: 5) { edges { node { id start branch { name } status { name } type { name } provider { name } } } }
           treatments(first: 5) { edges { cursor node { id performedAt price treatment { name } provider { name } patient { id firstName } } } }
           payments(first: 5) { pageInfo { hasNextPage endCursor } edges { node { id amount method { type } billingAccount { businessName } } } } } } } }`,
        {},
        key,
      );
    let appts = 0;
    let records = 0;
    const small = await statements(async () => {
      const r = await q(5);
      expect(r.body.errors).toBeUndefined();
    });
    const large = await statements(async () => {
      const r = await q(100);
      expect(r.body.errors).toBeUndefined();
      expect(r.body.data.patients.edges).toHaveLength(100);
      appts = r.body.data.patients.edges.reduce(
        (s: number, e: any) => s + e.node.appointments.edges.length,
        0,
      );
      expect(r.body.data.patients.edges.every((e: any) => e.node.owner && e.node.species)).toBe(true);
      records = r.body.data.patients.edges.reduce(
        (s: number, e: any) => s + e.node.treatments.edges.length + e.node.payments.edges.length,
        0,
      );
    });
    expect(appts).toBeGreaterThan(50);
    expect(records).toBe(400);
    expect(large).toBe(small);
    expect(large).toBe(5); // key, patients with owner and species, appointments, treatments, payments
  });

  it('GraphQL: nested pages carry usable cursors when the query selects no time field', async () => {
    const first = await app.gql(
      '{ patients(first: 2) { edges { node { id payments(first: 1) { pageInfo { hasNextPage endCursor } edges { node { id } } } } } } }',
      {},
      key,
    );
    expect(first.body.errors).toBeUndefined();
    const p = first.body.data.patients.edges[1].node;
    expect(p.payments.pageInfo.hasNextPage).toBe(true);
    const next = await app.gql(
      'query($id: ID!, $after: String) { patient(id: $id) { payments(first: 5, after: $after) { edges { node { id } } } } }',
      { id: p.id, after: p.payments.pageInfo.endCursor },
      key,
    );
    expect(next.body.errors).toBeUndefined();
    const ids = next.body.data.patient.payments.edges.map((e: any) => e.node.id);
    expect(ids).toHaveLength(1);
    expect(ids).not.toContain(p.payments.edges[0].node.id);
  });
});
