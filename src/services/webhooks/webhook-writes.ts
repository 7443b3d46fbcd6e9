import { WebhookSubscription as Entity } from '../../entities/index.ts';
import { LOOPBACK_HINT } from '../../lib/address-policy.ts';
import { defaultLimits } from '../../lib/limits.ts';
import { clinicRef } from '../clinic-ref.ts';
import { z } from '../write-input.ts';
import { createInputOf, updateInputOf } from '../write-inputs-of.ts';
import { defineWrite } from '../writes.ts';
import { cancelDeliveries } from './delivery-jobs.ts';
import { enableSubscription } from './enable-subscription.ts';
import { DISABLE_AFTER_HOURS, JITTER, RETRY_DELAYS_TEXT } from './retry-schedule.ts';
import { newSecret, ROTATION_OVERLAP_HOURS } from './secret-rotation.ts';
import { subscriptionAnswer } from './subscription-answer.ts';
import { subscriptionOf } from './subscription-of.ts';
import { URL_RULE, WebhookSubscription } from './webhook.resource.ts';
import { checkDeliveryUrl, getWebhook, subscribedTypes } from './webhooks.ts';

/**
 * Creating, changing, rotating the secret of and deleting webhook subscriptions (spec, "Webhook
 * subscriptions"; issues 17 and 29). None records an event: the catalog has no webhook type.
 */
export const createWebhookInput = createInputOf(WebhookSubscription);

const descriptionOf = (v: string | null | undefined) => (v == null || v.trim() === '' ? null : v);

export const createWebhook = defineWrite({
  name: 'createWebhook',
  method: 'POST',
  path: '/webhooks',
  status: 201,
  tag: 'Webhooks',
  summary: 'Subscribe to events',
  // The documented deadline is the default's (WEBHOOK_TIMEOUT_MS changes it per deployment).
  description: `The answer is the only one that carries the whole secret (every read masks it); keep it, or delete and subscribe again. An Idempotency-Key replay answers it whole only while it is still the subscription's secret (masked after a rotation or a DELETE), and is a 404 once the subscription is out of the key's sight. Delivery (docs/events.md, Delivery): at least once (deduplicate on the event id), one POST per attempt signed with the secret; a 2xx answer within ${defaultLimits.webhookTimeoutMs / 1000} s (by default) succeeds, anything else (3xx included: redirects are not followed) fails; failed attempts are retried after ${RETRY_DELAYS_TEXT} (±${JITTER * 100} %), about 24 h in all; a subscription whose every attempt failed for ${DISABLE_AFTER_HOURS} h is disabled (disabled_at, disabled_reason) until POST /v1/webhooks/{id}/recover. The url: ${URL_RULE}; another, or one whose host resolves to a private, link-local, multicast or metadata address in either mode, is a 422 (url). An unknown type: 422 (event_types); a chat.* type on a key without chat:read: 403.`,
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
        "`validation_failed`: `url` is missing, not https (plain http: a test clinic's only), or its host resolves to a loopback address (allowed to a test clinic), or to a private, link-local, multicast or metadata address; `event_types` names an unknown type; or a field is not one this operation takes. `param` names it.",
      // What a live clinic's key is told (src/lib/address-policy.ts).
      message: `url must be an https URL, not http:.${LOOPBACK_HINT}`,
      param: 'url',
    },
  },
  // The checks and the host's lookup happen before the transaction: a lookup can take seconds.
  async prepare(ctx, input) {
    const eventTypes = subscribedTypes(ctx, input.event_types);
    const url = await checkDeliveryUrl(input.url, ctx.principal.clinicMode);
    return { url, eventTypes, secret: newSecret() };
  },
  async run(w, input, _id, prepared) {
    const s = w.em.create(Entity, {
      clinic: clinicRef(w),
      url: prepared.url,
      eventTypes: prepared.eventTypes,
      enabled: true,
      secret: prepared.secret,
      description: descriptionOf(input.description),
      previousSecret: null,
      previousSecretExpiresAt: null,
      consecutiveFailures: 0,
      disabledAt: null,
      disabledReason: null,
      deletedAt: null,
    });
    await w.em.flush();
    return s.id;
  },
  shown: subscriptionAnswer({ secret: true }),
});

// A change's url and event_types say what a change does with them, in their place.
const { url, event_types } = WebhookSubscription.fields;
export const updateWebhookInput = updateInputOf(WebhookSubscription, {
  url: url.write.input
    .optional()
    .meta({ description: `The new endpoint, checked as on creation: ${URL_RULE}.` }),
  event_types: event_types.write.input.optional().meta({
    description:
      'The event types to deliver from now on, replacing the list; empty: every type the key may see (without chat:read, every type but chat.*). A chat.* type needs chat:read. Omitted: kept.',
  }),
});

