import { hiddenEventScopes } from '../../auth/access.ts';
import { type ListPage, type PageArgs, relayPageArgs, type SqlCondition, textArray } from '../../db/list.ts';
import { parseLimit } from '../../db/pagination.ts';
import { notFound } from '../../lib/errors.ts';
import { tryParseId } from '../../lib/ids.ts';
import type { RequestContext, ServiceContext } from '../../lib/request-context.ts';
import { type ChildList, firstPageOfParent, newestFirst, pageOfParent } from '../child-lists.ts';
import { type Row, type View, viewFor } from '../resource.ts';
import { WebhookDelivery } from './delivery.resource.ts';
import { getWebhook } from './webhooks.ts';

/**
 * The attempts a key may see: those of events it may see. An attempt shows its event's id and
 * type, so a chat.* event's attempts need chat:read besides webhooks:manage, by the rule of
 * GET /v1/events and through its one check (`hiddenEventScopes`, against the event's `scope`).
 */
export function visibleDeliveries(ctx: Pick<ServiceContext, 'principal'>): SqlCondition | null {
  const hidden = hiddenEventScopes(ctx.principal);
  if (!hidden.length) return null;
  return {
    sql: 'not exists (select 1 from "event" as "ev" where "ev"."id" = "e"."event_id" and "ev"."scope" = any(?::text[]))',
    params: [textArray(hidden)],
  };
}

/**
 * A subscription's delivery log (issue 17): its attempts, newest first by `attempted_at`, through
 * the one child-list mechanism (src/services/child-lists.ts), as a patient's treatments are. The
 * worker writes the rows; this is only their read.
 */
export const subscriptionDeliveries: ChildList = {
  resource: WebhookDelivery,
  keyset: newestFirst('whd', 'attemptedAt'),
  parent: 'subscription',
  visible: visibleDeliveries,
};

/** What every attempt shows of its subscription (`subscription {id, url}`). */
export const asParent = (s: Row): Row => ({ id: s.id, url: s.url });

/**
 * GET /v1/webhooks/{id}/deliveries: the subscription is read first, so a malformed, unknown,
 * deleted or another clinic's id is a 404 before any 422 of the page's parameters.
 */
export async function listDeliveries(ctx: ServiceContext, subscriptionId: string, args: PageArgs) {
  const subscription = await getWebhook(ctx, subscriptionId);
  const n = tryParseId('WebhookSubscription', subscriptionId) as number;
  return pageOfParent(
    ctx,
    subscriptionDeliveries,
    n,
    asParent(subscription),
    viewFor(WebhookDelivery),
    {},
    args,
  );
}

/**
 * GraphQL: the log of a subscription already presented. The first page is batched for every
 * subscription of the request (one statement for a page of them); later pages follow `after`.
 */
export async function deliveriesOf(
  ctx: ServiceContext & Pick<RequestContext, 'loaders'>,
  subscription: Row,
  view: View,
  args: { first?: number | null; after?: string | null },
): Promise<ListPage<Row>> {
  const n = tryParseId('WebhookSubscription', String(subscription.id));
  if (n == null) throw notFound('webhook subscription', String(subscription.id));
  const parent = asParent(subscription);
  if (args.after == null) {
    const limit = parseLimit(args.first ?? undefined, 'first');
    return firstPageOfParent(ctx, subscriptionDeliveries, n, parent, view, {}, { limit });
  }
  return pageOfParent(ctx, subscriptionDeliveries, n, parent, view, {}, relayPageArgs(args));
}
