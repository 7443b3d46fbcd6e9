import type { FilterQuery } from '@mikro-orm/postgresql';
import { Patient } from '../../entities/index.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { tryParseId } from '../../lib/ids.ts';
import { type KeysetSpec, type Page, paginate } from '../../lib/pagination.ts';
import { toE164 } from '../../lib/phone.ts';
import { escapeLike, foldForSearch } from '../../lib/text.ts';
import type { ServiceContext } from '../context.ts';
import { leanFind } from '../lean.ts';
import type { PatientData, PatientIncludes } from '../presenters.ts';

export interface PatientFilters {
  phone?: string | null;
  email?: string | null;
  query?: string | null;
}

export const patientKeyset: KeysetSpec<{ id: number }> = { tag: 'pat', idDir: 'asc', id: (p) => p.id };

const conciseFields = [
  'firstName',
  'lastName',
  'phone',
  'email',
  'gender',
  'birthDate',
  'createdAt',
  'updatedAt',
];
const detailedFields = ['address', 'contacts', 'balance', 'idNumber'];

// Resource field → column, for reading only what a GraphQL selection needs.
const columnOf: Record<string, string> = {
  first_name: 'firstName',
  last_name: 'lastName',
  phone: 'phone',
  email: 'email',
  gender: 'gender',
  birth_date: 'birthDate',
  created_at: 'createdAt',
  updated_at: 'updatedAt',
  address: 'address',
  contacts: 'contacts',
  balance: 'balance',
  id_number: 'idNumber',
};

function populateFor(include?: PatientIncludes): ('status' | 'owner' | 'species')[] {
  const out: ('status' | 'owner' | 'species')[] = ['status'];
  if (include?.owner) out.push('owner');
  if (include?.species) out.push('species');
  return out;
}

/** Builds the search condition; phone and email are normalised the way they are stored. */
export function patientWhere(ctx: ServiceContext, f: PatientFilters): FilterQuery<Patient>[] {
  const and: FilterQuery<Patient>[] = [];
  if (f.phone != null && f.phone !== '') {
    const e164 = toE164(f.phone, ctx.principal.country);
    if (!e164)
      throw new AppError('validation_failed', `phone '${f.phone}' is not a phone number.`, {
        param: 'phone',
      });
    and.push({ phone: e164 });
  }
  if (f.email != null && f.email !== '') and.push({ emailLower: f.email.trim().toLowerCase() });
  if (f.query != null && f.query.trim() !== '') {
    const q = `${escapeLike(foldForSearch(f.query))}%`;
    and.push({ $or: [{ nameFl: { $like: q } }, { nameLf: { $like: q } }] });
  }
  return and;
}

export async function listPatients(
  ctx: ServiceContext,
  args: PatientFilters & {
    limit?: unknown;
    cursor?: unknown;
    include?: PatientIncludes;
    /** Also read the response_format=detailed fields. */
    detailed?: boolean;
    /**
     * Read only these resource fields (a GraphQL selection); the others come out null. Absent:
     * every concise field, and the detailed ones with `detailed`.
     */
    select?: ReadonlySet<string>;
  },
): Promise<Page<PatientData>> {
  const where = patientWhere(ctx, args);
  const { select } = args;
  const joins: Record<string, string[]> = {};
  if (!select || select.has('status')) joins.status = ['name', 'color'];
  if (args.include?.owner) joins.owner = ['firstName', 'lastName', 'phone', 'email'];
  if (args.include?.species) joins.species = ['name'];
  const columns = select
    ? Object.entries(columnOf).flatMap(([f, col]) => (select.has(f) ? [col] : []))
    : [...conciseFields, ...(args.detailed ? detailedFields : [])];
  // owner and species ids are always read: nested GraphQL fields load them by DataLoader.
  const fields = [...columns, 'owner', 'species'];
  return paginate(patientKeyset, args, ({ after, orderBy, take }) => {
    const and = after ? [...where, after] : where;
    return leanFind<PatientData>(ctx.em, Patient, {
      fields,
      joins,
      where: and.length ? { $and: and } : undefined,
      orderBy,
      limit: take,
    });
  });
}

/** The patient, or 404 when the id is malformed, unknown, or another clinic's. */
export async function getPatient(
  ctx: ServiceContext,
  id: string,
  include?: PatientIncludes,
): Promise<Patient> {
  const n = tryParseId('Patient', id);
  const patient =
    n == null
      ? null
      : await ctx.em.findOne(Patient, n, { populate: populateFor(include), strategy: 'joined' });
  if (!patient) throw notFound('patient', id);
  return patient;
}