/** The reason a subscription disabled by a change shows. */
export const DISABLED_BY_CHANGE = 'Disabled by a change (enabled false).';

export const updateWebhook = defineWrite({
  name: 'updateWebhook',
  method: 'PATCH',
  path: '/webhooks/:id',
  ids: { id: 'WebhookSubscription' },
  status: 200,
  tag: 'Webhooks',
  summary: 'Change a subscription',
  description:
    'Absent fields are kept; description null clears it. The url is checked as on creation (422 url), event_types as well (422 event_types; a chat.* type on a key without chat:read: 403). A subscription receiving a type the key may not see (a chat.* type, or every type, without chat:read) is out of its sight: 404, as on every webhook route. enabled false disables it (disabled_reason says so); enabled true enables a disabled one (its failure streak starts again) without queuing the events it missed: POST /v1/webhooks/{id}/recover does that. The secret is not changed here: POST /v1/webhooks/{id}/rotate-secret. Events already queued are delivered to the URL the subscription has when they are attempted. Records no event (the catalog has no webhook type).',
  scopes: ['webhooks:manage'],
  input: updateWebhookInput,
  example: { url: 'https://hooks.example.com/v2/clinic-events', description: 'Billing sync', enabled: true },
  resource: WebhookSubscription,
  errors: {
    '422': createWebhook.errors?.['422'] as NonNullable<typeof createWebhook.errors>['422'],
  },
  // A deleted (or unknown) subscription is a 404 before If-Match; the URL's lookup happens
  // before the transaction (as on creation).
  async prepare(ctx, input, id) {
    await getWebhook(ctx, String(id));
    const eventTypes = input.event_types === undefined ? undefined : subscribedTypes(ctx, input.event_types);
    const url =
      input.url === undefined ? undefined : await checkDeliveryUrl(input.url, ctx.principal.clinicMode);
    return { url, eventTypes };
  },
  async run(w, input, id, prepared) {
    const s = await subscriptionOf(w, id);
    if (prepared.url !== undefined) s.url = prepared.url;
    if (prepared.eventTypes !== undefined) s.eventTypes = prepared.eventTypes;
    if (input.description !== undefined) s.description = descriptionOf(input.description);
    if (input.enabled === true) await enableSubscription(w, s);
    if (input.enabled === false && s.enabled) {
      s.enabled = false;
      s.disabledAt = w.now;
      s.disabledReason = DISABLED_BY_CHANGE;
    }
    return s.id;
  },
  shown: subscriptionAnswer({ secret: false }),
});

export const rotateWebhookSecret = defineWrite({
  name: 'rotateWebhookSecret',
  method: 'POST',
  path: '/webhooks/:id/rotate-secret',
  ids: { id: 'WebhookSubscription' },
  status: 200,
  tag: 'Webhooks',
  summary: "Rotate a subscription's secret",
  description: `A new signing secret, whole in this answer only (every read masks it). The secret it replaces keeps signing for ${ROTATION_OVERLAP_HOURS} h (previous_secret_expires_at): until then every delivery carries both signatures in X-Service-Signature (docs/events.md, Secret rotation), so the receiver can switch to the new secret at any time within the overlap. A second rotation within the overlap ends the oldest secret's at once: only the last two secrets sign. A subscription receiving a type the key may not see (a chat.* type, or every type, without chat:read) is out of its sight: 404, as on every webhook route. An Idempotency-Key replay rotates nothing and answers the first answer again, with the rotation's secret whole only while it is still the current one (masked after a later rotation: a replay never shows a newer secret; no secret is kept in the idempotency store), and a 404 once the subscription is out of the key's sight.`,
  scopes: ['webhooks:manage'],
  input: z.strictObject({}),
  example: {},
  resource: WebhookSubscription,
  async prepare(ctx, _input, id) {
    await getWebhook(ctx, String(id));
  },
  async run(w, _input, id) {
    const s = await subscriptionOf(w, id);
    s.previousSecret = s.secret;
    s.previousSecretExpiresAt = new Date(w.now.getTime() + ROTATION_OVERLAP_HOURS * 3600_000);
    s.secret = newSecret();
    return s.id;
  },
  shown: subscriptionAnswer({ secret: true }),
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
    // Kept as a row (deliveries point at it), out of sight from now on.
    const s = await subscriptionOf(w, id);
    s.deletedAt = w.now;
    s.enabled = false;
    await w.em.flush();
    await cancelDeliveries(w.em, s.id);
    return s.id;
  },
  shown: subscriptionAnswer({ secret: false }),
});
