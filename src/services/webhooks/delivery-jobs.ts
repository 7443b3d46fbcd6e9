import type { EntityManager } from '@mikro-orm/postgresql';
import type { GroupCap } from '../../lib/group-slots.ts';
import { deleteWaitingInGroup, enqueueInTransaction, type QueueDefinition } from '../../lib/job-queue.ts';
import type { QueuedBy } from '../../lib/job-scope.ts';

/**
 * The delivery queue's jobs (issue 17, Delivery): one job per attempt to deliver one event to one
 * subscription. The first attempts are created by the write that records the event, in its
 * transaction (src/services/unit-of-work.ts); each later one by the attempt before it (the retry
 * schedule, src/services/webhooks/retry-schedule.ts) or by a manual retry or recover. pg-boss's own retries only
 * take back an attempt whose worker died (heartbeat); the schedule is ours, on the injected clock.
 */
export const DELIVERY_QUEUE = 'webhook-delivery';

export interface DeliveryJob extends QueuedBy {
  subscription: number;
  event: number;
  /** The attempt's number for this event and subscription: 1 for the first. */
  attempt: number;
  trigger: 'scheduled' | 'manual';
}

export const deliveryQueue: QueueDefinition = {
  name: DELIVERY_QUEUE,
  options: {
    notify: true,
    // Only for an attempt whose worker died or hung: the next scheduled attempt is a new job.
    retryLimit: 5,
    retryDelay: 5,
    // A worker that stops heartbeating (killed) gives its job back within about a minute.
    heartbeatSeconds: 30,
    expireInSeconds: 120,
    retentionSeconds: 3 * 24 * 3600,
    deleteAfterSeconds: 24 * 3600,
  },
};

/** The subscription's group: the jobs of one subscription, capped together (deliverySlots). */
export const deliveryGroup = (subscription: number) => ({ id: `wh_${subscription}` });

/** The advisory lock class of a subscription's first delivery slot ('wh' and slot 0; the second key is the subscription id). */
const DELIVERY_SLOT_LOCK = 0x7768_0000;

/**
 * At most `perSubscription` attempts of one subscription at once, across every worker process:
 * one advisory lock per slot (src/lib/group-slots.ts), classes DELIVERY_SLOT_LOCK + slot.
 */
export const deliverySlots = (perSubscription: number): GroupCap => ({
  perGroup: perSubscription,
  lockClass: DELIVERY_SLOT_LOCK,
  keyOf: (group) => Number(group.slice('wh_'.length)),
  groupOf: (key) => deliveryGroup(key).id,
});

/** Creates delivery jobs in the transaction `em` is in; `startAfter` in seconds from now. */
export function enqueueDeliveries(em: EntityManager, jobs: DeliveryJob[], startAfterSeconds?: number) {
  return enqueueInTransaction(
    em,
    DELIVERY_QUEUE,
    jobs.map((data) => ({
      data,
      group: deliveryGroup(data.subscription),
      // Seconds from the database's now, not the (injectable) clock's: pg-boss compares with its own.
      ...(startAfterSeconds ? { startAfter: Math.ceil(startAfterSeconds) } : {}),
    })),
  );
}

/**
 * Deletes the subscription's queued attempts (first ones and scheduled retries) in the transaction
 * `em` is in: DELETE's "nothing more is delivered" without waiting for each job to find the
 * subscription deleted (which the attempt checks anyway, for a job already in a worker's hands).
 */
export async function cancelDeliveries(em: EntityManager, subscription: number): Promise<void> {
  await deleteWaitingInGroup(em, DELIVERY_QUEUE, deliveryGroup(subscription).id);
}
