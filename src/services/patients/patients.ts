import type { FilterQuery } from '@mikro-orm/postgresql';
import { type ListPage, mapPage, type PageArgs, readByIds, readPage } from '../../db/list.ts';
import type { KeysetSpec } from '../../db/pagination.ts';
import { Patient as PatientEntity } from '../../entities/index.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { tryParseId } from '../../lib/ids.ts';
import { toE164 } from '../../lib/phone.ts';
import { readsOf, type ServiceContext } from '../../lib/request-context.ts';
import { escapeLike, foldForSearch } from '../../lib/text.ts';
import type { Row, View } from '../resource.ts';

export interface PatientFilters {
  phone?: string | null;
  email?: string | null;
  query?: string | null;
}

/** Oldest first (docs/decisions.md). */
export const patientKeyset: KeysetSpec<Row> = { tag: 'pat', idDir: 'asc', id: (p) => p.id };

/** Builds the search condition; phone and email are normalised the way they are stored. */
export function patientWhere(ctx: ServiceContext, f: PatientFilters): FilterQuery<PatientEntity>[] {
  const and: FilterQuery<PatientEntity>[] = [];
  for (const param of ['phone', 'email', 'query'] as const) {
    // PostgreSQL text cannot hold a NUL byte; such a value would fail there as a 500.
    if (f[param]?.includes('\u0000'))
      throw new AppError('validation_failed', `${param} must not contain a NUL character.`, { param });
  }
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

/** A page of patients, presented by `view` (REST's groups or a GraphQL selection). */
export async function listPatients(
  ctx: ServiceContext,
  args: PatientFilters & PageArgs & { view: View },
): Promise<ListPage<Row>> {
  const page = await readPage(
    readsOf(ctx),
    PatientEntity,
    patientKeyset,
    args.view.read,
    patientWhere(ctx, args),
    args,
  );
  const pc = ctx.principal;
  return mapPage(page, (row) => args.view.present(row, pc));
}

/** The patient's row as `view` reads it, or 404 when the id is malformed, unknown, or another clinic's. */
export async function getPatientRow(ctx: ServiceContext, id: string, view: View): Promise<Row> {
  const n = tryParseId('Patient', id);
  const [row] = n == null ? [null] : await readByIds(readsOf(ctx), PatientEntity, view.read, [n]);
  if (!row) throw notFound('patient', id);
  return row;
}

export async function getPatient(ctx: ServiceContext, id: string, view: View): Promise<Row> {
  return view.present(await getPatientRow(ctx, id, view), ctx.principal);
}
