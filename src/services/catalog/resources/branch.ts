import { defineResource, f } from '../../resource.ts';
import { Address } from '../../shapes.ts';
import { entryFields } from './entry-fields.ts';

const noAddress = () => ({ line1: null, line2: null, city: null, postal_code: null, country: null });

export const Branch = defineResource({
  name: 'Branch',
  kind: 'Branch',
  scopes: ['catalog:read'],
  description: 'A branch (location) of the clinic.',
  fields: {
    id: f.id({ description: 'The branch id (br_…).' }),
    name: f.column('name', 'String', { description: 'Its name.' }),
    phone: f.column('phone', 'String', { nullable: true, description: 'Its phone number; null when none.' }),
    // Always an object: a branch without an address has every line null.
    address: f.json('address', Address, {
      whenNull: noAddress,
      description: 'Its address; every part null when none is recorded.',
    }),
    color: f.column('color', 'String', {
      nullable: true,
      description: 'Display color (#rrggbb); null when none.',
    }),
    ...entryFields(),
  },
});
