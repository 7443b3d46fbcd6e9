import { beforeAll, describe, expect, it, vi } from 'vitest';
import { firstOfParents } from '../src/db/list.ts';
import { seedPatients } from '../src/demo/seed-patients.ts';
import { Appointment } from '../src/entities/index.ts';
import { scopedEm } from '../src/lib/request-context.ts';
import { appointmentKeyset } from '../src/services/appointments/appointments.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * The first pages of many parents' lists are read off each parent's index, `n` rows each
 * (src/db/list.ts firstOfParents): PostgreSQL's own plan of the statement the app runs says how
 * many rows it took from the table. A window over the parents' rows (the earlier shape) reads
 * every row of every parent, and each chosen row twice.
 */
const ran = vi.hoisted(() => ({ statements: [] as { sql: string; params: unknown[] }[] }));

vi.mock('../src/db/named-statements.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../src/db/named-statements.ts')>();
  return {
    ...original,
    runNamed: (...args: Parameters<typeof original.runNamed>) => {
      ran.statements.push({ sql: args[1].sql, params: args[2] });
      return original.runNamed(...args);
    },
  };
});

let app: TestApp;
let clinicId: number;
let otherClinic: number;

beforeAll(async () => {
  app = await startTestApp();
  clinicId = (await app.clinicWithKey('veterinary', ['patients:read'], 'A')).clinicId;
  otherClinic = (await app.clinicWithKey('veterinary', ['patients:read'], 'B')).clinicId;
  await seedPatients(app.orm.em.fork(), clinicId, 80);
  await seedPatients(app.orm.em.fork(), otherClinic, 20);
  // One patient with a long history (300 more appointments, unassigned: no provider to overlap).
  await sql().execute(
    `insert into appointment (clinic_id, patient_id, branch_id, type_id, status_id, start_at, end_at, created_at, updated_at)
     select clinic_id, patient_id, branch_id, type_id, status_id, start_at - n * interval '1 day', end_at - n * interval '1 day', created_at, updated_at
     from (select * from appointment where clinic_id = ? order by patient_id limit 1) a, generate_series(1, 300) n`,
    [clinicId],
  );
  await sql().execute('analyze appointment');
});

const sql = () => app.orm.em.fork().getConnection();

/** The rows each plan node took from `appointment` (scans of the table or its indexes). */
function appointmentRowsRead(plan: any): number {
  const own = plan['Relation Name'] === 'appointment' ? plan['Actual Rows'] * plan['Actual Loops'] : 0;
  return own + (plan.Plans ?? []).reduce((n: number, p: any) => n + appointmentRowsRead(p), 0);
}

describe('first pages of many parents', () => {
  it('take n rows per parent from the table, however many each parent holds', async () => {
    const busy = await sql().execute<{ patient_id: number; n: string }[]>(
      `select patient_id, count(*) as n from appointment where clinic_id = ? group by patient_id
       order by count(*) desc limit 20`,
      [clinicId],
    );
    const parents = busy.map((r) => r.patient_id);
    expect(Number(busy[0].n)).toBeGreaterThan(300); // so a read of every row would show

    const e = scopedEm(app.orm.em, clinicId);
    const read = { fields: ['startAt'], joins: { status: ['name'] } };
    await firstOfParents(e, Appointment, appointmentKeyset, 'patient', read, parents, 1);
    ran.statements.length = 0;
    const lists = await firstOfParents(e, Appointment, appointmentKeyset, 'patient', read, parents, 1);
    expect(lists.every((l) => l.length === 1)).toBe(true);
    expect(ran.statements).toHaveLength(1);

    const { sql: statement, params } = ran.statements[0];
    const [{ 'QUERY PLAN': explained }] = await sql().execute<{ 'QUERY PLAN': any[] }[]>(
      `explain (analyze, format json) ${statement}`,
      params as any[],
    );
    expect(appointmentRowsRead(explained[0].Plan)).toBe(parents.length);
  });

  it("never reach another clinic's rows, named by id", async () => {
    const [theirs] = await sql().execute<{ patient_id: number }[]>(
      'select patient_id from appointment where clinic_id = ? limit 1',
      [otherClinic],
    );
    const e = scopedEm(app.orm.em, clinicId);
    const lists = await firstOfParents(
      e,
      Appointment,
      appointmentKeyset,
      'patient',
      { fields: ['startAt'], joins: {} },
      [theirs.patient_id],
      5,
    );
    expect(lists).toEqual([[]]);
  });

  it('answer a parent named twice with its one list', async () => {
    const [row] = await sql().execute<{ patient_id: number }[]>(
      'select patient_id from appointment where clinic_id = ? group by patient_id having count(*) >= 2 limit 1',
      [clinicId],
    );
    const e = scopedEm(app.orm.em, clinicId);
    const read = { fields: ['startAt'], joins: {} };
    const [once] = await firstOfParents(
      e,
      Appointment,
      appointmentKeyset,
      'patient',
      read,
      [row.patient_id],
      2,
    );
    const twice = await firstOfParents(
      e,
      Appointment,
      appointmentKeyset,
      'patient',
      read,
      [row.patient_id, row.patient_id],
      2,
    );
    expect(once).toHaveLength(2);
    expect(twice.map((l) => l.map((r) => r.id))).toEqual([once.map((r) => r.id), once.map((r) => r.id)]);
  });
});
