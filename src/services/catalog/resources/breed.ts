import { defineResource, f } from '../../resource.ts';
import { idOf } from '../../write-input.ts';
import { entryFields } from './entry-fields.ts';
import { label } from './entry-inputs.ts';

export const Breed = defineResource({
  name: 'Breed',
  kind: 'Breed',
  scopes: ['catalog:read'],
  description: 'A breed of a species (veterinary clinics).',
  fields: {
    id: f.id({ description: 'The breed id (brd_…).' }),
    name: f.column('name', 'String', { description: 'Its name.', write: { on: 'both', input: label } }),
    species_id: f.ref('species', 'Species', {
      nullable: true,
      description: 'Its species (spc_…); null when not tied to one.',
      write: { on: 'both', input: idOf('Species') },
    }),
    ...entryFields(),
  },
});
