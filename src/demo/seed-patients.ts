import type { EntityManager } from '@mikro-orm/postgresql';
import {
  AppointmentStatus,
  AppointmentType,
  Branch,
  Breed,
  PatientStatus,
  Provider,
  Species,
} from '../entities/catalog.ts';
import { Clinic } from '../entities/clinic.ts';
import { Patient } from '../entities/patient.ts';
import { AppError } from '../lib/errors.ts';
import { toId } from '../lib/ids.ts';
import { foldedNames } from '../services/patients/search-columns.ts';
import { seedCatalog } from './catalog.ts';
import { birthDate, emailFor, israeliId, microchip, person, petNames } from './people.ts';
import { Rng, seedOf } from './random.ts';

export interface SeedPatientsResult {
  patients: number;
  owners: number;
  appointments: number;
}

const DAY = 86_400_000;
const BATCH = 5000;

/** The catalog ids bulk rows point at, loaded once per run. */
interface Refs {
  branches: number[];
  providers: number[];
  types: { id: number; minutes: number }[];
  patientStatuses: number[];
  status: { past: number | null; noShow: number | null; future: number | null; cancelled: number | null };
  species: { id: number; breeds: number[] }[];
}

/**
 * Bulk-inserts `count` patients (animals with owners at a veterinary clinic), each with 0-3
 * appointments, into an existing clinic. It is for load and search tests, so it bypasses the
 * unit of work: each batch is a few multi-row `insert ... select from jsonb_to_recordset(...)`
 * statements with one JSON parameter, in its own transaction (a crash keeps the finished
 * batches). Ids are taken from the sequences up front, so rows can point at each other without
 * relying on the order RETURNING gives them back in.
 */
export async function seedPatients(
  em: EntityManager,
  clinicId: number,
  count: number,
  onProgress?: (done: number, total: number) => void,
  opts: { batchSize?: number; now?: Date } = {},
): Promise<SeedPatientsResult> {
  if (!Number.isInteger(count) || count < 1) {
    throw new AppError('validation_failed', 'The number of patients must be a positive integer.', {
      param: 'patients',
    });
  }
  const clinic = await em.findOne(Clinic, clinicId);
  if (!clinic) throw new AppError('not_found', `No clinic with id '${toId('Clinic', clinicId)}'.`);
  const vet = clinic.kind === 'veterinary';
  const now = opts.now ?? new Date();
  const batchSize = opts.batchSize ?? BATCH;

  let refs = await loadRefs(em, clinicId);
  if (!refs.branches.length) {
    // Appointments need a branch; a bare clinic gets the standard catalog of its kind first.
    seedCatalog(em, clinic);
    await em.flush();
    refs = await loadRefs(em, clinicId);
  }
  // Seeded by what is already there, so a second run adds different but still reproducible people.
  const existing = await em.count(Patient, { clinic: clinicId }, { filters: false });
  const rng = new Rng(seedOf(clinicId, existing));
  const result: SeedPatientsResult = { patients: 0, owners: 0, appointments: 0 };

  onProgress?.(0, count);
  for (let done = 0; done < count; ) {
    const n = Math.min(batchSize, count - done);
    await em.transactional(async (tx) => {
      const owners: Record<string, unknown>[] = [];
      const patients: Record<string, unknown>[] = [];
      const appointments: Record<string, unknown>[] = [];
      const patientIds = await nextIds(tx, 'patient', n);
      // About three animals to two owners, as at a typical small-animal practice.
      const ownerIds = vet ? await nextIds(tx, 'owner', Math.ceil(n / 1.5)) : [];

      let owner: Record<string, unknown> | null = null;
      let left = 0;
      for (let i = 0; i < n; i++) {
        const id = patientIds[i];
        let createdAt = new Date(now.getTime() - rng.int(1, 1500) * DAY);
        let row: Record<string, unknown>;
        if (vet) {
          if (left === 0 && owners.length < ownerIds.length) {
            const p = person(rng);
            owner = {
              id: ownerIds[owners.length],
              first_name: p.firstName,
              last_name: p.lastName,
              phone: p.phone,
              email: rng.chance(0.85) ? p.email : null,
              address: p.address,
              created_at: createdAt,
            };
            owners.push(owner);
            left = rng.pick([1, 1, 2, 2, 3]);
          }
          left--;
          const o = owner as Record<string, unknown>;
          // An animal is registered together with or after its owner.
          if (createdAt < (o.created_at as Date)) createdAt = o.created_at as Date;
          const s = refs.species.length ? rng.pick(refs.species) : null;
          const gender = rng.chance(0.5) ? 'female' : 'male';
          row = {
            first_name: rng.pick(petNames[gender]),
            last_name: o.last_name,
            gender,
            // Animals carry the owner's phone and email, so phone lookup finds them.
            phone: o.phone,
            email: o.email,
            address: o.address,
            contacts: o.phone ? [{ type: 'phone', value: o.phone, label: 'owner' }] : [],
            birth_date: birthDate(rng, now, 0.3, 15),
            id_number: rng.chance(0.7) ? microchip(rng) : null,
            owner_id: o.id,
            species_id: s?.id ?? null,
            breed_id: s?.breeds.length && rng.chance(0.9) ? rng.pick(s.breeds) : null,
          };
        } else {
          const p = person(rng);
          const email = rng.chance(0.9) ? emailFor(rng, p.firstName, p.lastName) : null;
          const phone = rng.chance(0.97) ? p.phone : null;
          row = {
            first_name: p.firstName,
            last_name: p.lastName,
            gender: p.gender,
            phone,
            email,
            address: p.address,
            contacts: [
              ...(phone ? [{ type: 'phone', value: phone, label: 'mobile' }] : []),
              ...(email ? [{ type: 'email', value: email, label: 'personal' }] : []),
            ],
            birth_date: birthDate(rng, now, 2, 90),
            id_number: israeliId(rng),
          };
        }
        const names = foldedNames(row.first_name as string, row.last_name as string);
        patients.push({
          ...row,
          id,
          email_lower: (row.email as string | null)?.toLowerCase() ?? null,
          name_fl: names.nameFl,
          name_lf: names.nameLf,
          status_id: refs.patientStatuses.length ? rng.pick(refs.patientStatuses) : null,
          balance: rng.chance(0.8) ? 0 : rng.int(1, 400) * 10,
          created_at: createdAt,
        });
        for (let a = rng.int(0, 3); a > 0; a--) appointments.push(appointment(rng, refs, id, createdAt, now));
      }

      if (owners.length) await insertOwners(tx, clinicId, owners);
      await insertPatients(tx, clinicId, patients);
      if (appointments.length) await insertAppointments(tx, clinicId, appointments);
      result.owners += owners.length;
      result.patients += patients.length;
      result.appointments += appointments.length;
    });
    done += n;
    onProgress?.(done, count);
  }
  return result;
}

