import { defineEntity, p } from '@mikro-orm/core';
import { tenantColumns, timestamps } from './tenant.ts';

const EventSchema = defineEntity({
  name: 'Event',
  indexes: [
    // The list, newest first or since a time; with a type filter; the retention sweep (global).
    { properties: ['clinic', 'createdAt', 'id'] },
    { properties: ['clinic', 'type', 'createdAt', 'id'] },
    { properties: ['createdAt'] },
  ],
  properties: {
    ...tenantColumns(),
    type: p.string(),
    /** The scope a reader needs to see this event (chat:read for chat.*). */
    scope: p.string(),
    /** The envelope `data`: the REST resource as it was when the event was recorded. */
    data: p.json<Record<string, unknown>>(),
    /**
     * A sample event (POST /v1/webhooks/{id}/test, `cli events trigger`): delivered to its
     * subscriptions like any other, marked `test: true` in its envelope, and never listed or
     * streamed (GET /v1/events, subscriptions, the relay).
     */
    test: p.boolean().default(false),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export class Event extends EventSchema.class {}
EventSchema.setClass(Event);

const WebhookSubscriptionSchema = defineEntity({
  name: 'WebhookSubscription',
  properties: {
    ...tenantColumns(),
    url: p.text(),
    eventTypes: p.array(),
    enabled: p.boolean().default(true),
    secret: p.string(),
    /** The integrator's note on what the subscription is for; null when none was given. */
    description: p.text().nullable(),
    /**
     * The secret a rotation replaced, still signing beside `secret` until
     * `previousSecretExpiresAt` (src/services/webhooks/secret-rotation.ts); null when none is.
     */
    previousSecret: p.string().nullable(),
    previousSecretExpiresAt: p.datetime().nullable(),
    consecutiveFailures: p.integer().default(0),
    /**
     * The first failure of the current streak: failed attempts with no success between them and no
     * quiet gap longer than STREAK_GAP_SECONDS (the auto-disable rule, src/services/webhooks/retry-schedule.ts).
     */
    failingSince: p.datetime().nullable(),
    /** When the latest failed attempt ended: a failure after a longer gap starts a new streak. */
    lastFailureAt: p.datetime().nullable(),
    disabledAt: p.datetime().nullable(),
    disabledReason: p.string().nullable(),
    deletedAt: p.datetime().nullable(),
    ...timestamps(),
  },
});
export class WebhookSubscription extends WebhookSubscriptionSchema.class {}
WebhookSubscriptionSchema.setClass(WebhookSubscription);

/**
 * The delivery log: one row per ATTEMPT to deliver one event to one subscription (docs/decisions.md,
 * Webhook delivery log). The worker writes a row when an attempt ends (`succeeded` or `failed`),
 * in the transaction that queues the next one (src/webhooks/attempt.ts); a retry, scheduled or
 * manual, is a new row.
 */
const WebhookDeliverySchema = defineEntity({
  name: 'WebhookDelivery',
  // The log of a subscription, newest first (GET /v1/webhooks/{id}/deliveries).
  indexes: [{ properties: ['subscription', 'attemptedAt', 'id'] }],
  properties: {
    ...tenantColumns(),
    subscription: () => p.manyToOne(WebhookSubscription),
    // Deleted with their event (retention, docs/limits.md): a delivery log of an event that is gone.
    event: () => p.manyToOne(Event).deleteRule('cascade').index(),
    /** scheduled (the first attempt and the backoff's retries) or manual (POST …/retry) */
    trigger: p.string().default('scheduled'),
    /** succeeded or failed: a row is written when its attempt ends (no pending state) */
    status: p.string(),
    /** This attempt's number for the event and subscription: 1 for the first. */
    attempt: p.integer().default(1),
    /** When the attempt started (the worker's clock); the log's order. */
    attemptedAt: p.datetime().defaultRaw('current_timestamp'),
    /** After a failed attempt, when the next scheduled one is due; null when none will be. */
    nextAttemptAt: p.datetime().nullable(),
    responseStatus: p.integer().nullable(),
    /** The response body's first RESPONSE_EXCERPT_MAX characters, truncated before it is stored. */
    responseExcerpt: p.text().nullable(),
    error: p.text().nullable(),
    durationMs: p.integer().nullable(),
    ...timestamps(),
  },
});
export class WebhookDelivery extends WebhookDeliverySchema.class {}
WebhookDeliverySchema.setClass(WebhookDelivery);
