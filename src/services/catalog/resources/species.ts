import { defineResource, f } from '../../resource.ts';
import { entryFields } from './entry-fields.ts';
import { label } from './entry-inputs.ts';

export const Species = defineResource({
  name: 'Species',
  kind: 'Species',
  scopes: ['catalog:read'],
  description: 'An animal species (veterinary clinics).',
  fields: {
    id: f.id({ description: 'The species id (spc_…).' }),
    name: f.column('name', 'String', {
      description: 'Its name, e.g. Dog.',
      write: { on: 'both', input: label },
    }),
    ...entryFields(),
  },
});
