import { defineEnum } from '../lib/enums.ts';

/**
 * The event catalog: every event type of the spec ("Events", "Event types"), with what fires it.
 * The one list of names: what the outbox records (`PendingEvent.type`), what `GET /v1/events`
 * filters by, and what webhook subscriptions will accept. A type outside it is a 422 naming it.
 */
export const eventCatalog = {
  'patient.created': 'A patient was added (dental clinics).',
  'patient.updated': "A patient's details changed (dental clinics).",
  'animal.created': 'An animal was added (veterinary clinics).',
  'animal.updated': "An animal's details, or its owner's, changed (veterinary clinics).",
  'appointment.created': 'An appointment was booked.',
  'appointment.updated': 'An appointment changed (time, status, provider, branch, type, note).',
  'appointment.cancelled': 'An appointment was cancelled.',
  'treatment.created': 'A treatment was recorded.',
  'treatment.updated': 'A treatment changed.',
  'treatment.cancelled': 'A treatment was cancelled (removed).',
  'payment.recorded': 'A payment or a refund was recorded.',
  'payment.cancelled': 'A payment was cancelled or refunded.',
  'call.completed': 'A call ended; the first event of a call.',
  'call.updated': "A call's staff note was added or edited.",
  'call.recording.available': "A call's recording finished downloading and can be fetched.",
  'call.transcript.completed': "A call's transcription succeeded.",
  'call.transcript.failed': "A call's transcription failed; none will arrive.",
  'chat.message.received': 'A patient sent the clinic a message.',
  'chat.message.sent': 'An outbound message was accepted by the network.',
  'chat.message.delivered': "An outbound message reached the patient's handset.",
  'chat.message.read': 'The patient opened an outbound message.',
  'chat.message.failed': 'An outbound message failed (failure_reason is null in the event).',
} as const;

export type EventType = keyof typeof eventCatalog;

/**
 * The catalog as a closed set (src/lib/enums.ts): GraphQL's `EventType` enum (`CHAT_MESSAGE_SENT`
 * stands for `chat.message.sent`) and the OpenAPI `enum` of an event's `type`.
 */
export const EventTypeSet = defineEnum(
  'EventType',
  'The type of an event (the event catalog, docs/events.md): what happened, to which kind of object.',
  eventCatalog,
);

export const EVENT_TYPES = Object.keys(eventCatalog) as EventType[];

export const isEventType = (s: unknown): s is EventType =>
  typeof s === 'string' && Object.hasOwn(eventCatalog, s);
