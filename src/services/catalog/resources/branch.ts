import { defineResource, f } from '../../resource.ts';
import { Address } from '../../shapes.ts';
import { entryFields } from './entry-fields.ts';

const noAddress = () => ({ line1: null, line2: null, city: null, postal_code: null, country: null });

export const Branch = defineResource({
  name: 'Branch',
  kind: 'Branch',
  scopes: ['catalog:read'],
  fields: {
    id: f.id(),
    name: f.column('name', 'String'),
    phone: f.column('phone', 'String', { nullable: true }),
    // Always an object: a branch without an address has every line null.
    address: f.json('address', Address, { whenNull: noAddress }),
    color: f.column('color', 'String', { nullable: true }),
    ...entryFields(),
  },
});
