import type { KeysetSpec } from '../../db/pagination.ts';
import { Payment as PaymentEntity } from '../../entities/index.ts';
import type { ChildList } from '../child-lists.ts';
import type { Row } from '../resource.ts';

/** A patient's payments and refunds (rows with is_refund), newest first by paid_at. */
export const patientPayments: ChildList = {
  entity: PaymentEntity,
  keyset: {
    tag: 'pay',
    sortBy: { prop: 'paidAt', kind: 'date', dir: 'desc', get: (p) => p.paidAt },
    idDir: 'desc',
    id: (p) => p.id,
  } satisfies KeysetSpec<Row>,
  parent: 'patient',
};
