import { readByIds } from '../../db/list.ts';
import { Patient as PatientEntity } from '../../entities/index.ts';
import { notFound } from '../../lib/errors.ts';
import { tryParseId } from '../../lib/ids.ts';
import { loader, type RequestContext, readsOf, type ServiceContext } from '../../lib/request-context.ts';

const phoneRead = { fields: ['phone'], joins: {} };

/**
 * A patient's phone (E.164; null without one) by public id, read on its own: a patient's
 * conversations and messages follow the stored phone, not whatever a GraphQL query selected of
 * the patient. With the request's loaders, a page of patients is one statement. 404 for an
 * unknown id.
 */
export async function phoneOfPatient(
  ctx: ServiceContext & Partial<Pick<RequestContext, 'loaders'>>,
  patientId: string,
): Promise<string | null> {
  const n = tryParseId('Patient', patientId);
  const [row] = n == null ? [null] : await phoneRows(ctx, [n]);
  if (!row) throw notFound('patient', patientId);
  return (row.phone as string | null) ?? null;
}

/**
 * The phones of many patients by number (null: no phone; undefined: no such patient), with the request's
 * loaders in the same statement as every other phone the request reads at that moment (a page of
 * patients' conversations and messages share one).
 */
export async function phonesOfPatients(
  ctx: ServiceContext & Partial<Pick<RequestContext, 'loaders'>>,
  ids: readonly number[],
): Promise<(string | null | undefined)[]> {
  const rows = await phoneRows(ctx, ids);
  return rows.map((row) => (row ? ((row.phone as string | null) ?? null) : undefined));
}

type PhoneRow = Record<string, unknown> | null;

async function phoneRows(
  ctx: ServiceContext & Partial<Pick<RequestContext, 'loaders'>>,
  ids: readonly number[],
): Promise<PhoneRow[]> {
  if (!ctx.loaders) return readByIds(readsOf(ctx), PatientEntity, phoneRead, ids);
  const rows = await loader<number, PhoneRow>(ctx as RequestContext, 'patient-phone', (keys) =>
    readByIds(readsOf(ctx), PatientEntity, phoneRead, keys),
  ).loadMany(ids);
  return rows.map((row) => {
    if (row instanceof Error) throw row;
    return row;
  });
}
