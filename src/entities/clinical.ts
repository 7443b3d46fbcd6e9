import { defineEntity, p } from '@mikro-orm/core';
import {
  AppointmentStatus,
  AppointmentType,
  BillingAccount,
  Branch,
  Provider,
  TreatmentMenuItem,
} from './catalog.ts';
import { Patient } from './patient.ts';
import { tenantColumns, versionedTimestamps } from './tenant.ts';

const AppointmentSchema = defineEntity({
  name: 'Appointment',
  indexes: [{ properties: ['patient', 'startAt', 'id'] }],
  properties: {
    ...tenantColumns(),
    patient: () => p.manyToOne(Patient),
    branch: () => p.manyToOne(Branch),
    provider: () => p.manyToOne(Provider).nullable(),
    type: () => p.manyToOne(AppointmentType).nullable(),
    status: () => p.manyToOne(AppointmentStatus).nullable(),
    startAt: p.datetime(),
    endAt: p.datetime(),
    note: p.text().nullable(),
    cancelledAt: p.datetime().nullable(),
    cancellationReason: p.text().nullable(),
    ...versionedTimestamps(),
  },
});
export class Appointment extends AppointmentSchema.class {}
AppointmentSchema.setClass(Appointment);

export const treatmentStatuses = ['planned', 'completed'] as const;

const TreatmentSchema = defineEntity({
  name: 'Treatment',
  indexes: [{ properties: ['patient', 'performedAt', 'id'] }],
  properties: {
    ...tenantColumns(),
    patient: () => p.manyToOne(Patient),
    appointment: () => p.manyToOne(Appointment).nullable(),
    menuItem: () => p.manyToOne(TreatmentMenuItem).nullable(),
    provider: () => p.manyToOne(Provider).nullable(),
    description: p.string().nullable(),
    /** Tooth numbers (FDI) at dental clinics. */
    teeth: p.array().nullable(),
    price: p.decimal('number').precision(12).scale(2).nullable(),
    status: p.enum(treatmentStatuses),
    performedAt: p.datetime(),
    note: p.text().nullable(),
    cancelledAt: p.datetime().nullable(),
    cancellationReason: p.text().nullable(),
    ...versionedTimestamps(),
  },
});
export class Treatment extends TreatmentSchema.class {}
TreatmentSchema.setClass(Treatment);

export const paymentMethods = ['cash', 'card', 'check', 'bank_transfer', 'other'] as const;

const PaymentSchema = defineEntity({
  name: 'Payment',
  indexes: [{ properties: ['patient', 'paidAt', 'id'] }],
  properties: {
    ...tenantColumns(),
    patient: () => p.manyToOne(Patient),
    billingAccount: () => p.manyToOne(BillingAccount),
    /** Positive; a refund has isRefund and is shown as the amount given back. */
    amount: p.decimal('number').precision(12).scale(2),
    currency: p.string().length(3),
    methodType: p.enum(paymentMethods),
    /** Card, check and bank details. Stored for the clinic's own records; never returned by the API. */
    methodDetails: p.json<Record<string, unknown>>().nullable().hidden(),
    isRefund: p.boolean().default(false),
    refundOf: () => p.manyToOne(Payment).nullable(),
    receiptNumber: p.string().nullable(),
    paidAt: p.datetime(),
    note: p.text().nullable(),
    cancelledAt: p.datetime().nullable(),
    ...versionedTimestamps(),
  },
});
export class Payment extends PaymentSchema.class {}
PaymentSchema.setClass(Payment);

const CallSchema = defineEntity({
  name: 'Call',
  // GET /v1/calls: the clinic's calls newest first by started_at (keyset on started_at, id),
  // and a patient's (`patient_id`).
  indexes: [
    { properties: ['clinic', 'startedAt', 'id'] },
    { properties: ['patient', 'startedAt', 'id'] },
    // The media sweep's question: does a call refer to this file (src/media/orphans.ts)?
    {
      name: 'call_clinic_id_recording_path_index',
      expression:
        'create index "call_clinic_id_recording_path_index" on "call" ("clinic_id", "recording_path") where "recording_path" is not null',
    },
  ],
  properties: {
    ...tenantColumns(),
    patient: () => p.manyToOne(Patient).nullable(),
    direction: p.enum(['inbound', 'outbound'] as const),
    fromPhone: p.string().nullable(),
    toPhone: p.string().nullable(),
    startedAt: p.datetime(),
    endedAt: p.datetime().nullable(),
    durationSeconds: p.integer().default(0),
    answered: p.boolean().default(false),
    note: p.text().nullable(),
    recorded: p.boolean().default(false),
    recordingAvailable: p.boolean().default(false),
    /** The media store's key of the service's own copy (src/media/store.ts). */
    recordingPath: p.string().nullable(),
    /** The sniffed type of that copy (audio/mpeg, audio/wav, ...). */
    recordingMime: p.string().nullable(),
    /** null, pending, completed or failed */
    transcriptStatus: p.string().nullable(),
    transcriptSummary: p.text().nullable(),
    transcriptSegments: p.json<unknown[]>().nullable(),
    ...versionedTimestamps(),
  },
});
export class Call extends CallSchema.class {}
CallSchema.setClass(Call);
