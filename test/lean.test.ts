import { beforeAll, describe, expect, it } from 'vitest';
import { isPrepared, type LeanQuery, leanFind, runBuilt } from '../src/db/lean.ts';
import { firstOfParents } from '../src/db/list.ts';
import { namedStatement, numberPlaceholders } from '../src/db/named-statements.ts';
import { seedPatients } from '../src/demo/seed-patients.ts';
import { Appointment, Owner, Patient } from '../src/entities/index.ts';
import { scopedEm } from '../src/lib/request-context.ts';
import { appointmentKeyset } from '../src/services/appointments/appointments.ts';
import { foldedNames } from '../src/services/patients/search-columns.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * Lean reads reuse the SQL of each query shape with the call's own values. These tests hold the
 * prepared path to what the QueryBuilder itself would run, and to the tenant scope.
 */
let app: TestApp;
let clinicA: number;
let clinicB: number;

beforeAll(async () => {
  app = await startTestApp();
  clinicA = (await app.clinicWithKey('veterinary', ['patients:read'], 'A')).clinicId;
  clinicB = (await app.clinicWithKey('veterinary', ['patients:read'], 'B')).clinicId;
  await seedPatients(app.orm.em.fork(), clinicA, 60);
  await seedPatients(app.orm.em.fork(), clinicB, 40);
});

const em = (clinicId: number) => scopedEm(app.orm.em, clinicId);

const patientPage = (where?: object): LeanQuery => ({
  fields: ['firstName', 'lastName', 'phone', 'createdAt', 'owner', 'species'],
  joins: { status: ['name', 'color'], owner: ['firstName'] },
  where,
  orderBy: [{ id: 'asc' }],
  limit: 11,
});

async function idsOf(clinicId: number, entity: typeof Patient | typeof Appointment): Promise<number[]> {
  const rows = await app.orm.em
    .fork()
    .getConnection()
    .execute<{ id: number }[]>(
      `select id from ${entity === Patient ? 'patient' : 'appointment'} where clinic_id = ? order by id`,
      [clinicId],
    );
  return rows.map((r) => r.id);
}

