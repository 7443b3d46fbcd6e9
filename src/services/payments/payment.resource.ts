import { defineEnum } from '../../lib/enums.ts';
import { PatientSummary } from '../patients/patient.resource.ts';
import { defineResource, defineShape, f } from '../resource.ts';

export const PaymentMethodType = defineEnum('PaymentMethodType', 'How a payment was made.', {
  cash: 'Cash.',
  card: 'A payment card.',
  check: 'A check.',
  bank_transfer: 'A bank transfer.',
  other: 'Any other method.',
});

const BillingAccountRef = defineShape('BillingAccountRef', {
  id: f.id(),
  business_name: f.column('businessName', 'String'),
});

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
  fields: {
    id: f.id(),
    patient: f.join('patient', 'Patient', PatientSummary, { fromParent: true }),
    billing_account: f.join('billingAccount', 'BillingAccount', BillingAccountRef),
    amount: f.column('amount', 'Float'),
    currency: f.column('currency', 'String'),
    method: f.derived(['methodType'], PaymentMethod, (row) => ({ type: row.methodType })),
    is_refund: f.column('isRefund', 'Boolean'),
    refund_of_id: f.ref('refundOf', 'Payment', { nullable: true }),
    receipt_number: f.column('receiptNumber', 'String', { nullable: true }),
    paid_at: f.time('paidAt'),
    note: f.column('note', 'String', { nullable: true }),
    cancelled_at: f.time('cancelledAt', { nullable: true }),
    created_at: f.time('createdAt'),
    updated_at: f.time('updatedAt'),
  },
});
