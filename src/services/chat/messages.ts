import { firstOfParents, type ListPage, mapPage, type PageArgs, readByIds, readPage } from '../../db/list.ts';
import { decodeCursor, parseLimit } from '../../db/pagination.ts';
import { Message as MessageEntity } from '../../entities/index.ts';
import { notFound } from '../../lib/errors.ts';
import { parseMessageId, tryParseId } from '../../lib/ids.ts';
import { loader, type RequestContext, readsOf, type ServiceContext } from '../../lib/request-context.ts';
import { emptyPage, firstPageOf } from '../child-lists.ts';
import type { Row, View } from '../resource.ts';
import { getConversationRow } from './conversations.ts';
import { type MessageFilterArgs, messageFilters } from './filters.ts';
import { messagesBySeq, messagesNewestFirst, syncStart } from './keysets.ts';
import { MatchedPatients } from './matched-patients.ts';
import { phoneOfPatient, phonesOfPatients } from './patient-phone.ts';

export type MessageListArgs = MessageFilterArgs & PageArgs & { view: View };

/** The filters of the message listings as conditions (timestamps bound created_at: from ≤ t < to). */
function messageWhere(ctx: ServiceContext, args: MessageFilterArgs) {
  const f = messageFilters(args, ctx.principal.country);
  const where: object[] = [];
  if (f.direction) where.push({ direction: f.direction });
  if (f.type) where.push({ type: f.type });
  if (f.phone) where.push({ patientPhone: f.phone });
  if (f.from) where.push({ createdAt: { $gte: f.from } });
  if (f.to) where.push({ createdAt: { $lt: f.to } });
  if (f.updatedSince) where.push({ updatedAt: { $gte: f.updatedSince } });
  const start = f.updatedSince ? syncStart('message', ctx.principal.clinicId, f.updatedSince) : undefined;
  return { where, start, keyset: f.updatedSince ? messagesBySeq : messagesNewestFirst };
}

async function pageOf(ctx: ServiceContext, args: MessageListArgs, extra: object[]): Promise<ListPage<Row>> {
  const { where, keyset, start } = messageWhere(ctx, args);
  const page = await readPage(
    readsOf(ctx),
    MessageEntity,
    keyset,
    args.view.read,
    [...extra, ...where],
    args,
    start,
  );
  const pc = await MatchedPatients.context(ctx, page.items, 'patientPhone');
  return mapPage(page, (row) => args.view.present(row, pc));
}

/** GET /v1/chat/messages: inbound and outbound across conversations, newest first. */
export const listMessages = (ctx: ServiceContext, args: MessageListArgs) => pageOf(ctx, args, []);

/** GET /v1/chat/conversations/{id}/messages; 404 for an unknown conversation. */
export async function listConversationMessages(
  ctx: ServiceContext,
  conversationId: string,
  args: MessageListArgs,
) {
  // The filters' form first (a bad date is a 422 naming it, whatever the id), then the lookup.
  messageFilters(args, ctx.principal.country);
  const conversation = await getConversationRow(ctx, conversationId, idOnly);
  return pageOf(ctx, args, [{ conversation: conversation.id }]);
}

/**
 * GraphQL: a conversation's messages. The first page without filters is batched for every
 * conversation of the request (one statement for the messages of a page of conversations, one
 * for their matched patients); any other page reads on its own.
 */
export async function messagesOfConversation(
  ctx: ServiceContext & Pick<RequestContext, 'loaders'>,
  conversationId: string,
  args: MessageListArgs & { first?: number | null; after?: string | null },
): Promise<ListPage<Row>> {
  const n = tryParseId('Conversation', conversationId);
  const limit = firstMessagesLimit(ctx, args);
  if (n == null || limit == null) return listConversationMessages(ctx, conversationId, args);
  const view = args.view;
  return loader<number, ListPage<Row>>(ctx, `conversation-messages:${limit}:${view.key}`, (ids) =>
    firstMessagesOfConversations(ctx, ids, view, limit),
  ).load(n);
}

/**
 * GraphQL: a patient's messages (those of the patient's phone). The first page without filters
 * is batched for every patient of the request: their phones, the messages of those phones and
 * the messages' matched patients in three statements; any other page reads on its own.
 */
export async function messagesOfPatient(
  ctx: ServiceContext & Pick<RequestContext, 'loaders'>,
  patientId: string,
  args: MessageListArgs & { first?: number | null; after?: string | null },
): Promise<ListPage<Row>> {
  const n = tryParseId('Patient', patientId);
  const limit = firstMessagesLimit(ctx, args);
  if (n == null || limit == null) return listPatientMessages(ctx, patientId, args);
  const view = args.view;
  return loader<number, ListPage<Row>>(ctx, `patient-messages:${limit}:${view.key}`, (ids) =>
    firstMessagesOfPatients(ctx, ids, view, limit),
  ).load(n);
}

