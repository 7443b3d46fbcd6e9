import { toId } from '../lib/ids.ts';
import { signBody } from '../lib/signing.ts';
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

/**
 * The signature header's value: one `sha256=<hex>` per secret, comma-separated, the current
 * secret's first (several entries in one header, as Stripe's `v1=`): after a rotation the
 * replaced secret signs beside the new one for the overlap (src/services/webhooks/secret-rotation.ts),
 * and a receiver accepts a delivery when any entry matches the secret it holds.
 */
export const signatureHeader = (secrets: string | readonly string[], rawBody: string | Buffer): string =>
  (typeof secrets === 'string' ? [secrets] : secrets).map((s) => signatureOf(s, rawBody)).join(',');

/**
 * The headers of one delivery attempt of `rawBody` (the bytes `serializeEnvelope(event)` made):
 * the signature over exactly those bytes (one per signing secret), the signing time `now` (the injected clock) as Unix
 * seconds, and the event's id and type as in the body. Each attempt signs again, so a retry
 * carries its own time. The timestamp is not covered by the signature (the spec signs the body
 * alone): receivers deduplicate on the event id, not on the time.
 */
export function deliveryHeaders(
  secret: string | readonly string[],
  event: EventRow,
  rawBody: string | Buffer,
  now: Date,
): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    [HEADERS.signature]: signatureHeader(secret, rawBody),
    [HEADERS.timestamp]: String(Math.floor(now.getTime() / 1000)),
    [HEADERS.eventId]: toId('Event', event.id),
    [HEADERS.eventType]: event.type,
  };
}
