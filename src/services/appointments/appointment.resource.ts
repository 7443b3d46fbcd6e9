import { PatientSummary } from '../patients/patient.resource.ts';
import { createdAt, updatedAt } from '../record-times.ts';
import { defineResource, f } from '../resource.ts';
import { NamedRef, StatusRef } from '../shapes.ts';

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
    }),
    branch: f.join('branch', 'Branch', NamedRef, { description: 'Where it takes place.' }),
    provider: f.join('provider', 'Provider', NamedRef, {
      nullable: true,
      description: 'Who sees the patient; null when not assigned.',
    }),
    type: f.join('type', 'AppointmentType', NamedRef, {
      nullable: true,
      description: 'The appointment type; null when none was given.',
    }),
    status: f.join('status', 'AppointmentStatus', StatusRef, {
      nullable: true,
      description: 'Its status, one the clinic configured (e.g. Scheduled); null when none is set.',
    }),
    start: f.time('startAt', { description: 'When it starts (ISO 8601, UTC).' }),
    end: f.time('endAt', { description: 'When it ends (ISO 8601, UTC).' }),
    note: f.column('note', 'String', { nullable: true, description: "Staff's note; null when none." }),
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
