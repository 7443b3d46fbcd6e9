import { randomBytes } from 'node:crypto';
import { WebhookSubscription as Entity } from '../../entities/index.ts';
import { EventTypeSet } from '../../events/types.ts';
import { valuesOf } from '../../lib/enums.ts';
import { notFound } from '../../lib/errors.ts';
import { tryParseId } from '../../lib/ids.ts';
import { defaultLimits } from '../../lib/limits.ts';
import { clinicRef } from '../clinic-ref.ts';
import { text, z } from '../write-input.ts';
import { defineWrite } from '../writes.ts';
import { cancelDeliveries } from './delivery-jobs.ts';
import { DISABLE_AFTER_HOURS, JITTER, RETRY_DELAYS_TEXT } from './retry-schedule.ts';
import { SECRET_PREFIX, WebhookSubscription } from './webhook.resource.ts';
import { checkDeliveryUrl, getWebhook, subscribedTypes } from './webhooks.ts';

/**
 * Creating and deleting webhook subscriptions (spec, "Webhook subscriptions"; issue 17). Neither
 * records an event: the catalog has no webhook type.
 */
export const createWebhookInput = z.strictObject({
  url: text(2048).meta({
    description: 'The https endpoint events are posted to; its host must resolve to a public address.',
  }),
  event_types: z
    .array(valuesOf(EventTypeSet, text(64)))
    .max(64)
    .optional()
    .meta({
      description:
        'Event types to deliver; omitted or empty: every type the key may see (without chat:read, every type but chat.*). A chat.* type needs chat:read.',
    }),
});

export const createWebhook = defineWrite({
  name: 'createWebhook',
  method: 'POST',
  path: '/webhooks',
  status: 201,
  tag: 'Webhooks',
  summary: 'Subscribe to events',
  // The documented deadline is the default's (WEBHOOK_TIMEOUT_MS changes it per deployment).
  description: `The answer is the only one that carries the whole secret (every read masks it); keep it, or delete and subscribe again. Delivery (docs/events.md, Delivery): at least once (deduplicate on the event id), one POST per attempt signed with the secret; a 2xx answer within ${defaultLimits.webhookTimeoutMs / 1000} s (by default) succeeds, anything else (3xx included: redirects are not followed) fails; failed attempts are retried after ${RETRY_DELAYS_TEXT} (±${JITTER * 100} %), about 24 h in all; a subscription whose every attempt failed for ${DISABLE_AFTER_HOURS} h is disabled (disabled_at, disabled_reason) until POST /v1/webhooks/{id}/recover. An http URL, a host resolving to a loopback, private, link-local, multicast or metadata address: 422 (url). An unknown type: 422 (event_types); a chat.* type on a key without chat:read: 403.`,
  scopes: ['webhooks:manage'],
  input: createWebhookInput,
  example: {
    url: 'https://hooks.example.com/clinic-events',
    event_types: ['appointment.created', 'appointment.cancelled'],
  },
  resource: WebhookSubscription,
  errors: {
    '422': {
      code: 'validation_failed',
      description:
        '`validation_failed`: `url` is missing, not https, or its host resolves to a loopback, private, link-local, multicast or metadata address; `event_types` names an unknown type; or a field is not one this operation takes. `param` names it.',
      message: 'url must be an https URL, not http:.',
      param: 'url',
    },
  },
  // The checks and the host's lookup happen before the transaction: a lookup can take seconds.
  async prepare(ctx, input) {
    const eventTypes = subscribedTypes(ctx, input.event_types);
    const url = await checkDeliveryUrl(input.url, ctx.services.webhooks?.allowLoopback ?? false);
    return { url, eventTypes, secret: SECRET_PREFIX + randomBytes(32).toString('base64url') };
  },
  async run(w, _input, _id, prepared) {
    const s = w.em.create(Entity, {
      clinic: clinicRef(w),
      url: prepared.url,
      eventTypes: prepared.eventTypes,
      enabled: true,
      secret: prepared.secret,
      consecutiveFailures: 0,
      disabledAt: null,
      disabledReason: null,
      deletedAt: null,
    });
    await w.em.flush();
    return s.id;
  },
  // The one answer with the whole secret, read from the subscription as it is sent (so the
  // idempotency store keeps only the masked answer); a replay after a DELETE stays masked.
  async reveal(ctx, answer) {
    const n = tryParseId('WebhookSubscription', String(answer.id));
    const s =
      n == null ? null : await ctx.em.findOne(Entity, { id: n, deletedAt: null }, { fields: ['secret'] });
    return s ? { ...answer, secret: s.secret } : answer;
  },
});

export const deleteWebhook = defineWrite({
  name: 'deleteWebhook',
  method: 'DELETE',
  path: '/webhooks/:id',
  ids: { id: 'WebhookSubscription' },
  status: 200,
  tag: 'Webhooks',
  summary: 'Delete a subscription',
  description:
    'Nothing more is delivered to it: its queued attempts, retries included, are dropped, and an attempt already under way checks again before it sends. Answers the subscription as it was deleted (enabled false); afterwards it is a 404 and is not listed.',
  scopes: ['webhooks:manage'],
  input: z.strictObject({}),
  example: {},
  resource: WebhookSubscription,
  // A deleted (or unknown) subscription is a 404 before If-Match is compared: a stale version
  // must not reveal that a deleted one exists.
  async prepare(ctx, _input, id) {
    await getWebhook(ctx, String(id));
  },
  async run(w, _input, id) {
    const s = await w.load(Entity, 'WebhookSubscription', id);
    // Kept as a row (deliveries point at it), out of sight from now on.
    if (s.deletedAt) throw notFound('webhook subscription', String(id));
    s.deletedAt = w.now;
    s.enabled = false;
    await w.em.flush();
    await cancelDeliveries(w.em, s.id);
    return s.id;
  },
});