function appointment(
  rng: Rng,
  refs: Refs,
  patientId: number,
  createdAt: Date,
  now: Date,
): Record<string, unknown> {
  const type = rng.pick(refs.types);
  // Whole days from the patient's creation to three months ahead, 08:00-18:00 Israel time (+02:00).
  const firstDay = Math.ceil((createdAt.getTime() - now.getTime()) / DAY);
  const dayStart = Math.floor(now.getTime() / DAY) * DAY;
  const start = new Date(
    dayStart + rng.int(firstDay, 90) * DAY + (rng.int(6, 15) * 60 + rng.pick([0, 15, 30, 45])) * 60_000,
  );
  const end = new Date(start.getTime() + (type?.minutes ?? 30) * 60_000);
  const past = end < now;
  const cancelled = rng.chance(0.08);
  const booked = new Date(
    Math.max(createdAt.getTime(), Math.min(now.getTime(), start.getTime() - rng.int(1, 30) * DAY)),
  );
  const { status } = refs;
  return {
    patient_id: patientId,
    branch_id: rng.pick(refs.branches),
    provider_id: refs.providers.length ? rng.pick(refs.providers) : null,
    type_id: type?.id ?? null,
    status_id: cancelled
      ? status.cancelled
      : past
        ? rng.chance(0.05)
          ? status.noShow
          : status.past
        : status.future,
    start_at: start,
    end_at: end,
    cancelled_at: cancelled
      ? new Date(Math.min(now.getTime(), Math.max(booked.getTime(), start.getTime() - DAY)))
      : null,
    created_at: booked,
  };
}

