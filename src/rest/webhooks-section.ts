import { type EventType, eventCatalog } from '../events/types.ts';
import { idPattern } from '../lib/ids.ts';
import { defaultLimits } from '../lib/limits.ts';
import { DISABLE_AFTER_HOURS, RETRY_DELAYS_TEXT } from '../services/webhooks/retry-schedule.ts';
import { eventData, sampleEnvelope } from '../services/webhooks/sample-data.ts';
import { ROTATION_OVERLAP_HOURS } from '../services/webhooks/secret-rotation.ts';
import { HEADERS, STANDARD_HEADERS } from '../webhooks/signing.ts';

/**
 * The deliveries in the contract (issue 29): one OpenAPI 3.1 `webhooks` entry per event type, a
 * POST whose body is the type's envelope with `data` the component schema the REST answers of
 * its object use (its sample envelope the example), and the X-Service-* and Standard Webhooks'
 * headers, so a client generated from the document
 * (openapi-typescript) types what its receiver gets.
 */

/** `appointment.cancelled` → `AppointmentCancelledEvent`, its envelope's schema name. */
export const envelopeSchemaName = (type: string) =>
  `${type
    .split('.')
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('')}Event`;

const header = (name: string, description: string, schema: Record<string, unknown>, required = true) => ({
  name,
  in: 'header',
  required,
  description,
  schema,
});

/** The headers of every delivery (docs/events.md, Signature and headers), as parameter components. */
export const webhookParameters = {
  WebhookSignature: header(
    HEADERS.signature,
    `\`sha256=<hex>\`: the HMAC-SHA256 of the raw body keyed by the subscription's secret. For ${ROTATION_OVERLAP_HOURS} h after a secret rotation, two entries, comma-separated, the new secret's first; one matching the secret held verifies.`,
    { type: 'string', pattern: '^sha256=[0-9a-f]{64}(,sha256=[0-9a-f]{64})*$' },
  ),
  WebhookTimestamp: header(
    HEADERS.timestamp,
    'When this attempt was signed, Unix seconds (not covered by X-Service-Signature; webhook-signature covers it).',
    { type: 'string', pattern: '^[0-9]+$' },
  ),
  WebhookEventId: header(HEADERS.eventId, 'The event id, as `id` in the body: deduplicate on it.', {
    type: 'string',
    pattern: idPattern('Event'),
  }),
  WebhookEventType: header(HEADERS.eventType, 'The event type, as `type` in the body.', { type: 'string' }),
  StandardWebhookId: header(
    STANDARD_HEADERS.id,
    'Standard Webhooks: the message id, the event id (as `id` in the body), the same on every retry.',
    { type: 'string', pattern: idPattern('Event') },
  ),
  StandardWebhookTimestamp: header(
    STANDARD_HEADERS.timestamp,
    'Standard Webhooks: when this attempt was signed, Unix seconds (covered by webhook-signature).',
    { type: 'string', pattern: '^[0-9]+$' },
  ),
  StandardWebhookSignature: header(
    STANDARD_HEADERS.signature,
    `Standard Webhooks: \`v1,<base64>\`, the HMAC-SHA256 of \`<webhook-id>.<webhook-timestamp>.<raw body>\` keyed by the secret's bytes (the base64 after \`whsec_\`); verified by the \`standardwebhooks\` and \`svix\` libraries. For ${ROTATION_OVERLAP_HOURS} h after a secret rotation, one entry per secret, space-separated. Absent while the subscription's secret predates this scheme (base64url): rotate it to get one.`,
    { type: 'string', pattern: '^v1,[A-Za-z0-9+/]+={0,2}( v1,[A-Za-z0-9+/]+={0,2})*$' },
    false,
  ),
};

/**
 * Adds each type's envelope schema to `schemas` (the document's components, where `data`'s
 * schema must already be) and answers the `webhooks` entries.
 */
export function webhooksSection(schemas: Record<string, any>): Record<string, any> {
  const entries: Record<string, any> = {};
  for (const [type, description] of Object.entries(eventCatalog) as [EventType, string][]) {
    // The component schema a GET of the object answers with (patients and animals are both Patient).
    const data = eventData[type].resource.name;
    if (!schemas[data]) throw new Error(`openapi: ${type}'s data schema ${data} is not a component.`);
    const name = envelopeSchemaName(type);
    schemas[name] = {
      type: 'object',
      description: `The envelope of a ${type} delivery: ${description}`,
      required: ['id', 'type', 'created_at', 'data'],
      properties: {
        id: { type: 'string', pattern: idPattern('Event'), description: 'The event id (evt_…).' },
        type: { type: 'string', const: type, description: 'The event type.' },
        created_at: {
          type: 'string',
          format: 'date-time',
          description: 'When the event was recorded (ISO 8601, UTC).',
        },
        data: {
          $ref: `#/components/schemas/${data}`,
          description: `The ${data === 'Patient' && type.startsWith('animal.') ? 'animal' : data.toLowerCase()} as a GET of it answered when the event was recorded.`,
        },
        test: {
          type: 'boolean',
          const: true,
          description:
            'Present, and true, only on a sample event (POST /v1/webhooks/{id}/test, POST /v1/events): acknowledge it and do not act on it.',
        },
      },
      additionalProperties: false,
    };
    entries[type] = {
      post: {
        operationId: `deliver${name}`,
        tags: ['Webhooks'],
        summary: `Delivery of ${type}`,
        description: `${description} POSTed to each subscription receiving ${type}. Answer 2xx within ${defaultLimits.webhookTimeoutMs / 1000} s (by default) to acknowledge; anything else, a redirect included, fails and is retried after ${RETRY_DELAYS_TEXT}; a subscription failing for ${DISABLE_AFTER_HOURS} h is disabled. At least once: deduplicate on the event id.`,
        security: [],
        parameters: Object.keys(webhookParameters).map((p) => ({ $ref: `#/components/parameters/${p}` })),
        requestBody: {
          required: true,
          description:
            'The envelope, compact JSON; verify the signature over these exact bytes before parsing.',
          content: {
            'application/json': {
              schema: { $ref: `#/components/schemas/${name}` },
              example: sampleEnvelope(type),
            },
          },
        },
        responses: {
          '2XX': { description: 'Acknowledged: the delivery succeeded.' },
          default: { description: 'Anything else: the delivery failed and is retried.' },
        },
      },
    };
  }
  return entries;
}
