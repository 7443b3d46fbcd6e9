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
  const row =
    n == null
      ? null
      : ctx.loaders
        ? await loader<number, Record<string, unknown> | null>(
            ctx as RequestContext,
            'patient-phone',
            (ids) => readByIds(readsOf(ctx), PatientEntity, phoneRead, ids),
          ).load(n)
        : (await readByIds(readsOf(ctx), PatientEntity, phoneRead, [n]))[0];
  if (!row) throw notFound('patient', patientId);
  return (row.phone as string | null) ?? null;
}
