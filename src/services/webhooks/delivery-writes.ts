import { hiddenEventScopes } from '../../auth/access.ts';
import {
  WebhookDelivery as DeliveryEntity,
  type WebhookSubscription as Entity,
} from '../../entities/index.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { tryParseId } from '../../lib/ids.ts';
import { instant, z } from '../write-input.ts';
import { defineWrite, type WriteContext } from '../writes.ts';
import { type DeliveryJob, enqueueDeliveries } from './delivery-jobs.ts';
import { enableSubscription } from './enable-subscription.ts';
import { DISABLE_AFTER_HOURS } from './retry-schedule.ts';
import { subscriptionAnswer } from './subscription-answer.ts';
import { subscriptionOf } from './subscription-of.ts';
import { WebhookSubscription } from './webhook.resource.ts';

/**
 * Delivering again by hand (issue 17): one attempt of one event (the spec's retry), and every
 * event whose latest attempt failed since a time (Svix's recover, beyond the spec), which also
 * enables a subscription the failure rule disabled. Both queue attempts with trigger `manual`, in
 * the write's transaction; each is one attempt (no schedule after it) and shows in the log once it
 * has run. Both answer the subscription with 202.
 */

const disabledConflict = (s: Entity) =>
  new AppError(
    'conflict',
    `The subscription is disabled (${s.disabledReason ?? 'after repeated failures'}); recover it first: POST /v1/webhooks/${'{id}'}/recover.`,
  );

/** Attempt numbers go on from the latest of each event for this subscription. */
async function nextAttempts(w: WriteContext, subscription: number, events: number[]) {
  const rows = (await w.em
    .getConnection()
    .execute(
      `select "event_id" as "event", max("attempt") as "attempt" from "webhook_delivery" where "subscription_id" = ? and "event_id" in (${events.map(() => '?').join(', ')}) group by "event_id"`,
      [subscription, ...events],
      'all',
      w.em.getTransactionContext(),
    )) as { event: number; attempt: number }[];
  const latest = new Map(rows.map((r) => [Number(r.event), Number(r.attempt)]));
  return events.map(
    (event): DeliveryJob => ({
      subscription,
      event,
      attempt: (latest.get(event) ?? 0) + 1,
      trigger: 'manual',
    }),
  );
}

export const retryWebhookDelivery = defineWrite({
  name: 'retryWebhookDelivery',
  method: 'POST',
  path: '/webhooks/:id/deliveries/:delivery_id/retry',
  ids: { id: 'WebhookSubscription', delivery_id: 'WebhookDelivery' },
  status: 202,
  tag: 'Webhooks',
  summary: 'Retry a delivery',
  description:
    "Queues one more attempt of the delivery's event, at once, signed again. Accepted (202) with the subscription: the attempt shows in GET /v1/webhooks/{id}/deliveries as a new record with trigger manual once it has run (a manual attempt that fails is not retried on the schedule). A disabled subscription: 409 (recover it first); a deleted one, a delivery of another subscription, one whose event retention removed (with its deliveries), one of a chat.* event on a key without chat:read (not in its log either), or a subscription out of the key's sight (receiving a chat.* type, or every type, without chat:read): 404.",
  scopes: ['webhooks:manage'],
  input: z.strictObject({}),
  example: {},
  resource: WebhookSubscription,
  ifMatch: false,
  errors: {
    '409': {
      code: 'conflict',
      description: '`conflict`: the subscription is disabled; POST /v1/webhooks/{id}/recover enables it.',
      message: `The subscription is disabled (every delivery attempt failed for ${DISABLE_AFTER_HOURS} hours); recover it first: POST /v1/webhooks/{id}/recover.`,
    },
  },
  async run(w, _input, id) {
    const s = await subscriptionOf(w, id);
    const raw = w.params.delivery_id;
    const n = tryParseId('WebhookDelivery', String(raw));
    const d =
      n == null
        ? null
        : await w.em.findOne(DeliveryEntity, { id: n, subscription: s.id }, { fields: ['event'] });
    if (!d) throw notFound('webhook delivery', String(raw));
    const eventId = (d.event as unknown as { id: number }).id;
    // Retention deletes an event with its deliveries (so an old delivery is a 404 above); the lock
    // keeps it from doing so between that read and this commit, so a 202 never queues an attempt
    // that finds its event gone (and skips it unseen).
    const kept = (await w.em
      .getConnection()
      .execute(
        'select "id", "scope" from "event" where "id" = ? for key share',
        [eventId],
        'all',
        w.em.getTransactionContext(),
      )) as { id: number; scope: string }[];
    // An attempt of an event the key may not see (chat.* without chat:read) is out of its sight,
    // as in the log (deliveries.ts, visibleDeliveries): unknown, before a disabled one's 409.
    if (kept.length && hiddenEventScopes(w.principal).includes(kept[0].scope))
      throw notFound('webhook delivery', String(raw));
    if (!s.enabled) throw disabledConflict(s);
    if (!kept.length)
      throw new AppError(
        'not_found',
        `No webhook delivery with id '${raw}': its event is no longer kept (retention).`,
      );
    await enqueueDeliveries(w.em, await nextAttempts(w, s.id, [eventId]));
    return s.id;
  },
  shown: subscriptionAnswer({ secret: false }),
});

