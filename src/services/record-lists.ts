import { type ListPage, mapPage, type PageArgs, readByIds, readPage } from '../db/list.ts';
import { decodeCursor, type KeysetSpec, parseLimit } from '../db/pagination.ts';
import type { ClinicKind } from '../entities/index.ts';
import { entityNamed } from '../entities/index.ts';
import { AppError, invalid, notFound } from '../lib/errors.ts';
import { tryParseId } from '../lib/ids.ts';
import { readsOf, type ServiceContext } from '../lib/request-context.ts';
import { idParam, instantParam } from './params.ts';
import { type Groups, type Resource, type Row, standaloneView } from './resource.ts';

/**
 * The top-level lists the spec leaves open (GET /v1/appointments, /treatments, /payments, /calls):
 * the one list mechanism over a resource read on its own (its patient joined), with the filters
 * integrators need. Newest first by the record's time; with `updated_since`, oldest change first
 * (ascending `updated_at`, ties by id) for incremental sync (docs/decisions.md).
 */
export interface RecordList {
  resource: Resource;
  /** Newest first by the record's time (the patient's lists' order). */
  keyset: KeysetSpec<Row>;
  /** The record's time: what `from` and `to` bound. */
  timeProp: string;
  /** Filters of ids: parameter → [the entity's relation, the id kind]. */
  refs: Record<string, [string, Parameters<typeof idParam>[1]]>;
  /** Kinds of clinic the list exists at (animals and clients: veterinary); elsewhere a 404. */
  clinicKinds?: readonly ClinicKind[];
  /** Its name in that 404 ("Animals exist at veterinary clinics only."). */
  noun?: string;
}

/**
 * The 404 of a list (or of one of its records) at a clinic of another kind. Its parameters are
 * checked first, so a malformed request is a 422 wherever it is sent, as every other list's.
 */
export function checkClinicKind(ctx: ServiceContext, list: RecordList): void {
  if (list.clinicKinds && !list.clinicKinds.includes(ctx.principal.clinicKind))
    throw new AppError('not_found', `${list.noun} exist at ${list.clinicKinds.join(' and ')} clinics only.`);
}

export interface RecordFilterArgs extends PageArgs {
  from?: unknown;
  to?: unknown;
  updated_since?: unknown;
  [param: string]: unknown;
}

const syncKeysets = new WeakMap<RecordList, KeysetSpec<Row>>();

/** Ascending `updated_at`, ties by id: the order of `updated_since`. */
function syncKeyset(list: RecordList): KeysetSpec<Row> {
  let k = syncKeysets.get(list);
  if (!k) {
    k = {
      tag: `${list.keyset.tag}s`,
      sortBy: { prop: 'updatedAt', kind: 'date', dir: 'asc', get: (r) => r.updatedAt },
      idDir: 'asc',
      id: (r) => r.id,
    };
    syncKeysets.set(list, k);
  }
  return k;
}

export function recordWhere(list: RecordList, args: RecordFilterArgs): Record<string, unknown>[] {
  const and: Record<string, unknown>[] = [];
  for (const [param, [prop, kind]] of Object.entries(list.refs)) {
    const id = idParam(args[param], kind, param);
    if (id !== undefined) and.push({ [prop]: id });
  }
  const from = instantParam(args.from, 'from');
  const to = instantParam(args.to, 'to');
  if (from && to && from >= to) throw invalid('to', 'to must be later than from.');
  if (from) and.push({ [list.timeProp]: { $gte: from } });
  if (to) and.push({ [list.timeProp]: { $lt: to } });
  const since = instantParam(args.updated_since, 'updated_since');
  if (since) and.push({ updatedAt: { $gte: since } });
  return and;
}

export async function listRecords(
  ctx: ServiceContext,
  list: RecordList,
  args: RecordFilterArgs,
  groups: Groups,
): Promise<ListPage<Row>> {
  const view = standaloneView(list.resource, groups);
  const keyset = args.updated_since != null && args.updated_since !== '' ? syncKeyset(list) : list.keyset;
  const where = recordWhere(list, args);
  if (list.clinicKinds) {
    parseLimit(args.limit, args.limitParam ?? 'limit');
    decodeCursor(keyset, args.cursor, args.cursorParam ?? 'cursor');
    checkClinicKind(ctx, list);
  }
  const page = await readPage(readsOf(ctx), entityNamed(list.resource.kind), keyset, view.read, where, args);
  return mapPage(page, (row) => view.present(row, ctx.principal));
}

/** One record as GET /v1/<records>/{id} answers it; a 404 for a malformed, unknown or another clinic's id. */
export async function getRecord(
  ctx: ServiceContext,
  resource: Resource,
  id: string,
  groups: Groups,
): Promise<Row> {
  const n = tryParseId(resource.kind, id);
  const view = standaloneView(resource, groups);
  const [row] =
    n == null ? [null] : await readByIds(readsOf(ctx), entityNamed(resource.kind), view.read, [n]);
  if (!row)
    throw notFound(
      resource.name.replace(/[A-Z]/g, (c, i) => (i ? ' ' : '') + c.toLowerCase()),
      id,
    );
  return view.present(row, ctx.principal);
}
