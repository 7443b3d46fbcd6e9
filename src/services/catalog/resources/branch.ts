import { addressInput } from '../../contact-input.ts';
import { defineResource, f } from '../../resource.ts';
import { Address } from '../../shapes.ts';
import { color, text } from '../../write-input.ts';
import { entryFields } from './entry-fields.ts';
import { label } from './entry-inputs.ts';

const noAddress = () => ({ line1: null, line2: null, city: null, postal_code: null, country: null });

export const Branch = defineResource({
  name: 'Branch',
  kind: 'Branch',
  scopes: ['catalog:read'],
  description: 'A branch (location) of the clinic.',
  fields: {
    id: f.id({ description: 'The branch id (br_…).' }),
    name: f.column('name', 'String', { description: 'Its name.', write: { on: 'both', input: label } }),
    phone: f.column('phone', 'String', {
      nullable: true,
      description: 'Its phone number; null when none.',
      write: {
        on: 'both',
        input: text(40).meta({ description: 'Local (035550100) or international (+972…) form.' }),
        // Stored in E.164, read with the clinic's country (catalog-writes.ts).
        byRun: true,
      },
    }),
    // Always an object: a branch without an address has every line null.
    address: f.json('address', Address, {
      whenNull: noAddress,
      description: 'Its address; every part null when none is recorded.',
      // Read as an object always, yet a write may leave it out or clear it (null): stored with every key.
      write: { on: 'both', input: addressInput, create: 'nullable', update: 'nullable', byRun: true },
    }),
    color: f.column('color', 'String', {
      nullable: true,
      description: 'Display color (#rrggbb); null when none.',
      write: { on: 'both', input: color },
    }),
    ...entryFields(),
  },
});