/** How many events one recover queues at most (the newest first; recover again for older ones). */
export const RECOVER_MAX = 10_000;

/**
 * The events a recover queues: those whose latest attempt since `since` failed, and those recorded
 * since `since` (and since the subscription was created) of a type it subscribes to that it never
 * received (no succeeded attempt): the events of a time it was disabled were queued for no one
 * (src/services/unit-of-work.ts queues only enabled subscriptions). The type rule is the one
 * applied when an event is recorded: its type listed, or the list empty (every type); a key
 * without chat:read got the types it may see listed at creation, so none widens here.
 */
const RECOVER_SQL = `select "event" from (
     select "event" from (
       select distinct on ("event_id") "event_id" as "event", "status"
       from "webhook_delivery" where "subscription_id" = ? and "attempted_at" >= ?
       order by "event_id", "attempted_at" desc, "id" desc
     ) as "latest" where "status" = 'failed'
     union
     select "e"."id" from "event" as "e"
     join "webhook_subscription" as "s" on "s"."id" = ? and "e"."clinic_id" = "s"."clinic_id"
     where "e"."created_at" >= greatest(?::timestamptz, "s"."created_at") and not "e"."test"
       and ("e"."type" = any("s"."event_types") or "s"."event_types" = '{}')
       and not exists (select 1 from "webhook_delivery" as "d"
         where "d"."subscription_id" = "s"."id" and "d"."event_id" = "e"."id" and "d"."status" = 'succeeded')
   ) as "due" order by "event" desc limit ${RECOVER_MAX}`;

export const recoverWebhook = defineWrite({
  name: 'recoverWebhook',
  method: 'POST',
  path: '/webhooks/:id/recover',
  ids: { id: 'WebhookSubscription' },
  status: 202,
  tag: 'Webhooks',
  summary: 'Recover failed deliveries',
  description: `Beyond the spec (as Svix has it): enables the subscription if it was disabled (its failure streak starts again) and queues one attempt, trigger manual, of every event whose latest attempt to it since \`since\` failed, and of every event recorded since \`since\` of a type it subscribes to that it never received (those of a time it was disabled included), at most ${RECOVER_MAX}, the newest. Accepted (202) with the subscription; the attempts show in its delivery log as they run. With \`since\` now, it only enables. A subscription out of the key's sight (receiving a chat.* type, or every type, without chat:read): 404.`,
  scopes: ['webhooks:manage'],
  input: z.strictObject({
    since: instant.meta({
      description:
        'Failed deliveries attempted at or after this time, and events recorded at or after it that were never delivered, are queued again (ISO 8601).',
    }),
  }),
  example: { since: '2026-11-01T00:00:00Z' },
  resource: WebhookSubscription,
  async run(w, input, id) {
    const s = await subscriptionOf(w, id);
    await enableSubscription(w, s);
    const failed = (await w.em
      .getConnection()
      .execute(RECOVER_SQL, [s.id, input.since, s.id, input.since], 'all', w.em.getTransactionContext())) as {
      event: number;
    }[];
    if (failed.length)
      await enqueueDeliveries(
        w.em,
        await nextAttempts(
          w,
          s.id,
          failed.map((r) => Number(r.event)),
        ),
      );
    return s.id;
  },
  shown: subscriptionAnswer({ secret: false }),
});
