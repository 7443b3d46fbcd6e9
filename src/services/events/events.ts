import { eventTypesRefusal, hiddenEventScopes } from '../../auth/access.ts';
import { type ListPage, mapPage, type PageArgs, readByIds, readPage } from '../../db/list.ts';
import { Event } from '../../entities/index.ts';
import { EVENT_TYPES, type EventType, isEventType } from '../../events/types.ts';
import { invalid, notFound } from '../../lib/errors.ts';
import { tryParseId } from '../../lib/ids.ts';
import { readsOf, type ServiceContext } from '../../lib/request-context.ts';
import { newestFirst, oldestFirst } from '../child-lists.ts';
import { instantParam } from '../params.ts';
import { CORE, type Row, standaloneView } from '../resource.ts';
import { EventEnvelope } from './event.resource.ts';

/**
 * The outbox read back (GET /v1/events, GET /v1/events/{id}, the `events` connection): the one
 * list mechanism over the `event` table, newest first; with `created_since`, oldest first for
 * incremental sync (as `updated_since` on the record lists). chat.* events only for keys that
 * hold chat:read, the rule webhook subscriptions follow (docs/decisions.md, Events).
 */
const byNewest = newestFirst('evt', 'createdAt');
/** The order of `created_since`. Its own tag, so cursors never cross. */
const byOldest = oldestFirst('evts', 'createdAt');

const view = standaloneView(EventEnvelope, CORE);

export interface EventListArgs extends PageArgs {
  /** REST: one or more types, repeated or comma-separated (CommaList); GraphQL: a list. */
  type?: unknown;
  created_since?: unknown;
  /** The name of the type filter in 422s (GraphQL: types). */
  typeParam?: string;
}

/**
 * The `type` filter: a 422 naming the first unknown type; a 403 for a type the key may not see
 * (a chat.* type without chat:read), as creating such a subscription is.
 */
export function eventTypesParam(ctx: ServiceContext, raw: unknown, param = 'type'): EventType[] | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  const values = (Array.isArray(raw) ? raw : [raw]).flatMap((v) => String(v).split(','));
  const types = new Set<EventType>();
  // An empty list (GraphQL `types: []`) is no filter, as an empty REST `type` is.
  if (values.length === 0) return undefined;
  for (const v of values) {
    if (!isEventType(v))
      throw invalid(param, `Unknown event type '${v}'. Known types: ${EVENT_TYPES.join(', ')}.`);
    types.add(v);
  }
  const refused = eventTypesRefusal(ctx.principal, [...types]);
  if (refused) throw refused;
  return [...types];
}

export async function listEvents(ctx: ServiceContext, args: EventListArgs): Promise<ListPage<Row>> {
  const types = eventTypesParam(ctx, args.type, args.typeParam);
  const since = instantParam(args.created_since, 'created_since');
  // Sample events (POST /v1/webhooks/{id}/test) are delivered only, never listed.
  const where: object[] = [{ test: false }];
  if (types) where.push({ type: { $in: types } });
  const hidden = hiddenEventScopes(ctx.principal);
  if (hidden.length) where.push({ scope: { $nin: hidden } });
  if (since) where.push({ createdAt: { $gte: since } });
  const page = await readPage(readsOf(ctx), Event, since ? byOldest : byNewest, view.read, where, args);
  return mapPage(page, (row) => view.present(row, ctx.principal));
}

/** One envelope; a malformed id, another clinic's, or a chat event the key may not see: 404. */
export async function getEvent(ctx: ServiceContext, id: string): Promise<Row> {
  const n = tryParseId('Event', id);
  const [row] = n == null ? [null] : await readByIds(readsOf(ctx), Event, readWithScope, [n]);
  if (!row || row.test || hiddenEventScopes(ctx.principal).includes(row.scope)) throw notFound('event', id);
  return view.present(row, ctx.principal);
}

/** The envelope's columns, the event's `scope` (to hide what the key may not see) and whether it is a sample. */
const readWithScope = Object.freeze({
  fields: Object.freeze([...view.read.fields, 'scope', 'test']),
  joins: view.read.joins,
});
