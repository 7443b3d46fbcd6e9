import { EventTypeSet } from '../../events/types.ts';
import { valuesOf } from '../../lib/enums.ts';
import { createdAt, updatedAt } from '../record-times.ts';
import { defineResource, f } from '../resource.ts';
import { text, z } from '../write-input.ts';
import { DISABLE_AFTER_HOURS } from './retry-schedule.ts';

/** What a secret starts with: `whsec_` and 32 random bytes in base64 (secret-rotation.ts). */
export const SECRET_PREFIX = 'whsec_';

/**
 * The secret as every read shows it (docs/decisions.md, Webhook subscriptions): the prefix, four
 * stars and the last four characters (before base64's padding), enough to tell two secrets
 * apart, never enough to sign.
 * Only the creation's answer carries it whole (src/services/webhooks/webhook-writes.ts).
 */
export const maskSecret = (secret: string) => `${SECRET_PREFIX}****${secret.replace(/=+$/, '').slice(-4)}`;

/**
 * Where a subscription's url may point, by its clinic's mode (`checkDeliveryUrl`, ./webhooks.ts):
 * the one text both contracts give wherever they state it.
 */
export const URL_RULE =
  "https, its host resolving to a public address; a test clinic's (cg_test_ keys) may also be plain http and a loopback address, such as http://localhost:4242/hooks (docs/test-mode.md)";

/** A webhook subscription (spec, "Webhook subscription"), with why and when it was disabled. */
export const WebhookSubscription = defineResource({
  name: 'WebhookSubscription',
  kind: 'WebhookSubscription',
  scopes: ['webhooks:manage'],
  description:
    'Where events are delivered, and which ones. Deleted subscriptions are not shown, nor one receiving a type the key may not see (a chat.* type, or every type, without chat:read).',
  fields: {
    id: f.id({ description: 'The subscription id (wh_…).' }),
    url: f.column('url', 'String', {
      description: `The endpoint events are posted to: ${URL_RULE}.`,
      write: {
        on: 'both',
        input: text(2048),
        description: `The endpoint events are posted to: ${URL_RULE}.`,
        // Checked, and its host looked up, before the transaction (webhook-writes.ts).
        byRun: true,
      },
    }),
    event_types: f.column('eventTypes', ['String'], {
      enum: EventTypeSet,
      description:
        'The event types delivered; empty means every type (a key without chat:read stores every type but chat.*).',
      write: {
        on: 'both',
        input: z.array(valuesOf(EventTypeSet, text(64))).max(64),
        description:
          'Event types to deliver; omitted or empty: every type the key may see (without chat:read, every type but chat.*). A chat.* type needs chat:read.',
        // Left out: every type the key may see, as an empty list says.
        create: 'optional',
        // Held to the key's scopes (a chat.* type needs chat:read).
        byRun: true,
      },
    }),
    description: f.column('description', 'String', {
      nullable: true,
      description: "The integrator's note on what the subscription is for; null when none was given.",
      write: {
        on: 'both',
        input: text(500),
        description: "The integrator's note on what the subscription is for (up to 500 characters).",
        // Blank is stored as none (null).
        byRun: true,
      },
    }),
    enabled: f.column('enabled', 'Boolean', {
      description:
        'Whether events are delivered; false once disabled after repeated failures or by a change (enabled false), or deleted.',
      // A new subscription starts enabled; the change disables it, or enables it as recover does.
      write: {
        on: 'update',
        input: z.boolean(),
        description:
          'false stops deliveries (attempts queued meanwhile are dropped when they run); true enables a disabled subscription as POST /v1/webhooks/{id}/recover does, without queuing what it missed.',
        byRun: true,
      },
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
    failure_streak: f.column('consecutiveFailures', 'Int', {
      description: `Failed delivery attempts in a row, the current streak; 0 after a success. A streak ${DISABLE_AFTER_HOURS} hours long disables the subscription (failing_since says when it began).`,
    }),
    failing_since: f.time('failingSince', {
      nullable: true,
      description:
        "When the current failure streak's first failed attempt was made; null while deliveries succeed.",
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
