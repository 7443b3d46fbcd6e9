import {
  Appointment,
  Patient,
  Provider,
  Treatment as TreatmentEntity,
  TreatmentMenuItem,
} from '../../entities/index.ts';
import { AppError, invalid } from '../../lib/errors.ts';
import { clinicRef } from '../clinic-ref.ts';
import { clearable, text, z } from '../write-input.ts';
import { createInputOf, updateInputOf } from '../write-inputs-of.ts';
import { defineWrite, type WriteContext } from '../writes.ts';
import { NOTE_MAX, Treatment } from './treatment.resource.ts';

/**
 * Treatments: record one for a patient, change it, cancel it (issue 16). A cancelled treatment
 * stays in the record (cancelled_at, cancellation_reason) and cannot be changed any more.
 */
export const createTreatmentInput = createInputOf(Treatment, {
  status: Treatment.fields.status.write.input
    .optional()
    .meta({ description: 'planned (the default) or completed.' }),
});
export const updateTreatmentInput = updateInputOf(Treatment);

export const cancelTreatmentInput = z.strictObject({
  reason: clearable(text(NOTE_MAX)).meta({ description: 'Why; kept as the cancellation reason.' }),
});

/** The appointment must be the treatment's patient's: another patient's is the same 422 as an unknown one. */
async function appointmentOf(w: WriteContext, id: number, patientId: number): Promise<Appointment> {
  const a = await w.ref(Appointment, id, 'appointment_id');
  if (a.patient.id !== patientId)
    throw invalid('appointment_id', "appointment_id: not an appointment of the treatment's patient.");
  return a;
}

export const createTreatment = defineWrite({
  name: 'createTreatment',
  method: 'POST',
  path: '/patients/:id/treatments',
  ids: { id: 'Patient' },
  status: 201,
  tag: 'Treatments',
  summary: 'Record a treatment of a patient',
  description: "price defaults to the menu item's price, status to planned. Records treatment.created.",
  scopes: ['treatments:write'],
  input: createTreatmentInput,
  example: {
    treatment_id: 'trm_1',
    provider_id: 'prv_1',
    teeth: ['11', '12'],
    status: 'completed',
    performed_at: '2026-12-01T09:30:00+02:00',
  },
  resource: Treatment,
  event: 'treatment.created',
  // The patient is the parent the treatment is added to, not what changes.
  ifMatch: false,
  async run(w, input, id) {
    const patient = await w.load(Patient, 'Patient', id);
    const [menuItem, provider, appointment] = await Promise.all([
      input.treatment_id == null ? null : w.ref(TreatmentMenuItem, input.treatment_id, 'treatment_id'),
      input.provider_id == null ? null : w.ref(Provider, input.provider_id, 'provider_id'),
      input.appointment_id == null ? null : appointmentOf(w, input.appointment_id, patient.id),
    ]);
    const t = w.em.create(TreatmentEntity, {
      clinic: clinicRef(w),
      patient,
      appointment,
      menuItem,
      provider,
      ...(w.insertFields(input) as { performedAt: Date }),
      price: input.price ?? menuItem?.price ?? null,
      status: input.status ?? 'planned',
      cancelledAt: null,
      cancellationReason: null,
    });
    await w.em.flush();
    return t.id;
  },
});

async function loadActive(w: WriteContext, id: string | undefined): Promise<TreatmentEntity> {
  const t = await w.load(TreatmentEntity, 'Treatment', id);
  if (t.cancelledAt) throw new AppError('conflict', 'The treatment is cancelled already.');
  return t;
}

export const updateTreatment = defineWrite({
  name: 'updateTreatment',
  method: 'PATCH',
  path: '/treatments/:id',
  ids: { id: 'Treatment' },
  status: 200,
  tag: 'Treatments',
  summary: 'Change a treatment',
  description:
    'Any field but the patient; changing treatment_id keeps the price. A cancelled treatment cannot be changed (409). Records treatment.updated.',
  scopes: ['treatments:write'],
  input: updateTreatmentInput,
  example: { status: 'completed', note: 'Done in one visit' },
  resource: Treatment,
  event: 'treatment.updated',
  async run(w, input, id) {
    const t = await loadActive(w, id);
    if (input.appointment_id !== undefined)
      t.appointment =
        input.appointment_id === null ? null : await appointmentOf(w, input.appointment_id, t.patient.id);
    if (input.treatment_id !== undefined)
      t.menuItem =
        input.treatment_id === null
          ? null
          : await w.ref(TreatmentMenuItem, input.treatment_id, 'treatment_id');
    if (input.provider_id !== undefined)
      t.provider =
        input.provider_id === null ? null : await w.ref(Provider, input.provider_id, 'provider_id');
    w.setFields(t, input);
    if (input.price !== undefined) t.price = input.price;
    if (input.status !== undefined) t.status = input.status;
    return t.id;
  },
});

export const cancelTreatment = defineWrite({
  name: 'cancelTreatment',
  method: 'POST',
  path: '/treatments/:id/cancel',
  ids: { id: 'Treatment' },
  status: 200,
  tag: 'Treatments',
  summary: 'Cancel a treatment',
  description:
    'Sets cancelled_at (and cancellation_reason). Cancelling twice is a 409. Records treatment.cancelled.',
  scopes: ['treatments:write'],
  input: cancelTreatmentInput,
  example: { reason: 'Entered in error' },
  resource: Treatment,
  event: 'treatment.cancelled',
  async run(w, input, id) {
    const t = await loadActive(w, id);
    t.cancelledAt = w.now;
    t.cancellationReason = input.reason ?? null;
    return t.id;
  },
});
