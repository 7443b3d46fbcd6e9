import { PatientSummary } from '../patients/patient.resource.ts';
import { createdAt, updatedAt } from '../record-times.ts';
import { defineResource, f } from '../resource.ts';
import { NamedRef, StatusRef } from '../shapes.ts';
import { idOf, instant, text } from '../write-input.ts';

/** The longest note a booking keeps. */
export const NOTE_MAX = 4000;

export const Appointment = defineResource({
  name: 'Appointment',
  kind: 'Appointment',
  scopes: ['appointments:read'],
  description: 'A booking of a patient with a provider at a branch.',
  fields: {
    id: f.id({ description: 'The appointment id (appt_…).' }),
    patient: f.join('patient', 'Patient', PatientSummary, {
      fromParent: true,
      description: 'The patient it is for.',
      write: { on: 'create', input: idOf('Patient') },
    }),
    branch: f.join('branch', 'Branch', NamedRef, {
      description: 'Where it takes place.',
      write: { on: 'both', input: idOf('Branch') },
    }),
    provider: f.join('provider', 'Provider', NamedRef, {
      nullable: true,
      description: 'Who sees the patient; null when not assigned.',
      // Bookings of the API always name one; older ones may have none.
      write: { on: 'both', input: idOf('Provider'), create: 'required', update: 'optional' },
    }),
    type: f.join('type', 'AppointmentType', NamedRef, {
      nullable: true,
      description: 'The appointment type; null when none was given.',
      write: { on: 'both', input: idOf('AppointmentType'), create: 'optional' },
    }),
    status: f.join('status', 'AppointmentStatus', StatusRef, {
      nullable: true,
      description: 'Its status, one the clinic configured (e.g. Scheduled); null when none is set.',
      // Left out of a booking: the clinic's default status.
      write: { on: 'both', input: idOf('AppointmentStatus'), create: 'optional' },
    }),
    start: f.time('startAt', {
      description: 'When it starts (ISO 8601, UTC).',
      write: {
        on: 'both',
        input: instant.meta({ description: 'When it starts (ISO 8601 with an offset).' }),
        // Moving the start keeps the length; the provider's bookings must not overlap.
        byRun: true,
      },
    }),
    end: f.time('endAt', {
      description: 'When it ends (ISO 8601, UTC).',
      write: {
        on: 'both',
        input: instant.meta({
          description: "When it ends; defaults to start plus the appointment type's duration.",
        }),
        create: 'optional',
        byRun: true,
      },
    }),
    note: f.column('note', 'String', {
      nullable: true,
      description: "Staff's note; null when none.",
      write: {
        on: 'both',
        input: text(NOTE_MAX),
        description: "Staff's note on the booking, up to 4000 characters.",
      },
    }),
    cancelled_at: f.time('cancelledAt', {
      nullable: true,
      description: 'When it was cancelled; null while it stands.',
    }),
    cancellation_reason: f.column('cancellationReason', 'String', {
      nullable: true,
      description: 'Why it was cancelled; null when it was not, or no reason was given.',
    }),
    created_at: createdAt(),
    updated_at: updatedAt(),
  },
});
