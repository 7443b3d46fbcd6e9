import { defineEnum } from '../../lib/enums.ts';
import { PatientSummary } from '../patients/patient.resource.ts';
import { defineResource, defineShape, f } from '../resource.ts';
import { NamedRef } from '../shapes.ts';

export const TreatmentStatus = defineEnum('TreatmentStatus', 'Whether a treatment is planned or done.', {
  planned: 'To be performed.',
  completed: 'Performed.',
});

/** The menu item a treatment was (docs/decisions.md). */
const TreatmentRef = defineShape('TreatmentRef', {
  id: f.id(),
  name: f.column('name', 'String'),
  code: f.column('code', 'String', { nullable: true }),
});

export const Treatment = defineResource({
  name: 'Treatment',
  kind: 'Treatment',
  scopes: ['treatments:read'],
  fields: {
    id: f.id(),
    patient: f.join('patient', 'Patient', PatientSummary, { fromParent: true }),
    appointment_id: f.ref('appointment', 'Appointment', { nullable: true }),
    treatment: f.join('menuItem', 'TreatmentMenuItem', TreatmentRef, { nullable: true }),
    provider: f.join('provider', 'Provider', NamedRef, { nullable: true }),
    description: f.column('description', 'String', { nullable: true }),
    teeth: f.column('teeth', ['String'], { nullable: true }),
    price: f.column('price', 'Float', { nullable: true }),
    status: f.column('status', 'String', { enum: TreatmentStatus }),
    performed_at: f.time('performedAt'),
    note: f.column('note', 'String', { nullable: true }),
    cancelled_at: f.time('cancelledAt', { nullable: true }),
    cancellation_reason: f.column('cancellationReason', 'String', { nullable: true }),
    created_at: f.time('createdAt'),
    updated_at: f.time('updatedAt'),
  },
});