describe('prepared lean reads', () => {
  it('return what the QueryBuilder returns, for every shape the lists use', async () => {
    const [first] = await em(clinicA).find(Patient, { email: { $ne: null } }, { limit: 1 });
    const prefix = (first.firstName ?? '').slice(0, 2).toLowerCase();
    const a = await idsOf(clinicA, Appointment);
    const cutoff = new Date('2026-01-01T00:00:00Z');
    const cases: [typeof Patient | typeof Appointment, LeanQuery][] = [
      [Patient, patientPage()],
      [Patient, patientPage({ $and: [{ id: { $gt: 5 } }] })],
      [
        Patient,
        patientPage({
          $and: [{ $or: [{ nameFl: { $like: `${prefix}%` } }, { nameLf: { $like: `${prefix}%` } }] }],
        }),
      ],
      [Patient, patientPage({ $and: [{ emailLower: first.emailLower as string }] })],
      [Owner as any, { fields: ['firstName', 'phone'], where: { id: { $in: [3, 1, 2] } } }],
      [
        Appointment,
        {
          fields: ['startAt', 'endAt'],
          joins: { branch: ['name'] },
          where: { $or: [{ startAt: { $lt: cutoff } }, { startAt: cutoff, id: { $lt: a[a.length - 1] } }] },
          orderBy: [{ startAt: 'desc' }, { id: 'desc' }],
          limit: 7,
        },
      ],
    ];
    for (const [entity, q] of cases) {
      const prepared = await leanFind(em(clinicA), entity, q);
      expect(isPrepared(em(clinicA), entity, q)).toBe(true);
      expect(prepared.map((r: any) => r.id)).toEqual(
        (await runBuilt(em(clinicA), entity, q)).map((r) => r.id),
      );
      expect(prepared.length).toBeGreaterThan(0);
    }
  });

  it('put each call its own values: another cursor, another page', async () => {
    const page1 = await leanFind<{ id: number }>(
      em(clinicA),
      Patient,
      patientPage({ $and: [{ id: { $gt: 0 } }] }),
    );
    const last = page1[page1.length - 1].id;
    const page2 = await leanFind<{ id: number }>(
      em(clinicA),
      Patient,
      patientPage({ $and: [{ id: { $gt: last } }] }),
    );
    expect(page2[0].id).toBeGreaterThan(last);
    expect(page2.map((r) => r.id)).toEqual(
      (await runBuilt(em(clinicA), Patient, patientPage({ $and: [{ id: { $gt: last } }] }))).map((r) => r.id),
    );
  });

  it('keep the tenant scope: one shape, two clinics, each sees only its own rows', async () => {
    const ownA = new Set(await idsOf(clinicA, Patient));
    const ownB = new Set(await idsOf(clinicB, Patient));
    const q = patientPage({ $and: [{ id: { $gt: 0 } }] });
    const rowsA = await leanFind<{ id: number }>(em(clinicA), Patient, q);
    const rowsB = await leanFind<{ id: number }>(em(clinicB), Patient, q);
    expect(isPrepared(em(clinicB), Patient, q)).toBe(true);
    expect(rowsA.length).toBe(11);
    expect(rowsB.length).toBe(11);
    expect(rowsA.every((r) => ownA.has(r.id))).toBe(true);
    expect(rowsB.every((r) => ownB.has(r.id))).toBe(true);
    // Another clinic's ids, asked for by value, stay invisible.
    const byIds = { fields: ['firstName'], where: { id: { $in: [...ownA].slice(0, 3) } } };
    expect(await leanFind(em(clinicB), Patient, byIds)).toEqual([]);
  });

  it('refuse a read with no clinic set, as the QueryBuilder does', async () => {
    await expect(leanFind(app.orm.em.fork(), Patient, patientPage())).rejects.toThrow(/tenant/);
  });

  it('fall back to the QueryBuilder for a condition holding an entity', async () => {
    const e = em(clinicA);
    const [patient] = await e.find(Patient, {}, { limit: 1, orderBy: { id: 'asc' } });
    const q = { fields: ['startAt'], where: { patient }, orderBy: [{ id: 'asc' }] };
    const rows = await leanFind<{ id: number }>(e, Appointment, q);
    expect(isPrepared(e, Appointment, q)).toBe(false);
    expect(rows.map((r) => r.id)).toEqual((await runBuilt(e, Appointment, q)).map((r) => r.id));
  });

  it('first appointments of many patients: one statement, newest first, n per patient', async () => {
    const patients = (await idsOf(clinicA, Patient)).slice(0, 20);
    const before = app.queries.length;
    const read = { fields: ['startAt'], joins: { branch: ['name'] } };
    const lists = await firstOfParents(
      em(clinicA),
      Appointment,
      appointmentKeyset,
      'patient',
      read,
      patients,
      2,
    );
    expect(app.queries.length - before).toBe(1);
    const all = await em(clinicA).find(
      Appointment,
      { patient: { $in: patients } },
      { orderBy: [{ startAt: 'desc' }, { id: 'desc' }] },
    );
    patients.forEach((id, i) => {
      const expected = all
        .filter((a) => a.patient.id === id)
        .slice(0, 2)
        .map((a) => a.id);
      expect(lists[i].map((a) => a.id)).toEqual(expected);
    });
    expect(lists.some((l) => l.length === 2)).toBe(true);
  });

  it('inside a transaction run on its connection: they see what it wrote', async () => {
    const e = em(clinicA);
    const q = (id: number) => ({
      fields: ['firstName'],
      where: { $and: [{ id: { $gt: id - 1 } }] },
      limit: 1,
    });
    let inside: { id: number; firstName: string }[] = [];
    let id = 0;
    await expect(
      e.transactional(async (tx) => {
        const p = tx.create(Patient, {
          clinic: clinicA,
          firstName: 'Uncommitted',
          lastName: 'Row',
          ...foldedNames('Uncommitted', 'Row'),
          createdAt: new Date(),
          updatedAt: new Date(),
        } as any);
        await tx.flush();
        id = p.id;
        await leanFind(tx, Patient, q(id)); // prepares the shape
        inside = await leanFind(tx, Patient, q(id));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(inside).toEqual([{ id, firstName: 'Uncommitted' }]);
    expect(await leanFind(em(clinicA), Patient, q(id))).toEqual([]);
  });
});

describe('named statements', () => {
  it('number the placeholders outside quotes', () => {
    expect(numberPlaceholders(`select '?' as "a?b", x from t where a = ? and b = any(?::int[])`)).toBe(
      `select '?' as "a?b", x from t where a = $1 and b = any($2::int[])`,
    );
  });

  it('give each statement its own name, and none to a LIKE, which is planned per pattern', () => {
    const a = namedStatement('select 1 where x = ?');
    const b = namedStatement('select 2 where x = ?');
    expect(a.name).toBeTruthy();
    expect(b.name).not.toBe(a.name);
    expect(namedStatement('select 1 where name like ?').name).toBeUndefined();
  });
});
