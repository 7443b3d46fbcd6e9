import { type ChildList, newestFirst } from '../child-lists.ts';
import { Payment } from './payment.resource.ts';

/** A patient's payments and refunds (rows with is_refund), newest first by paid_at. */
export const patientPayments: ChildList = {
  resource: Payment,
  keyset: newestFirst('pay', 'paidAt'),
  parent: 'patient',
};
