import { defineResource, f } from '../../resource.ts';
import { text } from '../../write-input.ts';
import { entryFields } from './entry-fields.ts';
import { label } from './entry-inputs.ts';

export const BillingAccount = defineResource({
  name: 'BillingAccount',
  kind: 'BillingAccount',
  scopes: ['catalog:read'],
  description:
    'A business of the clinic payments are recorded under; its receipts carry its name and number.',
  fields: {
    id: f.id({ description: 'Pass as billing_account_id when recording a payment.' }),
    business_name: f.column('businessName', 'String', {
      description: 'The name its receipts carry.',
      write: { on: 'both', input: label },
    }),
    business_id: f.column('businessId', 'String', {
      nullable: true,
      description: 'Registered number printed on receipts.',
      write: {
        on: 'both',
        input: text(64).meta({ description: 'Registered number printed on receipts.' }),
      },
    }),
    ...entryFields(),
  },
});
