import type { EntityManager } from '@mikro-orm/postgresql';
import { Appointment, Owner, Species } from '../../entities/index.ts';
import { leanFind } from '../lean.ts';
import type { OwnerData, PartialAppointmentData } from '../presenters.ts';

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
export const appointmentRead: AppointmentRead = {
  key: 'all',
  fields: ['startAt', 'endAt', 'note', 'cancelledAt', 'createdAt', 'updatedAt'],
  joins: {
    branch: ['name'],
    provider: ['name'],
    type: ['name'],
    status: ['name', 'color'],
  },
};

export interface AppointmentRead {
  /** Names this read set (loaders keep one batch per page size and read set). */
  key: string;
  fields: string[];
  joins: Record<string, string[]>;
}

// Resource field → what it needs read (start is always read: pages are ordered and cursored by it).
const columnOf: Record<string, string> = {
  end: 'endAt',
  note: 'note',
  cancelled_at: 'cancelledAt',
  created_at: 'createdAt',
  updated_at: 'updatedAt',
};

/**
 * The part of `appointmentRead` that the given resource fields need, for a GraphQL selection:
 * the presenter leaves out what a row does not carry, so only selected fields may be narrowed.
 */
export function appointmentReadFor(selected: ReadonlySet<string>): AppointmentRead {
  let read = readFor.get(selected);
  if (!read) {
    const fields = [
      'startAt',
      ...Object.entries(columnOf).flatMap(([f, col]) => (selected.has(f) ? [col] : [])),
    ];
    const joins = Object.fromEntries(
      Object.entries(appointmentRead.joins).filter(([rel]) => selected.has(rel)),
    );
    read = { key: `${fields}|${Object.keys(joins)}`, fields, joins };
    readFor.set(selected, read);
  }
  return read;
}

// Selections are memoised per document (schema/selection.ts), so their read sets can be too.
const readFor = new WeakMap<ReadonlySet<string>, AppointmentRead>();

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
  read: AppointmentRead = appointmentRead,
): Promise<PartialAppointmentData[][]> {
  const rows = await leanFind<PartialAppointmentData>(em, Appointment, {
    fields: [...read.fields, 'patient'],
    joins: read.joins,
    whereSql: {
      sql: `e.id in (select id from (
              select id, row_number() over (partition by patient_id order by start_at desc, id desc) as rn
              from appointment where patient_id = any(?::int[])
            ) ranked where rn <= ?)`,
      params: [`{${patientIds.join(',')}}`, n],
    },
    orderBy: [{ startAt: 'desc' }, { id: 'desc' }],
  });
  const byPatient = new Map<number, PartialAppointmentData[]>();
  for (const a of rows) {
    const list = byPatient.get(a.patient.id);
    if (list) list.push(a);
    else byPatient.set(a.patient.id, [a]);
  }
  return patientIds.map((id) => byPatient.get(id) ?? []);
}
