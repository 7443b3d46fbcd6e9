import { type ChildList, newestFirst } from '../child-lists.ts';
import type { RecordList } from '../record-lists.ts';
import { Payment } from './payment.resource.ts';

/** A patient's payments and refunds (rows with is_refund), newest first by paid_at. */
export const paymentKeyset = newestFirst('pay', 'paidAt');

export const patientPayments: ChildList = {
  resource: Payment,
  keyset: paymentKeyset,
  parent: 'patient',
};

/** GET /v1/payments: every payment and refund of the clinic, newest first by paid_at. */
export const paymentRecords: RecordList = {
  resource: Payment,
  keyset: paymentKeyset,
  timeProp: 'paidAt',
  refs: {
    patient_id: ['patient', 'Patient'],
    billing_account_id: ['billingAccount', 'BillingAccount'],
  },
};
