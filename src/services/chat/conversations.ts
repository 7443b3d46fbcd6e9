import { type ListPage, mapPage, type PageArgs, readByIds, readPage } from '../../db/list.ts';
import { decodeCursor, parseLimit } from '../../db/pagination.ts';
import { Conversation as ConversationEntity } from '../../entities/index.ts';
import { notFound } from '../../lib/errors.ts';
import { tryParseId } from '../../lib/ids.ts';
import { type RequestContext, readsOf, type ServiceContext } from '../../lib/request-context.ts';
import type { Row, View } from '../resource.ts';
import { type ConversationFilterArgs, conversationFilters } from './filters.ts';
import { conversationsByActivity, conversationsBySeq, syncStart } from './keysets.ts';
import { MatchedPatients } from './matched-patients.ts';
import { phoneOfPatient } from './patient-phone.ts';

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
 * the patient has no phone.
 */
export async function conversationsOfPatient(
  ctx: ServiceContext & Partial<Pick<RequestContext, 'loaders'>>,
  patientId: string,
  args: ConversationFilterArgs & PageArgs & { view: View },
): Promise<ListPage<Row>> {
  const phone = await phoneOfPatient(ctx, patientId);
  if (phone) return listConversations(ctx, { ...args, phone });
  // Still checks the other filters, limit and cursor: a bad one is a 422 whatever the phone.
  conversationFilters({ ...args, phone: undefined }, ctx.principal.country);
  parseLimit(args.limit, args.limitParam);
  decodeCursor(conversationsByActivity, args.cursor, args.cursorParam);
  return { items: [], nextCursor: null, cursorAt: () => '' };
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
