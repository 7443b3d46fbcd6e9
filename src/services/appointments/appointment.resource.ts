import { PatientSummary } from '../patients/patient.resource.ts';
import { defineResource, f } from '../resource.ts';
import { NamedRef, StatusRef } from '../shapes.ts';

export const Appointment = defineResource({
  name: 'Appointment',
  kind: 'Appointment',
  scopes: ['appointments:read'],
  fields: {
    id: f.id(),
    patient: f.join('patient', 'Patient', PatientSummary, { fromParent: true }),
    branch: f.join('branch', 'Branch', NamedRef),
    provider: f.join('provider', 'Provider', NamedRef, { nullable: true }),
    type: f.join('type', 'AppointmentType', NamedRef, { nullable: true }),
    status: f.join('status', 'AppointmentStatus', StatusRef, { nullable: true }),
    start: f.time('startAt'),
    end: f.time('endAt'),
    note: f.column('note', 'String', { nullable: true }),
    cancelled_at: f.time('cancelledAt', { nullable: true }),
    cancellation_reason: f.column('cancellationReason', 'String', { nullable: true }),
    created_at: f.time('createdAt'),
    updated_at: f.time('updatedAt'),
  },
});
