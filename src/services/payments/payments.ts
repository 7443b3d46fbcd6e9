import { Payment as PaymentEntity } from '../../entities/index.ts';
import { type ChildList, newestFirst } from '../child-lists.ts';

/** A patient's payments and refunds (rows with is_refund), newest first by paid_at. */
export const patientPayments: ChildList = {
  entity: PaymentEntity,
  keyset: newestFirst('pay', 'paidAt'),
  parent: 'patient',
};
