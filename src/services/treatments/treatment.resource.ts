import type { treatmentStatuses } from '../../entities/index.ts';
import { defineEnum } from '../../lib/enums.ts';
import { PatientSummary } from '../patients/patient.resource.ts';
import { createdAt, updatedAt } from '../record-times.ts';
import { defineResource, defineShape, f } from '../resource.ts';
import { NamedRef } from '../shapes.ts';
import { amount2, idOf, instant, text, z } from '../write-input.ts';

/** The column's CHECK set (entities), each value described: the compiler holds the two equal. */
export const TreatmentStatus = defineEnum<(typeof treatmentStatuses)[number]>(
  'TreatmentStatus',
  'Whether a treatment is planned or done.',
  {
    planned: 'To be performed.',
    completed: 'Performed.',
  },
);

/** The longest note a treatment keeps. */
export const NOTE_MAX = 4000;

/** FDI two-digit tooth numbers: permanent quadrants 1–4 (teeth 1–8), primary 5–8 (teeth 1–5). */
const FDI = /^(?:[1-4][1-8]|[5-8][1-5])$/;

/** Every field but the patient (the path's) is written by the record and the change; a record may leave out all but when. */
const recorded = { on: 'both', create: 'optional' } as const;

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
      write: {
        ...recorded,
        input: idOf('Appointment').meta({ description: 'An appointment of the same patient.' }),
      },
    }),
    treatment: f.join('menuItem', 'TreatmentMenuItem', TreatmentRef, {
      nullable: true,
      description: 'The menu item it is; null when recorded without one.',
      write: {
        ...recorded,
        input: idOf('TreatmentMenuItem').meta({
          description: 'The menu item (`treatment` in the read shape).',
        }),
      },
    }),
    provider: f.join('provider', 'Provider', NamedRef, {
      nullable: true,
      description: 'Who performs it; null when not recorded.',
      write: { ...recorded, input: idOf('Provider') },
    }),
    description: f.column('description', 'String', {
      nullable: true,
      description: 'What was done, in words; null when none.',
      write: {
        ...recorded,
        input: text(255).meta({ description: 'What was done, in words (up to 255 characters).' }),
      },
    }),
    teeth: f.column('teeth', ['String'], {
      nullable: true,
      description: 'The teeth treated, as FDI numbers (e.g. 11, 36); null when none.',
      write: {
        ...recorded,
        input: z
          .array(text(2).refine((v) => FDI.test(v), 'must be an FDI tooth number, e.g. "11" or "55"'))
          .max(52)
          .meta({ description: 'Tooth numbers (FDI), e.g. ["11", "12"].' }),
      },
    }),
    price: f.column('price', 'Float', {
      nullable: true,
      description: "The price, in the clinic's currency; null when none.",
      write: {
        ...recorded,
        // As numeric(12, 2) holds it; left out of a record, the menu item's price.
        input: amount2(0).meta({ description: "The price charged; defaults to the menu item's price." }),
        byRun: true,
      },
    }),
    status: f.column('status', 'String', {
      enum: TreatmentStatus,
      // Left out of a record: planned.
      write: {
        ...recorded,
        input: z.enum(TreatmentStatus.values).meta({ description: 'Whether it is planned or completed.' }),
        byRun: true,
      },
    }),
    performed_at: f.time('performedAt', {
      description: 'When it was performed, or is planned for (ISO 8601, UTC).',
      write: {
        on: 'both',
        input: instant.meta({ description: 'When it was (or is planned to be) performed.' }),
      },
    }),
    note: f.column('note', 'String', {
      nullable: true,
      description: "Staff's note; null when none.",
      write: {
        on: 'both',
        input: text(NOTE_MAX).meta({ description: "Staff's note, up to 4000 characters." }),
      },
    }),
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
