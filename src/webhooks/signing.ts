import { toId } from '../lib/ids.ts';
import { signBody } from '../lib/signing.ts';
import { standardSignatureHeader } from '../lib/standard-webhooks.ts';
import type { EventRow } from '../services/events/envelope.ts';

/**
 * What a webhook delivery sends (spec, Events: "Request headers on every delivery",
 * "Verification"): the envelope's exact bytes, signed with the subscription's secret. The
 * delivery attempt (src/webhooks/attempt.ts) POSTs `serializeEnvelope(event)` with
 * `deliveryHeaders(...)` of those same bytes; nothing here does I/O.
 */

/** `sha256=<hex HMAC-SHA256 of the raw body keyed by the secret>` (the one scheme, src/lib/signing.ts). */
export const signatureOf = (secret: string, rawBody: string | Buffer): string => signBody(secret, rawBody);

/** The spec's header names, as it spells them (HTTP names are case-insensitive anyway). */
export const HEADERS = {
  signature: 'X-Service-Signature',
  timestamp: 'X-Service-Timestamp',
  eventId: 'X-Service-Event-Id',
  eventType: 'X-Service-Event-Type',
} as const;

/** Standard Webhooks' names (src/lib/standard-webhooks.ts), lower-case as its libraries read them. */
export const STANDARD_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

/**
 * The signature header's value: one `sha256=<hex>` per secret, comma-separated, the current
 * secret's first (several entries in one header, as Stripe's `v1=`): after a rotation the
 * replaced secret signs beside the new one for the overlap (src/services/webhooks/secret-rotation.ts),
 * and a receiver accepts a delivery when any entry matches the secret it holds.
 */
export const signatureHeader = (secrets: string | readonly string[], rawBody: string | Buffer): string =>
  (typeof secrets === 'string' ? [secrets] : secrets).map((s) => signatureOf(s, rawBody)).join(',');

/**
 * The headers of one delivery attempt of `rawBody` (the bytes `serializeEnvelope(event)` made),
 * in two schemes over the same bytes and time. The spec's: the signature over exactly those bytes
 * (one per signing secret), the signing time `now` (the injected clock) as Unix seconds, and the
 * event's id and type as in the body; its timestamp is not signed (the spec signs the body alone).
 * Standard Webhooks' (src/lib/standard-webhooks.ts): the event id as `webhook-id` (the same on
 * every retry, so receivers deduplicate on it), the time, and a signature over id, time and body,
 * which a receiver's library checks for freshness too. Each attempt signs again, so a retry
 * carries its own time.
 */
export function deliveryHeaders(
  secret: string | readonly string[],
  event: EventRow,
  rawBody: string | Buffer,
  now: Date,
): Record<string, string> {
  const secrets = typeof secret === 'string' ? [secret] : secret;
  const id = toId('Event', event.id);
  const timestamp = Math.floor(now.getTime() / 1000);
  const standard = standardSignatureHeader(secrets, id, timestamp, rawBody);
  return {
    'Content-Type': 'application/json',
    [HEADERS.signature]: signatureHeader(secrets, rawBody),
    [HEADERS.timestamp]: String(timestamp),
    [HEADERS.eventId]: id,
    [HEADERS.eventType]: event.type,
    [STANDARD_HEADERS.id]: id,
    [STANDARD_HEADERS.timestamp]: String(timestamp),
    ...(standard ? { [STANDARD_HEADERS.signature]: standard } : {}),
  };
}
