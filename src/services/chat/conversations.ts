import { firstOfParents, type ListPage, mapPage, type PageArgs, readByIds, readPage } from '../../db/list.ts';
import { decodeCursor, parseLimit } from '../../db/pagination.ts';
import { Conversation as ConversationEntity } from '../../entities/index.ts';
import { notFound } from '../../lib/errors.ts';
import { tryParseId } from '../../lib/ids.ts';
import { loader, type RequestContext, readsOf, type ServiceContext } from '../../lib/request-context.ts';
import { emptyPage, firstPageOf } from '../child-lists.ts';
import type { Row, View } from '../resource.ts';
import { type ConversationFilterArgs, conversationFilters } from './filters.ts';
import { conversationsByActivity, conversationsBySeq, syncStart } from './keysets.ts';
import { MatchedPatients } from './matched-patients.ts';
import { phoneOfPatient, phonesOfPatients } from './patient-phone.ts';

/** GET /v1/chat/conversations and the `conversations` connection. */
export async function listConversations(
  ctx: ServiceContext,
  args: ConversationFilterArgs & PageArgs & { view: View },
): Promise<ListPage<Row>> {
  const f = conversationFilters(args, ctx.principal.country);
  const where: object[] = [];
  if (f.phone) where.push({ patientPhone: f.phone });
  if (f.isHandled !== undefined) where.push({ isHandled: f.isHandled });
  if (f.updatedSince) where.push({ updatedAt: { $gte: f.updatedSince } });
  const keyset = f.updatedSince ? conversationsBySeq : conversationsByActivity;
  const start = f.updatedSince
    ? syncStart('conversation', ctx.principal.clinicId, f.updatedSince)
    : undefined;
  const page = await readPage(readsOf(ctx), ConversationEntity, keyset, args.view.read, where, args, start);
  return presentPage(ctx, page, args.view);
}

/**
 * GraphQL: the conversation of a patient's phone (at most one), with the same filters; none when
 * the patient has no phone. The first page without filters is batched for every patient of the
 * request (`firstConversationsOfPatients`); any other page reads on its own.
 */
export async function conversationsOfPatient(
  ctx: ServiceContext & Partial<Pick<RequestContext, 'loaders'>>,
  patientId: string,
  args: ConversationFilterArgs & PageArgs & { view: View },
): Promise<ListPage<Row>> {
  const n = tryParseId('Patient', patientId);
  const limit = ctx.loaders ? orNull(() => firstConversationsLimit(ctx, args)) : null;
  if (n != null && limit != null && ctx.loaders) {
    const { view } = args;
    const page = await loader<number, ListPage<Row> | null>(
      ctx as RequestContext,
      `patient-conversations:${limit}:${view.key}`,
      (ids) => firstConversationsOfPatients(ctx, ids, view, limit),
    ).load(n);
    if (!page) throw notFound('patient', patientId);
    return page;
  }
  const phone = await phoneOfPatient(ctx, patientId);
  if (phone) return listConversations(ctx, { ...args, phone });
  // Still checks the other filters, limit and cursor: a bad one is a 422 whatever the phone.
  conversationFilters({ ...args, phone: undefined }, ctx.principal.country);
  parseLimit(args.limit, args.limitParam);
  decodeCursor(conversationsByActivity, args.cursor, args.cursorParam);
  return emptyPage();
}

/** What `f` answers, or null when it throws (refused arguments: the unbatched path reports them, in its order). */
function orNull<T>(f: () => T): T | null {
  try {
    return f();
  } catch {
    return null;
  }
}

/**
 * The page size of a patient's first page of conversations without filters (which many patients
 * read at once), or null for any other page. Throws what the arguments' checks refuse.
 */
export function firstConversationsLimit(
  ctx: Pick<ServiceContext, 'principal'>,
  args: ConversationFilterArgs & PageArgs,
): number | null {
  const f = conversationFilters({ ...args, phone: undefined }, ctx.principal.country);
  if (f.isHandled !== undefined || f.updatedSince || args.cursor != null) return null;
  return parseLimit(args.limit, args.limitParam);
}

/**
 * The first pages (no filters, `limit` each) of many patients' conversations at once: their
 * phones, the conversations of those phones and the conversations' matched patients, one
 * statement each. Null for a patient the clinic has not; an empty page for one without a phone.
 */
export async function firstConversationsOfPatients(
  ctx: ServiceContext & Partial<Pick<RequestContext, 'loaders'>>,
  patientIds: readonly number[],
  view: View,
  limit: number,
): Promise<(ListPage<Row> | null)[]> {
  const phones = await phonesOfPatients(ctx, patientIds);
  const distinct = [...new Set(phones.filter((p) => typeof p === 'string'))];
  const lists = distinct.length
    ? await firstOfParents(
        readsOf(ctx),
        ConversationEntity,
        conversationsByActivity,
        'patientPhone',
        view.read,
        distinct,
        limit + 1,
      )
    : [];
  const pc = await MatchedPatients.context(ctx, lists.flat(), 'patientPhone');
  const byPhone = new Map(
    distinct.map((phone, i) => [
      phone,
      firstPageOf(conversationsByActivity, lists[i], limit, (row) => view.present(row, pc)),
    ]),
  );
  return phones.map((phone) =>
    phone === undefined ? null : phone === null ? emptyPage() : (byPhone.get(phone) as ListPage<Row>),
  );
}

export async function presentPage(ctx: ServiceContext, page: ListPage<Row>, view: View) {
  const pc = await MatchedPatients.context(ctx, page.items, 'patientPhone');
  return mapPage(page, (row) => view.present(row, pc));
}

export async function getConversationRow(ctx: ServiceContext, id: string, view: View): Promise<Row> {
  const n = tryParseId('Conversation', id);
  const [row] = n == null ? [null] : await readByIds(readsOf(ctx), ConversationEntity, view.read, [n]);
  if (!row) throw notFound('conversation', id);
  return row;
}

/** GET /v1/chat/conversations/{id}; 404 for an unknown id or another clinic's. */
export async function getConversation(ctx: ServiceContext, id: string, view: View): Promise<Row> {
  const row = await getConversationRow(ctx, id, view);
  return view.present(row, await MatchedPatients.context(ctx, [row], 'patientPhone'));
}
