import type { EntityManager } from '@mikro-orm/postgresql';
import { Appointment, Owner, Species } from '../../entities/index.ts';
import { leanFind } from '../lean.ts';
import type { AppointmentData, OwnerData } from '../presenters.ts';

/**
 * Batch loads behind GraphQL's per-request DataLoaders: one statement per batch, whatever the
 * page size. Results come back in the order of the keys.
 */
export async function ownersByIds(em: EntityManager, ids: readonly number[]): Promise<(OwnerData | null)[]> {
  const rows = await leanFind<OwnerData>(em, Owner, {
    fields: ['firstName', 'lastName', 'phone', 'email'],
    whereSql: idsIn(ids),
  });
  return inKeyOrder(ids, rows);
}

export async function speciesByIds(
  em: EntityManager,
  ids: readonly number[],
): Promise<({ id: number; name: string } | null)[]> {
  const rows = await leanFind<{ id: number; name: string }>(em, Species, {
    fields: ['name'],
    whereSql: idsIn(ids),
  });
  return inKeyOrder(ids, rows);
}

/** One array parameter, so a batch of any size is the same statement (`in (?, ?, …)` is one per size). */
const idsIn = (ids: readonly number[]) => ({ sql: 'e.id = any(?::int[])', params: [`{${ids.join(',')}}`] });

function inKeyOrder<T extends { id: number }>(ids: readonly number[], rows: T[]): (T | null)[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id) ?? null);
}

/** What a page of appointments reads: the record and its catalog references. */
export const appointmentRead = {
  fields: ['startAt', 'endAt', 'note', 'cancelledAt', 'createdAt', 'updatedAt'],
  joins: {
    branch: ['name'],
    provider: ['name'],
    type: ['name'],
    status: ['name', 'color'],
  },
};

/**
 * The newest `n` appointments of each patient (the first page of Patient.appointments), in one
 * statement: a window over the patients' appointments picks the ids, the tenant-filtered read
 * loads them with their references. Each row's patient is only `{ id }`: the caller has the
 * patient already (joining it again tripled PostgreSQL's planning time for this statement).
 */
export async function firstAppointmentsOfPatients(
  em: EntityManager,
  patientIds: readonly number[],
  n: number,
): Promise<AppointmentData[][]> {
  const rows = await leanFind<AppointmentData>(em, Appointment, {
    fields: [...appointmentRead.fields, 'patient'],
    joins: appointmentRead.joins,
    whereSql: {
      sql: `e.id in (select id from (
              select id, row_number() over (partition by patient_id order by start_at desc, id desc) as rn
              from appointment where patient_id = any(?::int[])
            ) ranked where rn <= ?)`,
      params: [`{${patientIds.join(',')}}`, n],
    },
    orderBy: [{ startAt: 'desc' }, { id: 'desc' }],
  });
  const byPatient = new Map<number, AppointmentData[]>();
  for (const a of rows) {
    const list = byPatient.get(a.patient.id);
    if (list) list.push(a);
    else byPatient.set(a.patient.id, [a]);
  }
  return patientIds.map((id) => byPatient.get(id) ?? []);
}