/**
 * The page size of a first page without filters (which many parents read at once), or null for
 * any other page. Throws what the filters' checks refuse.
 */
export function firstMessagesLimit(
  ctx: Pick<ServiceContext, 'principal'>,
  args: MessageFilterArgs & { first?: number | null; after?: string | null },
): number | null {
  const filtered = Object.values(messageFilters(args, ctx.principal.country)).some((v) => v !== undefined);
  return filtered || args.after != null ? null : parseLimit(args.first ?? undefined, 'first');
}

/**
 * The first pages (no filters, `limit` each) of many conversations' messages at once: one
 * statement for the messages, one for their matched patients.
 */
export async function firstMessagesOfConversations(
  ctx: ServiceContext,
  conversationIds: readonly number[],
  view: View,
  limit: number,
): Promise<ListPage<Row>[]> {
  return firstMessagesOf(ctx, 'conversation', conversationIds, view, limit);
}

/**
 * The first pages (no filters, `limit` each) of many patients' messages at once: those of their
 * phones (an empty page for a patient without one, or unknown), with the phones and the
 * messages' matched patients, three statements.
 */
export async function firstMessagesOfPatients(
  ctx: ServiceContext & Partial<Pick<RequestContext, 'loaders'>>,
  patientIds: readonly number[],
  view: View,
  limit: number,
): Promise<ListPage<Row>[]> {
  const phones = await phonesOfPatients(ctx, patientIds);
  const distinct = [...new Set(phones.filter((p) => typeof p === 'string'))];
  const pages = distinct.length ? await firstMessagesOf(ctx, 'patientPhone', distinct, view, limit) : [];
  const byPhone = new Map(distinct.map((phone, i) => [phone, pages[i]]));
  return phones.map((phone) => (phone && byPhone.get(phone)) || emptyPage());
}

/** The first pages of many parents' messages, newest first: one statement, and one for their matched patients. */
async function firstMessagesOf(
  ctx: ServiceContext,
  parent: 'conversation' | 'patientPhone',
  keys: readonly number[] | readonly string[],
  view: View,
  limit: number,
): Promise<ListPage<Row>[]> {
  const lists = await firstOfParents(
    readsOf(ctx),
    MessageEntity,
    messagesNewestFirst,
    parent,
    view.read,
    keys,
    limit + 1,
  );
  const pc = await MatchedPatients.context(ctx, lists.flat(), 'patientPhone');
  return lists.map((rows) => firstPageOf(messagesNewestFirst, rows, limit, (row) => view.present(row, pc)));
}

/**
 * GET /v1/patients/{id}/chat/messages: the messages of the patient's phone; an empty page when
 * the patient has no phone (spec). Only limit and cursor.
 */
export async function listPatientMessages(
  ctx: ServiceContext,
  patientId: string,
  args: MessageListArgs,
): Promise<ListPage<Row>> {
  const phone = await phoneOfPatient(ctx, patientId);
  if (!phone) {
    // Still checks the filters, limit and cursor, so a bad one is a 422 whatever the phone.
    messageWhere(ctx, args);
    parseLimit(args.limit, args.limitParam);
    decodeCursor(messagesNewestFirst, args.cursor, args.cursorParam);
    return emptyPage();
  }
  return pageOf(ctx, args, [{ patientPhone: phone }]);
}

const idOnly = { read: { fields: [], joins: {} }, present: (r: Row) => r, key: 'id-only' } as View;

export async function getMessageRow(ctx: ServiceContext, id: string, view: View): Promise<Row> {
  const parsed = parseMessageId(id);
  const [row] = parsed == null ? [null] : await readByIds(readsOf(ctx), MessageEntity, view.read, [parsed.n]);
  // in_5 names an inbound message: an outbound one with that number is another id.
  if (!row || row.direction !== parsed?.direction) throw notFound('message', id);
  return row;
}

/** GET /v1/chat/messages/{id}: prefixed ids only (a bare number is a 404). */
export async function getMessage(ctx: ServiceContext, id: string, view: View): Promise<Row> {
  const row = await getMessageRow(ctx, id, view);
  return view.present(row, await MatchedPatients.context(ctx, [row], 'patientPhone'));
}

/** A message by its number, either direction, as GET /v1/chat/messages/{id} answers it (a write's answer). */
export async function presentMessage(ctx: ServiceContext, n: number, view: View): Promise<Row> {
  const [row] = await readByIds(readsOf(ctx), MessageEntity, view.read, [n]);
  if (!row) throw new Error(`Message ${n} vanished inside its own write.`);
  return view.present(row, await MatchedPatients.context(ctx, [row], 'patientPhone'));
}
