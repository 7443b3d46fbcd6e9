import type { EventType } from './types.ts';

/**
 * The example records sample events are made of (src/services/webhooks/sample-data.ts): one row per
 * record, in its entity's property form (what a lean read answers: property names, to-one
 * relations as nested rows, points in time as ISO text, phones as stored, E.164), presented by
 * the presenter real events use. A property left out is null; a non-nullable field left out
 * fails test/event-samples.test.ts, naming the field and the record to fill. Their ids name no
 * object of any clinic (`sampleId`).
 */
export type ExampleRow = Readonly<Record<string, unknown>>;

/**
 * The records' ids: past the largest id a record can have (2^31 − 1, an int4 key; `tryParseId`,
 * src/lib/ids.ts refuses more), so they have the id forms (`pat_9000000001`) yet name no object of
 * any clinic: a receiver that looks one up gets a 404, never another record of its own clinic.
 */
export const SAMPLE_ID_BASE = 9_000_000_000;
export const sampleId = (n: number) => SAMPLE_ID_BASE + n;

/** The clinic the records are of: presenting shows its phones in local form. */
export const exampleClinic = { country: 'IL' } as const;

const T0 = '2026-11-20T08:00:00.000Z';
/** When every sample's write happened: its envelope's `created_at`. */
export const sampleEventTime = T0;
/** `updated_at` after the n-th change of the same instant's writes. */
const changed = (n: number) => `2026-11-20T08:00:00.00${n}Z`;
const times = { createdAt: T0, updatedAt: T0 };

const patient = {
  id: sampleId(1),
  firstName: 'Dana',
  lastName: 'Cohen',
  phone: '+972501234567',
  email: 'dana@example.com',
  ...times,
};

/** An animal is a Patient row of a veterinary clinic: with an owner and a species, and no surname. */
const animal = {
  id: sampleId(2),
  firstName: 'Rex',
  phone: '+972541230000',
  owner: { id: sampleId(1), firstName: 'Noa', lastName: 'Levi', phone: '+972541230000' },
  species: { id: sampleId(3), name: 'Dog' },
  ...times,
};

const appointment = {
  id: sampleId(1),
  patient,
  branch: { id: sampleId(1), name: 'Main branch' },
  provider: { id: sampleId(1), name: 'Dr. Levi' },
  type: { id: sampleId(1), name: 'Check-up' },
  startAt: '2026-12-01T09:00:00.000Z',
  endAt: '2026-12-01T09:30:00.000Z',
  ...times,
};

const treatment = {
  id: sampleId(1),
  patient,
  menuItem: { id: sampleId(1), name: 'Cleaning', code: 'D1110' },
  price: 250,
  status: 'planned',
  performedAt: T0,
  ...times,
};

const payment = {
  id: sampleId(1),
  patient,
  billingAccount: { id: sampleId(1), businessName: 'Clinic Ltd.' },
  amount: 250,
  currency: 'ILS',
  methodType: 'cash',
  isRefund: false,
  paidAt: T0,
  ...times,
};

const call = {
  id: sampleId(1),
  patient,
  direction: 'inbound',
  fromPhone: '+972501234567',
  toPhone: '+97235550100',
  startedAt: '2026-11-20T07:30:00.000Z',
  durationSeconds: 184,
  answered: true,
  recorded: true,
  recordingAvailable: false,
  ...times,
};

/** Inbound and outbound messages differ in which columns mean anything: a record of each. */
const inboundMessage = {
  id: sampleId(1),
  direction: 'inbound',
  conversation: { id: sampleId(1) },
  type: 'text',
  text: 'Can I come today?',
  fromPhone: '+972501234567',
  toPhone: '+97235550101',
  patientPhone: '+972501234567',
  ...times,
};

