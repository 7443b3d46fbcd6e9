import { allOf } from '../../auth/scopes.ts';
import { relayPageArgs } from '../../db/list.ts';
import type { RequestContext } from '../../lib/request-context.ts';
import { viewOfSelection } from '../../services/resource.ts';
import {
  asParent,
  deliveriesOf,
  listDeliveries,
  subscriptionDeliveries,
} from '../../services/webhooks/deliveries.ts';
import { WebhookDelivery } from '../../services/webhooks/delivery.resource.ts';
import { WebhookSubscription } from '../../services/webhooks/webhook.resource.ts';
import { getWebhook, listWebhooks } from '../../services/webhooks/webhooks.ts';
import { builder } from '../builder.ts';
import { childListField, prefetchChildPages, prefetchedPage, registerChildFields } from '../child-pages.ts';
import { type Face, nameOn } from '../face-args.ts';
import { nodeType, objectType } from '../resource-types.ts';
import { selectedFields } from '../selection.ts';
import { connectionField, restOne, restPage, toConnection, toRestPage } from '../shared.ts';

/**
 * Webhook subscriptions read: GET /v1/webhooks and /v1/webhooks/{id} (Rest fields), the Public
 * `webhooks` connection and `node(id:)`, over src/services/webhooks/webhooks.ts. Their creation
 * and deletion are write definitions (src/services/webhooks/webhook-writes.ts).
 */
export const WebhookSubscriptionType = nodeType(WebhookSubscription, (id, ctx) => getWebhook(ctx, id));

const authScopes = allOf(WebhookSubscription.scopes);

/** An attempt of the delivery log; read only through its subscription (no node(id:)). */
const WebhookDeliveryType = objectType(WebhookDelivery);

/** The delivery log's order, naming the field as `face` does. */
const log = (face: Face) =>
  `Delivery attempts, newest first by ${nameOn(face, 'attempted_at')}; a retry is another attempt. Attempts of chat.* events only with chat:read (as the events list).`;

const ORDER =
  "Oldest first; secrets masked. Deleted subscriptions are not listed, nor those out of the key's sight (receiving a chat.* type, or every type, without chat:read).";

builder.queryFields((t) => ({
  webhooks: connectionField(t, WebhookSubscriptionType, {
    subGraphs: ['Public'],
    nullable: true,
    authScopes,
    description: `The clinic's webhook subscriptions. ${ORDER}`,
    resolve: async (_root, args, ctx: RequestContext, info) => {
      const page = await listWebhooks(ctx, relayPageArgs(args));
      await prefetchChildPages(ctx, info, page.items);
      return toConnection(page);
    },
  }),
  listWebhooks: t.field({
    type: restPage('WebhookSubscriptionPage', WebhookSubscriptionType),
    subGraphs: ['Rest'],
    authScopes,
    description: ORDER,
    args: {
      limit: t.arg({ type: 'Limit', required: false, description: 'Page size, 1 to 100 (default 25).' }),
      cursor: t.arg.string({ required: false, description: 'next_cursor of the previous page, verbatim.' }),
    },
    resolve: async (_root, args, ctx: RequestContext) => toRestPage(await listWebhooks(ctx, args)),
  }),
  getWebhook: t.field({
    type: restOne('WebhookSubscriptionBody', WebhookSubscriptionType),
    subGraphs: ['Rest'],
    description: 'One webhook subscription, its secret masked; 404 when the clinic has none with that id.',
    authScopes,
    args: { id: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx: RequestContext) => ({ data: await getWebhook(ctx, args.id) }),
  }),
  listWebhookDeliveries: t.field({
    type: restPage('WebhookDeliveryPage', WebhookDeliveryType),
    subGraphs: ['Rest'],
    authScopes,
    description: log('Rest'),
    args: {
      id: t.arg.string({ required: true, description: 'Webhook subscription id.' }),
      limit: t.arg({ type: 'Limit', required: false, description: 'Page size, 1 to 100 (default 25).' }),
      cursor: t.arg.string({ required: false, description: 'next_cursor of the previous page, verbatim.' }),
    },
    resolve: async (_root, args, ctx: RequestContext) => toRestPage(await listDeliveries(ctx, args.id, args)),
  }),
}));

builder.objectFields(WebhookSubscriptionType, (t) => ({
  deliveries: connectionField(t, WebhookDeliveryType, {
    subGraphs: ['Public'],
    nullable: true,
    authScopes: allOf(WebhookDelivery.scopes),
    description: log('Public'),
    resolve: async (s, args, ctx: RequestContext, info) => {
      const planned = prefetchedPage(s, info);
      if (planned) return toConnection(planned);
      const view = viewOfSelection(WebhookDelivery, selectedFields(info, ['edges', 'node']));
      return toConnection(await deliveriesOf(ctx, s, view, args));
    },
  }),
}));

/** A page of subscriptions plans its items' first pages of deliveries (src/schema/child-pages.ts). */
registerChildFields(WebhookSubscriptionType, [
  childListField('deliveries', subscriptionDeliveries, { parentOf: asParent }),
]);
