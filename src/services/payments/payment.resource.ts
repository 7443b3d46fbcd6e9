import { PatientSummary } from '../patients/patient.resource.ts';
import { createdAt, updatedAt } from '../record-times.ts';
import { defineResource, defineShape, f } from '../resource.ts';
import { instant, text } from '../write-input.ts';
import { accountId, currencyCode, method, money, PaymentMethodType } from './payment-rules.ts';

export { PaymentMethodType };

/** The longest note a payment keeps. */
export const NOTE_MAX = 4000;

const BillingAccountRef = defineShape(
  'BillingAccountRef',
  {
    id: f.id({ description: 'The billing account id (ba_…).' }),
    business_name: f.column('businessName', 'String', { description: 'The name its receipts carry.' }),
  },
  'The billing account (business) a payment was recorded under.',
);

const PaymentMethod = defineShape(
  'PaymentMethod',
  { type: f.key('type', 'String', { enum: PaymentMethodType }) },
  'How it was paid. Card, check and bank details are never returned.',
);

/** Card, check and bank details (methodDetails) are deliberately not a field. */
export const Payment = defineResource({
  name: 'Payment',
  kind: 'Payment',
  scopes: ['payments:read'],
  description: 'A payment by a patient, or a refund of one.',
  fields: {
    id: f.id({ description: 'The payment id (pay_…).' }),
    patient: f.join('patient', 'Patient', PatientSummary, {
      fromParent: true,
      description: 'The patient who paid (or was refunded).',
    }),
    billing_account: f.join('billingAccount', 'BillingAccount', BillingAccountRef, {
      description: 'The billing account it was recorded under.',
      write: {
        on: 'create',
        input: accountId,
        description: 'Required unless the clinic has exactly one billing account.',
        create: 'optional',
        byRun: true,
      },
    }),
    amount: f.column('amount', 'Float', {
      description: 'The amount, positive (a refund too).',
      write: { on: 'create', input: money('Positive, at most two decimals.') },
    }),
    currency: f.column('currency', 'String', {
      description: 'ISO 4217 currency code, e.g. ILS.',
      write: {
        on: 'create',
        input: currencyCode,
        description: "ISO 4217; defaults to the clinic's (from its country).",
        create: 'optional',
        byRun: true,
      },
    }),
    // Written as the method object (its type and the details kept for the clinic's records).
    method: f.derived(['methodType'], PaymentMethod, (row) => ({ type: row.methodType }), {
      description: 'How it was paid.',
      write: { on: 'create', input: method, byRun: true },
    }),
    is_refund: f.column('isRefund', 'Boolean', { description: 'true for a refund, false for a payment.' }),
    refund_of_id: f.ref('refundOf', 'Payment', {
      nullable: true,
      description: 'A refund: the payment it refunds (pay_…); null for a payment.',
    }),
    receipt_number: f.column('receiptNumber', 'String', {
      nullable: true,
      description: "The receipt's number; null when none was issued.",
    }),
    paid_at: f.time('paidAt', {
      description: 'When it was paid (ISO 8601, UTC).',
      write: {
        on: 'create',
        input: instant,
        description: 'Defaults to now.',
        create: 'optional',
        byRun: true,
      },
    }),
    note: f.column('note', 'String', {
      nullable: true,
      description: "Staff's note; null when none.",
      write: { on: 'create', input: text(NOTE_MAX), description: "Staff's note, up to 4000 characters." },
    }),
    cancelled_at: f.time('cancelledAt', {
      nullable: true,
      description: 'When it was cancelled; null while it stands.',
    }),
    created_at: createdAt(),
    updated_at: updatedAt(),
  },
});