const outboundMessage = {
  id: sampleId(2),
  direction: 'outbound',
  conversation: { id: sampleId(1) },
  type: 'text',
  text: 'Yes, at 4 pm.',
  fromPhone: '+97235550101',
  toPhone: '+972501234567',
  patientPhone: '+972501234567',
  sentAt: T0,
  ...times,
};

export const exampleRecords = {
  patient,
  animal,
  appointment,
  treatment,
  payment,
  call,
  inboundMessage,
  outboundMessage,
} satisfies Record<string, ExampleRow>;

export type ExampleName = keyof typeof exampleRecords;

/** A type's sample: an example record as the event finds it, with what the event's write changed. */
export interface SampleMoment {
  record: ExampleName;
  changes?: ExampleRow;
}

const callNote = { note: 'Wants to move the check-up' };

export const sampleMoments: Record<EventType, SampleMoment> = {
  'patient.created': { record: 'patient' },
  'patient.updated': {
    record: 'patient',
    changes: { email: 'dana.cohen@example.com', updatedAt: changed(1) },
  },
  'animal.created': { record: 'animal' },
  'animal.updated': { record: 'animal', changes: { firstName: 'Rexy', updatedAt: changed(1) } },
  'appointment.created': { record: 'appointment' },
  'appointment.updated': { record: 'appointment', changes: { note: 'Bring X-rays', updatedAt: changed(1) } },
  'appointment.cancelled': {
    record: 'appointment',
    changes: { note: 'Bring X-rays', cancelledAt: T0, cancellationReason: 'Sick', updatedAt: changed(2) },
  },
  'treatment.created': { record: 'treatment' },
  'treatment.updated': { record: 'treatment', changes: { note: 'Upper left', updatedAt: changed(1) } },
  'treatment.cancelled': {
    record: 'treatment',
    changes: { note: 'Upper left', cancelledAt: T0, cancellationReason: 'Duplicate', updatedAt: changed(2) },
  },
  'payment.recorded': { record: 'payment' },
  // The payment a refund or a cancel is of.
  'payment.cancelled': { record: 'payment' },
  'call.completed': { record: 'call' },
  'call.updated': { record: 'call', changes: { ...callNote, updatedAt: changed(1) } },
  'call.recording.available': {
    record: 'call',
    changes: { ...callNote, recordingAvailable: true, updatedAt: changed(2) },
  },
  'call.transcript.completed': {
    record: 'call',
    changes: {
      ...callNote,
      recordingAvailable: true,
      transcriptStatus: 'completed',
      transcriptSummary: 'Moved the check-up.',
      transcriptSegments: [
        { start: 0, end: 3.5, speaker: 'clinic', text: 'Smile Dental, good morning.' },
        { start: 4, end: 9.25, speaker: 'patient', text: 'I need to move my check-up.' },
      ],
      updatedAt: changed(3),
    },
  },
  // Another call, the clinic's: a transcript fails once the recording is in.
  'call.transcript.failed': {
    record: 'call',
    changes: {
      id: sampleId(2),
      direction: 'outbound',
      fromPhone: '+97235550100',
      toPhone: '+972501234567',
      startedAt: '2026-11-20T07:40:00.000Z',
      durationSeconds: 60,
      recordingAvailable: true,
      transcriptStatus: 'failed',
      updatedAt: changed(2),
    },
  },
  'chat.message.received': { record: 'inboundMessage' },
  'chat.message.sent': { record: 'outboundMessage' },
  'chat.message.delivered': { record: 'outboundMessage', changes: { deliveredAt: T0 } },
  'chat.message.read': { record: 'outboundMessage', changes: { deliveredAt: T0, readAt: T0 } },
  // Another message, to a number the network rejects: no patient has it.
  'chat.message.failed': {
    record: 'outboundMessage',
    changes: {
      id: sampleId(4),
      conversation: { id: sampleId(2) },
      text: 'Reply',
      toPhone: '+972500000991',
      patientPhone: '+972500000991',
      sentAt: null,
      failedAt: T0,
    },
  },
};
