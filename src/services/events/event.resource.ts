import { EventTypeSet } from '../../events/types.ts';
import { defineResource, f } from '../resource.ts';

/**
 * The event envelope (spec, "Event envelope"): `{id, type, created_at, data}`, read from the
 * outbox as it was recorded. `data` is the stored JSON as it is, never presented again: the
 * object as a GET of it answered in the transaction that recorded the event.
 */
export const EventEnvelope = defineResource({
  name: 'Event',
  kind: 'Event',
  scopes: ['webhooks:manage'],
  description:
    'An event as webhooks deliver it. chat.* events are visible only to keys that also hold chat:read.',
  fields: {
    id: f.id(),
    type: f.column('type', 'String', {
      enum: EventTypeSet,
      description: 'The event type: patient.created, say (GraphQL names it PATIENT_CREATED).',
    }),
    created_at: f.time('createdAt', { description: 'When the event was recorded (ISO 8601, UTC).' }),
    data: f.column('data', 'JSON', {
      description:
        'The object the event is about, as a GET of it answered when the event was recorded: the REST resource, keys in snake_case (first_name), exactly the JSON a webhook delivery carries, in GraphQL too (its keys are not renamed).',
    }),
  },
});

/** A realistic envelope, for the OpenAPI document (a dental clinic's new patient). */
export const EVENT_EXAMPLE = {
  id: 'evt_1042',
  type: 'patient.created',
  created_at: '2026-11-01T10:00:00.000Z',
  data: {
    id: 'pat_311',
    first_name: 'Dana',
    last_name: 'Cohen',
    phone: '0501234567',
    email: 'dana@example.com',
    gender: 'female',
    birth_date: '1990-05-01',
    status: null,
    created_at: '2026-11-01T10:00:00.000Z',
    updated_at: '2026-11-01T10:00:00.000Z',
    address: {
      line1: '5 Rothschild Blvd',
      line2: null,
      city: 'Tel Aviv',
      postal_code: '6688101',
      country: 'IL',
    },
    contacts: [{ type: 'phone', value: '035550100', label: 'work' }],
    balance: null,
    id_number: null,
  },
};
