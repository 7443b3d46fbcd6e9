import type { Event } from '../../entities/index.ts';
import { CORE, type PresentContext, present, type Row } from '../resource.ts';
import { EventEnvelope } from './event.resource.ts';

/**
 * The envelope every channel carries (spec, "Event envelope"): webhook deliveries
 * (src/webhooks/signing.ts signs these bytes), GraphQL subscriptions (src/services/events/live.ts)
 * and `events listen` all make it here, from the outbox row, never rebuilt.
 */

/** The outbox columns an envelope is made of (an `Event` entity or a lean row of it). */
export type EventRow = Pick<Event, 'id' | 'type' | 'createdAt' | 'data'> & {
  /** A sample event (POST /v1/webhooks/{id}/test, `cli events trigger`): only deliveries carry one. */
  test?: boolean;
};

/**
 * The envelope's fields (id, type, created_at, data) depend on no clinic setting; the presenter
 * still takes a context, so it gets a neutral one.
 */
const NO_CLINIC: PresentContext = { country: '' };

/**
 * The envelope `{id, type, created_at, data}` through the one presenter GET /v1/events/{id}
 * uses (src/services/events/event.resource.ts): `id` as `evt_<n>`, `created_at` ISO 8601,
 * `data` the stored JSON as it is, never rebuilt.
 */
export const envelopeOf = (event: EventRow): Row => present(EventEnvelope, event as Row, NO_CLINIC, CORE);

/**
 * The exact bytes of a delivery's body: compact JSON of the envelope, signed as they are. A
 * sample event's envelope ends with `"test":true` (docs/events.md, Sample events); a real one
 * has no `test` key, so its bytes are what they always were.
 */
export const serializeEnvelope = (event: EventRow): string =>
  JSON.stringify(event.test ? { ...envelopeOf(event), test: true } : envelopeOf(event));
