import { type EventFanOut, setEventFanOut } from '../unit-of-work.ts';
import { enqueueDeliveries } from './delivery-jobs.ts';

/**
 * The one rule of which subscriptions an event `"ev"` is queued to (`"s"`, the clinic `?`): live
 * ones receiving its type, an empty `event_types` being every type. Real events and samples
 * (src/services/webhooks/sample-events.ts) both join by it.
 */
export const SUBSCRIBED_TO_EVENT = `"s"."clinic_id" = ? and "s"."enabled" and "s"."deleted_at" is null and ("ev"."type" = any("s"."event_types") or "s"."event_types" = '{}')`;

/**
 * The outbox's fan-out (src/services/unit-of-work.ts): every event a write records is queued, in
 * the write's transaction, to each subscription of its clinic it is for, first attempt.
 */
export const eventDeliveries: EventFanOut = {
  join: `"webhook_subscription" as "s" on ${SUBSCRIBED_TO_EVENT}`,
  target: '"s"."id"',
  queue: (tx, due) =>
    enqueueDeliveries(
      tx,
      due.map((d) => ({ subscription: d.target, event: d.event, attempt: 1, trigger: 'scheduled' })),
    ),
};

// Here, not in the unit of work: the mechanism does not know the domain that listens to it.
setEventFanOut(eventDeliveries);
