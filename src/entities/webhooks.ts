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
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export class Event extends EventSchema.class {}
EventSchema.setClass(Event);

const WebhookSubscriptionSchema = defineEntity({
  name: 'WebhookSubscription',
  properties: {
    ...tenantColumns(),
    url: p.string(),
    eventTypes: p.array(),
    enabled: p.boolean().default(true),
    secret: p.string(),
    consecutiveFailures: p.integer().default(0),
    disabledAt: p.datetime().nullable(),
    disabledReason: p.string().nullable(),
    deletedAt: p.datetime().nullable(),
    ...timestamps(),
  },
});
export class WebhookSubscription extends WebhookSubscriptionSchema.class {}
WebhookSubscriptionSchema.setClass(WebhookSubscription);

const WebhookDeliverySchema = defineEntity({
  name: 'WebhookDelivery',
  indexes: [{ properties: ['subscription', 'createdAt', 'id'] }],
  properties: {
    ...tenantColumns(),
    subscription: () => p.manyToOne(WebhookSubscription),
    // Deleted with their event (retention, docs/limits.md): a delivery log of an event that is gone.
    event: () => p.manyToOne(Event).deleteRule('cascade').index(),
    /** pending, succeeded or failed */
    status: p.string(),
    attempts: p.integer().default(0),
    lastAttemptAt: p.datetime().nullable(),
    nextAttemptAt: p.datetime().nullable(),
    responseStatus: p.integer().nullable(),
    responseBody: p.text().nullable(),
    error: p.text().nullable(),
    durationMs: p.integer().nullable(),
    ...timestamps(),
  },
});
export class WebhookDelivery extends WebhookDeliverySchema.class {}
WebhookDeliverySchema.setClass(WebhookDelivery);
