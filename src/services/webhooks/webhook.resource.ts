import { EventTypeSet } from '../../events/types.ts';
import { createdAt, updatedAt } from '../record-times.ts';
import { defineResource, f } from '../resource.ts';

/** What a secret starts with: `whsec_` and 32 random bytes in base64 (secret-rotation.ts). */
export const SECRET_PREFIX = 'whsec_';

/**
 * The secret as every read shows it (docs/decisions.md, Webhook subscriptions): the prefix, four
 * stars and the last four characters (before base64's padding), enough to tell two secrets
 * apart, never enough to sign.
 * Only the creation's answer carries it whole (src/services/webhooks/webhook-writes.ts).
 */
export const maskSecret = (secret: string) => `${SECRET_PREFIX}****${secret.replace(/=+$/, '').slice(-4)}`;

/** A webhook subscription (spec, "Webhook subscription"), with why and when it was disabled. */
export const WebhookSubscription = defineResource({
  name: 'WebhookSubscription',
  kind: 'WebhookSubscription',
  scopes: ['webhooks:manage'],
  description:
    'Where events are delivered, and which ones. Deleted subscriptions are not shown, nor one receiving a type the key may not see (a chat.* type, or every type, without chat:read).',
  fields: {
    id: f.id({ description: 'The subscription id (wh_…).' }),
    url: f.column('url', 'String', { description: 'The https endpoint events are posted to.' }),
    event_types: f.column('eventTypes', ['String'], {
      enum: EventTypeSet,
      description:
        'The event types delivered; empty means every type (a key without chat:read stores every type but chat.*).',
    }),
    description: f.column('description', 'String', {
      nullable: true,
      description: "The integrator's note on what the subscription is for; null when none was given.",
    }),
    enabled: f.column('enabled', 'Boolean', {
      description:
        'Whether events are delivered; false once disabled after repeated failures or by a change (enabled false), or deleted.',
    }),
    secret: f.column('secret', 'String', {
      convert: (v) => maskSecret(String(v)),
      description:
        'The signing secret: whole only in the answer of its creation or of its rotation, masked (whsec_****abcd) everywhere else.',
    }),
    previous_secret_expires_at: f.time('previousSecretExpiresAt', {
      nullable: true,
      description:
        'After a rotation (POST /v1/webhooks/{id}/rotate-secret), until when the replaced secret signs deliveries beside the new one (a past time: it no longer does); null before any rotation.',
    }),
    disabled_at: f.time('disabledAt', {
      nullable: true,
      description:
        'When deliveries were disabled (after repeated failures, or by a change with enabled false); null while enabled.',
    }),
    disabled_reason: f.column('disabledReason', 'String', {
      nullable: true,
      description: 'Why deliveries were disabled; null while enabled.',
    }),
    created_at: createdAt(),
    updated_at: updatedAt(),
  },
});
