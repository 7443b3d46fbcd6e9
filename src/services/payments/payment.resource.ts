import type { paymentMethods } from '../../entities/index.ts';
import { defineEnum } from '../../lib/enums.ts';
import { PatientSummary } from '../patients/patient.resource.ts';
import { createdAt, updatedAt } from '../record-times.ts';
import { defineResource, defineShape, f } from '../resource.ts';

type PaymentMethod = (typeof paymentMethods)[number];

/** The column's CHECK set (entities), each value described: the compiler holds the two equal. */
export const PaymentMethodType = defineEnum<PaymentMethod>('PaymentMethodType', 'How a payment was made.', {
  cash: 'Cash.',
  card: 'A payment card.',
  check: 'A check.',
  bank_transfer: 'A bank transfer.',
  other: 'Any other method.',
});

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
    }),
    amount: f.column('amount', 'Float', { description: 'The amount, positive (a refund too).' }),
    currency: f.column('currency', 'String', { description: 'ISO 4217 currency code, e.g. ILS.' }),
    method: f.derived(['methodType'], PaymentMethod, (row) => ({ type: row.methodType }), {
      description: 'How it was paid.',
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
    paid_at: f.time('paidAt', { description: 'When it was paid (ISO 8601, UTC).' }),
    note: f.column('note', 'String', { nullable: true, description: "Staff's note; null when none." }),
    cancelled_at: f.time('cancelledAt', {
      nullable: true,
      description: 'When it was cancelled; null while it stands.',
    }),
    created_at: createdAt(),
    updated_at: updatedAt(),
  },
});