async function loadRefs(em: EntityManager, clinicId: number): Promise<Refs> {
  // Admin code: no request clinic is set, so the tenant filter is off and the clinic is explicit.
  const where = { clinic: clinicId };
  const opts = { filters: false, orderBy: { id: 'asc' } } as const;
  const [branches, providers, types, statuses, patientStatuses, species, breeds] = await Promise.all([
    em.find(Branch, where, opts),
    em.find(Provider, where, opts),
    em.find(AppointmentType, where, opts),
    em.find(AppointmentStatus, where, opts),
    em.find(PatientStatus, where, opts),
    em.find(Species, where, opts),
    em.find(Breed, where, opts),
  ]);
  // Statuses are matched by their usual names; a clinic that names them differently gets its first one.
  const byName = (...names: string[]) =>
    statuses.find((s) => names.includes(s.name.toLowerCase()))?.id ??
    statuses.find((s) => s.enabled)?.id ??
    null;
  return {
    branches: branches.map((b) => b.id),
    providers: providers.map((p) => p.id),
    types: types.map((t) => ({ id: t.id, minutes: t.durationMinutes })),
    patientStatuses: patientStatuses.map((s) => s.id),
    status: {
      past: byName('completed', 'done'),
      noShow: byName('no-show', 'no show'),
      future: byName('scheduled', 'booked', 'confirmed'),
      cancelled: byName('cancelled', 'canceled'),
    },
    species: species.map((s) => ({
      id: s.id,
      breeds: breeds.filter((b) => b.species?.id === s.id).map((b) => b.id),
    })),
  };
}

async function nextIds(em: EntityManager, table: string, n: number): Promise<number[]> {
  const rows = await em.execute<{ id: number }[]>(
    'select nextval(pg_get_serial_sequence(?, ?))::int as id from generate_series(1, ?)',
    [table, 'id', n],
  );
  return rows.map((r) => r.id);
}

// One JSON parameter per statement: MikroORM inlines parameters into the SQL text, and a single
// escaped string is far cheaper to build and for PostgreSQL to parse than 100,000 literals.
async function insertOwners(em: EntityManager, clinicId: number, rows: Record<string, unknown>[]) {
  await em.execute(
    `insert into owner (id, clinic_id, first_name, last_name, phone, email, address, created_at, updated_at)
     select id, ?, first_name, last_name, phone, email, address, created_at, created_at
     from jsonb_to_recordset(?::jsonb) as r(id int, first_name text, last_name text, phone text, email text, address jsonb, created_at timestamptz)`,
    [clinicId, JSON.stringify(rows)],
    'run',
  );
}

async function insertPatients(em: EntityManager, clinicId: number, rows: Record<string, unknown>[]) {
  await em.execute(
    `insert into patient (id, clinic_id, first_name, last_name, phone, email, email_lower, gender, birth_date, status_id,
       name_fl, name_lf, address, contacts, balance, id_number, owner_id, species_id, breed_id, created_at, updated_at)
     select id, ?, first_name, last_name, phone, email, email_lower, gender, birth_date, status_id,
       name_fl, name_lf, address, contacts, balance, id_number, owner_id, species_id, breed_id, created_at, created_at
     from jsonb_to_recordset(?::jsonb) as r(id int, first_name text, last_name text, phone text, email text, email_lower text,
       gender text, birth_date date, status_id int, name_fl text, name_lf text, address jsonb, contacts jsonb, balance numeric,
       id_number text, owner_id int, species_id int, breed_id int, created_at timestamptz)`,
    [clinicId, JSON.stringify(rows)],
    'run',
  );
}

/**
 * Bulk insert. A provider's active bookings never overlap (the appointment_no_overlap exclusion
 * constraint): a generated booking that would overlap one already made keeps its time without a
 * provider, as a clinic books an unassigned slot.
 */
async function insertAppointments(em: EntityManager, clinicId: number, rows: Record<string, unknown>[]) {
  const source = `from jsonb_to_recordset(?::jsonb) as r(patient_id int, branch_id int, provider_id int, type_id int, status_id int,
       start_at timestamptz, end_at timestamptz, cancelled_at timestamptz, created_at timestamptz)`;
  const columns =
    'insert into appointment (clinic_id, patient_id, branch_id, provider_id, type_id, status_id, start_at, end_at, cancelled_at, created_at, updated_at)';
  await em.execute(
    `${columns} select ?, patient_id, branch_id, provider_id, type_id, status_id, start_at, end_at, cancelled_at, created_at, coalesce(cancelled_at, created_at)
     ${source} on conflict do nothing`,
    [clinicId, JSON.stringify(rows)],
    'run',
  );
  await em.execute(
    `${columns} select ?, patient_id, branch_id, null, type_id, status_id, start_at, end_at, cancelled_at, created_at, coalesce(cancelled_at, created_at)
     ${source} where not exists (select 1 from appointment a where a.clinic_id = ? and a.patient_id = r.patient_id and a.start_at = r.start_at)`,
    [clinicId, JSON.stringify(rows), clinicId],
    'run',
  );
}
