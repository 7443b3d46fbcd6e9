import { defineResource, f } from '../../resource.ts';
import { entryFields } from './entry-fields.ts';

export const BillingAccount = defineResource({
  name: 'BillingAccount',
  kind: 'BillingAccount',
  scopes: ['catalog:read'],
  fields: {
    id: f.id({ description: 'Pass as billing_account_id when recording a payment.' }),
    business_name: f.column('businessName', 'String'),
    business_id: f.column('businessId', 'String', {
      nullable: true,
      description: 'Registered number printed on receipts.',
    }),
    ...entryFields(),
  },
});
