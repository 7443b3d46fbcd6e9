import { WebhookDelivery as DeliveryEntity, WebhookSubscription as Entity } from '../../entities/index.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { tryParseId } from '../../lib/ids.ts';
import { instant, z } from '../write-input.ts';
import { defineWrite, type WriteContext } from '../writes.ts';
import { type DeliveryJob, enqueueDeliveries } from './delivery-jobs.ts';
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

/** The subscription of the path, locked; deleted: a 404 as an unknown one. */
async function subscriptionOf(w: WriteContext, id: string | undefined): Promise<Entity> {
  const s = await w.load(Entity, 'WebhookSubscription', id);
  if (s.deletedAt) throw notFound('webhook subscription', String(id));
  return s;
}

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
    "Queues one more attempt of the delivery's event, at once, signed again. Accepted (202) with the subscription: the attempt shows in GET /v1/webhooks/{id}/deliveries as a new record with trigger manual once it has run (a manual attempt that fails is not retried on the schedule). A disabled subscription: 409 (recover it first); a deleted one, or a delivery of another subscription: 404.",
  scopes: ['webhooks:manage'],
  input: z.strictObject({}),
  example: {},
  resource: WebhookSubscription,
  ifMatch: false,
  errors: {
    '409': {
      code: 'conflict',
      description: '`conflict`: the subscription is disabled; POST /v1/webhooks/{id}/recover enables it.',
      message:
        'The subscription is disabled (every delivery attempt failed for 72 hours); recover it first: POST /v1/webhooks/{id}/recover.',
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
    if (!s.enabled) throw disabledConflict(s);
    const eventId = (d.event as unknown as { id: number }).id;
    await enqueueDeliveries(w.em, await nextAttempts(w, s.id, [eventId]));
    return s.id;
  },
});

/** How many events one recover queues at most (the newest first; recover again for older ones). */
export const RECOVER_MAX = 10_000;

export const recoverWebhook = defineWrite({
  name: 'recoverWebhook',
  method: 'POST',
  path: '/webhooks/:id/recover',
  ids: { id: 'WebhookSubscription' },
  status: 202,
  tag: 'Webhooks',
  summary: 'Recover failed deliveries',
  description: `Beyond the spec (as Svix has it): enables the subscription if it was disabled (its failure streak starts again) and queues one attempt, trigger manual, of every event whose latest attempt to it since \`since\` failed (at most ${RECOVER_MAX}, the newest). Accepted (202) with the subscription; the attempts show in its delivery log as they run. With \`since\` now, it only enables.`,
  scopes: ['webhooks:manage'],
  input: z.strictObject({
    since: instant.meta({
      description: 'Failed deliveries attempted at or after this time are queued again (ISO 8601).',
    }),
  }),
  example: { since: '2026-11-01T00:00:00Z' },
  resource: WebhookSubscription,
  async run(w, input, id) {
    const s = await subscriptionOf(w, id);
    if (!s.enabled) {
      s.enabled = true;
      s.disabledAt = null;
      s.disabledReason = null;
      s.failingSince = null;
      s.consecutiveFailures = 0;
      await w.em.flush();
    }
    const failed = (await w.em.getConnection().execute(
      `select "event" from (
         select distinct on ("event_id") "event_id" as "event", "status", "attempted_at"
         from "webhook_delivery" where "subscription_id" = ? and "attempted_at" >= ?
         order by "event_id", "attempted_at" desc, "id" desc
       ) as "latest" where "status" = 'failed' order by "event" desc limit ${RECOVER_MAX}`,
      [s.id, input.since],
      'all',
      w.em.getTransactionContext(),
    )) as { event: number }[];
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
});
