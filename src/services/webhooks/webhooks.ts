import { hiddenEventTypes, seesEventTypes, visibleEventTypes } from '../../auth/access.ts';
import {
  type ListPage,
  mapPage,
  type PageArgs,
  readByIds,
  readPage,
  type SqlCondition,
  textArray,
} from '../../db/list.ts';
import { WebhookSubscription as Entity } from '../../entities/index.ts';
import { EVENT_TYPES, type EventType } from '../../events/types.ts';
import { bareHost, rangeRefusal, refusedHost, urlPolicy } from '../../lib/address-policy.ts';
import type { ClinicMode } from '../../lib/clinic-mode.ts';
import { invalid, notFound } from '../../lib/errors.ts';
import { tryParseId } from '../../lib/ids.ts';
import { readsOf, type ServiceContext } from '../../lib/request-context.ts';
import { oldestFirst } from '../child-lists.ts';
import { eventTypesParam } from '../events/events.ts';
import { CORE, type Row, standaloneView } from '../resource.ts';
import { WebhookSubscription } from './webhook.resource.ts';

/**
 * Webhook subscriptions (spec, "Webhook subscriptions"; issue 17): the clinic's list and one by
 * id, and the rules a new one is checked against. A deleted subscription keeps its row (its
 * delivery log points at it) and is out of sight: not listed, a 404 by id. So is one the key may
 * not see (`seesSubscription`).
 */
const byOldest = oldestFirst('wh', 'createdAt');

const view = standaloneView(WebhookSubscription, CORE);
const notDeleted = { deletedAt: null };

/**
 * The one visibility rule of webhook subscriptions (issue 34): a key sees a subscription, and may
 * act on it in any way, only if it may see every type the subscription receives (`[]` is every
 * type, chat.* included). Otherwise the subscription is out of the key's sight as another
 * clinic's is: not listed, and a 404 on every route that names it (read, change, delete, rotate,
 * test, recover, its log, a retry) and on an Idempotency-Key replay of an answer about it. A key
 * that may not receive patients' chat messages must not redirect, re-key, sample or even see
 * the receiver of a subscription that gets them. `visibleSubscriptions` says the same in SQL.
 */
export function seesSubscription(ctx: Pick<ServiceContext, 'principal'>, types: readonly string[]): boolean {
  return seesEventTypes(ctx.principal, types.length ? (types as EventType[]) : EVENT_TYPES);
}

/** `seesSubscription` as an SQL condition on the subscription `alias`: none when the key sees every type. */
export function visibleSubscriptions(
  ctx: Pick<ServiceContext, 'principal'>,
  alias = 'e',
): SqlCondition | undefined {
  const hidden = hiddenEventTypes(ctx.principal);
  if (!hidden.length) return undefined;
  return {
    sql: `cardinality("${alias}"."event_types") > 0 and not ("${alias}"."event_types" && ?::text[])`,
    params: [textArray(hidden)],
  };
}

/** The 404 of a subscription the key may not see, the same as an unknown one's. */
export function assertSeesSubscription(
  ctx: Pick<ServiceContext, 'principal'>,
  s: { eventTypes: readonly string[] },
  id: string,
): void {
  if (!seesSubscription(ctx, s.eventTypes)) throw notFound('webhook subscription', id);
}

/** A cursor page of the clinic's subscriptions the key sees, oldest first (the one list mechanism). */
export async function listWebhooks(ctx: ServiceContext, args: PageArgs): Promise<ListPage<Row>> {
  const page = await readPage(
    readsOf(ctx),
    Entity,
    byOldest,
    view.read,
    [notDeleted],
    args,
    undefined,
    visibleSubscriptions(ctx),
  );
  return mapPage(page, (row) => view.present(row, ctx.principal));
}

/** The subscription's columns, `deletedAt` (a deleted one is a 404) and its types (the rule). */
const readWithDeleted = Object.freeze({
  fields: Object.freeze([...new Set([...view.read.fields, 'deletedAt', 'eventTypes'])]),
  joins: view.read.joins,
});

/**
 * One subscription, secret masked; malformed, unknown, deleted, another clinic's or out of the
 * key's sight (`seesSubscription`): 404.
 */
export async function getWebhook(ctx: ServiceContext, id: string): Promise<Row> {
  const n = tryParseId('WebhookSubscription', id);
  const [row] = n == null ? [null] : await readByIds(readsOf(ctx), Entity, readWithDeleted, [n]);
  if (!row || row.deletedAt != null) throw notFound('webhook subscription', id);
  assertSeesSubscription(ctx, row as { eventTypes: string[] }, id);
  return view.present(row, ctx.principal);
}

/**
 * The types a new subscription stores: unknown ones are a 422 naming them, a chat.* type without
 * chat:read a 403 (as the events list's filter: `eventTypesParam`). Omitted or empty: [] (every
 * type, the spec's "empty means every type") for a key that may see every type; for a key that
 * may not (no chat:read), every type it may see, listed, so the subscription never widens.
 */
export function subscribedTypes(ctx: ServiceContext, raw: string[] | undefined): EventType[] {
  const asked = eventTypesParam(ctx, raw, 'event_types');
  if (asked) return asked;
  const visible = visibleEventTypes(ctx.principal);
  return visible.length < EVENT_TYPES.length ? visible : [];
}

/** How long a lookup of the URL's host may take at creation before it is given up (accepted). */
const LOOKUP_TIMEOUT_MS = 5000;

/**
 * The delivery URL's checks at creation (422 `url`), by the clinic's mode: https (a test clinic's
 * may be plain http); no credentials in it; its host, resolved, must be public unicast (loopback
 * too for a test clinic), as media downloads check (src/lib/address-policy.ts, docs/test-mode.md).
 * A host that does not resolve (yet) is accepted: deliveries check the address again when they
 * connect (DNS rebinding), and a lookup failing now says nothing about later.
 */
export async function checkDeliveryUrl(raw: string, mode: ClinicMode): Promise<string> {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw invalid('url', 'url is not a valid URL.');
  }
  const checked = urlPolicy(u, mode, 'url');
  if ('refused' in checked) throw invalid('url', checked.message);
  if (u.username || u.password) throw invalid('url', 'url must not carry a user name or password.');
  const { policy } = checked;
  const host = bareHost(u);
  let timer: NodeJS.Timeout | undefined;
  const range = await Promise.race([
    refusedHost(host, policy).catch(() => null),
    new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), LOOKUP_TIMEOUT_MS);
    }),
  ]).finally(() => clearTimeout(timer));
  if (range) throw invalid('url', rangeRefusal(range, 'url'));
  return u.toString();
}
