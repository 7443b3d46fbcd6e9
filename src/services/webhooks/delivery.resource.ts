import { EventTypeSet } from '../../events/types.ts';
import { defineEnum } from '../../lib/enums.ts';
import { defineResource, defineShape, f } from '../resource.ts';

/** How much of a receiver's response body an attempt keeps (characters), truncated before it is stored. */
export const RESPONSE_EXCERPT_MAX = 1024;

/** The stored excerpt of a response body: its first RESPONSE_EXCERPT_MAX characters (the worker stores this). */
export const responseExcerpt = (body: string): string =>
  body.length <= RESPONSE_EXCERPT_MAX ? body : body.slice(0, RESPONSE_EXCERPT_MAX);

export const DeliveryTrigger = defineEnum('WebhookDeliveryTrigger', 'What started a delivery attempt.', {
  scheduled: 'The first attempt of an event, or an automatic retry after a failed one.',
  manual: 'A retry asked for through the API: retrying one attempt, or recovering a subscription.',
});

export const DeliveryStatus = defineEnum('WebhookDeliveryStatus', 'How a delivery attempt ended.', {
  succeeded: 'The receiver answered with a 2xx status.',
  failed: 'Any other status, or no answer (timeout, connection error, not sent).',
});

/** The subscription an attempt belongs to (the list's parent, attached, never read again). */
const DeliverySubscription = defineShape(
  'WebhookDeliverySubscription',
  {
    id: f.id({ description: 'The subscription id (wh_…).' }),
    url: f.column('url', 'String', { description: 'The endpoint the event was posted to.' }),
  },
  'The webhook subscription an attempt delivered to.',
);

/** The event an attempt delivered. */
const DeliveredEvent = defineShape(
  'WebhookDeliveryEvent',
  {
    id: f.id({ description: 'The event id (evt_…): GET /v1/events/{id} reads it whole.' }),
    type: f.column('type', 'String', { enum: EventTypeSet, description: 'The event type.' }),
  },
  'The event an attempt delivered.',
);

/**
 * One attempt to deliver one event to one subscription (docs/decisions.md, Webhook delivery log):
 * GET /v1/webhooks/{id}/deliveries, newest first. A retry, scheduled or manual, is another record.
 * A record is written when its attempt ends (src/webhooks/attempt.ts): there is no pending one.
 */
export const WebhookDelivery = defineResource({
  name: 'WebhookDelivery',
  kind: 'WebhookDelivery',
  scopes: ['webhooks:manage'],
  description:
    'One attempt to deliver an event to a webhook subscription, recorded when it ended (an attempt queued or under way has no record yet).',
  fields: {
    id: f.id({ description: 'The attempt id (whd_…); a manual retry names it.' }),
    subscription: f.join('subscription', 'WebhookSubscription', DeliverySubscription, {
      fromParent: true,
      description: 'The subscription it delivered to.',
    }),
    event: f.join('event', 'Event', DeliveredEvent, { description: 'The event it delivered.' }),
    trigger: f.column('trigger', 'String', {
      enum: DeliveryTrigger,
      description: 'scheduled (the first attempt and the automatic retries) or manual (a retry asked for).',
    }),
    status: f.column('status', 'String', {
      enum: DeliveryStatus,
      description: 'succeeded (a 2xx answer) or failed (anything else, or no answer).',
    }),
    attempt: f.column('attempt', 'Int', {
      description: "This attempt's number for the event and subscription: 1 for the first.",
    }),
    attempted_at: f.time('attemptedAt', { description: 'When the attempt started.' }),
    response_status: f.column('responseStatus', 'Int', {
      nullable: true,
      description: "The receiver's HTTP status; null when none came (timeout, connection error, not sent).",
    }),
    duration_ms: f.column('durationMs', 'Int', {
      nullable: true,
      description: 'From the start of the attempt to the answer or the failure, in milliseconds.',
    }),
    response_excerpt: f.column('responseExcerpt', 'String', {
      nullable: true,
      description: `The response body's first ${RESPONSE_EXCERPT_MAX} characters; null when there was none.`,
    }),
    error: f.column('error', 'String', {
      nullable: true,
      description: 'Why the attempt failed (timeout, connection refused, non-2xx status, …); null otherwise.',
    }),
    next_attempt_at: f.time('nextAttemptAt', {
      nullable: true,
      description:
        'After a failed attempt, when the next automatic one is due; null when none will be (success, retries exhausted, subscription disabled).',
    }),
  },
});
