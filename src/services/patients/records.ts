import { type ListPage, type PageArgs, relayPageArgs } from '../../db/list.ts';
import { parseLimit } from '../../db/pagination.ts';
import { notFound } from '../../lib/errors.ts';
import { tryParseId } from '../../lib/ids.ts';
import type { RequestContext, ServiceContext } from '../../lib/request-context.ts';
import { type ChildList, firstPageOfParent, pageOfParent } from '../child-lists.ts';
import { groupsOfRequest } from '../groups-params.ts';
import { includesOf, type Row, type View, viewFor } from '../resource.ts';
import { PatientSummary } from './patient.resource.ts';
import { getPatientRow } from './patients.ts';

/**
 * A patient's records (appointments, treatments, payments), each item with the patient's summary
 * embedded. REST: the patient is read by id (404 before any 422 of the filters), with what
 * `include` asks for, and every item carries it.
 */
export async function listPatientRecords(
  ctx: ServiceContext,
  list: ChildList,
  patientId: string,
  args: PageArgs & Record<string, unknown>,
): Promise<ListPage<Row>> {
  const active = groupsOfRequest({ include: args.include }, includesOf(list.resource));
  const summary = viewFor(PatientSummary, active);
  const row = await getPatientRow(ctx, patientId, summary);
  const filters = list.filters?.(args) ?? {};
  const parent = summary.present(row, ctx.principal);
  return pageOfParent(ctx, list, row.id, parent, viewFor(list.resource, active), filters, args);
}

/**
 * GraphQL: the records of a patient already presented (`patient`). The first page is batched for
 * every patient of the request (one statement for a page of patients); later pages follow `after`.
 */
export async function recordsOfPatient(
  ctx: ServiceContext & Pick<RequestContext, 'loaders'>,
  list: ChildList,
  patient: Row,
  view: View,
  args: { first?: number | null; after?: string | null } & Record<string, unknown>,
): Promise<ListPage<Row>> {
  const patientId = tryParseId('Patient', patient.id);
  if (patientId == null) throw notFound('patient', String(patient.id));
  const filters = list.filters?.(args) ?? {};
  if (args.after == null) {
    const limit = parseLimit(args.first ?? undefined, 'first');
    return firstPageOfParent(ctx, list, patientId, patient, view, filters, { limit });
  }
  return pageOfParent(ctx, list, patientId, patient, view, filters, relayPageArgs(args));
}
