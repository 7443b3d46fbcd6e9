import type { treatmentStatuses } from '../../entities/index.ts';
import { defineEnum } from '../../lib/enums.ts';
import { PatientSummary } from '../patients/patient.resource.ts';
import { createdAt, updatedAt } from '../record-times.ts';
import { defineResource, defineShape, f } from '../resource.ts';
import { NamedRef } from '../shapes.ts';

/** The column's CHECK set (entities), each value described: the compiler holds the two equal. */
export const TreatmentStatus = defineEnum<(typeof treatmentStatuses)[number]>(
  'TreatmentStatus',
  'Whether a treatment is planned or done.',
  {
    planned: 'To be performed.',
    completed: 'Performed.',
  },
);

/** The menu item a treatment was (docs/decisions.md). */
const TreatmentRef = defineShape(
  'TreatmentRef',
  {
    id: f.id({ description: 'The menu item id (trm_…).' }),
    name: f.column('name', 'String', { description: 'Its name.' }),
    code: f.column('code', 'String', { nullable: true, description: 'Its code; null when it has none.' }),
  },
  "The item of the clinic's treatment menu a treatment is.",
);

export const Treatment = defineResource({
  name: 'Treatment',
  kind: 'Treatment',
  scopes: ['treatments:read'],
  description: 'A procedure recorded for a patient, planned or performed.',
  fields: {
    id: f.id({ description: 'The treatment id (trt_…).' }),
    patient: f.join('patient', 'Patient', PatientSummary, {
      fromParent: true,
      description: 'The patient treated.',
    }),
    appointment_id: f.ref('appointment', 'Appointment', {
      nullable: true,
      description: 'The appointment it belongs to (appt_…); null when none.',
    }),
    treatment: f.join('menuItem', 'TreatmentMenuItem', TreatmentRef, {
      nullable: true,
      description: 'The menu item it is; null when recorded without one.',
    }),
    provider: f.join('provider', 'Provider', NamedRef, {
      nullable: true,
      description: 'Who performs it; null when not recorded.',
    }),
    description: f.column('description', 'String', {
      nullable: true,
      description: 'What was done, in words; null when none.',
    }),
    teeth: f.column('teeth', ['String'], {
      nullable: true,
      description: 'The teeth treated, as FDI numbers (e.g. 11, 36); null when none.',
    }),
    price: f.column('price', 'Float', {
      nullable: true,
      description: "The price, in the clinic's currency; null when none.",
    }),
    status: f.column('status', 'String', { enum: TreatmentStatus }),
    performed_at: f.time('performedAt', {
      description: 'When it was performed, or is planned for (ISO 8601, UTC).',
    }),
    note: f.column('note', 'String', { nullable: true, description: "Staff's note; null when none." }),
    cancelled_at: f.time('cancelledAt', {
      nullable: true,
      description: 'When it was cancelled (removed); null while it stands.',
    }),
    cancellation_reason: f.column('cancellationReason', 'String', {
      nullable: true,
      description: 'Why it was cancelled; null when it was not, or no reason was given.',
    }),
    created_at: createdAt(),
    updated_at: updatedAt(),
  },
});
