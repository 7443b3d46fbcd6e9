import { defineResource, f } from '../../resource.ts';
import { color, name } from '../../write-input.ts';
import { entryFields } from './entry-fields.ts';
import { label } from './entry-inputs.ts';

export const Provider = defineResource({
  name: 'Provider',
  kind: 'Provider',
  scopes: ['catalog:read'],
  description: 'Someone appointments are booked with: a dentist, a hygienist, a veterinarian, ….',
  fields: {
    id: f.id({ description: 'The provider id (prv_…).' }),
    name: f.column('name', 'String', { description: 'Their name.', write: { on: 'both', input: label } }),
    type: f.column('type', 'String', {
      description: 'e.g. dentist, hygienist, veterinarian',
      write: {
        on: 'both',
        input: name(64).meta({ description: 'e.g. dentist, hygienist, veterinarian.' }),
      },
    }),
    color: f.column('color', 'String', {
      nullable: true,
      description: 'Display color (#rrggbb); null when none.',
      write: { on: 'both', input: color },
    }),
    ...entryFields(),
  },
});
