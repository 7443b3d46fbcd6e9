import { defineResource, f } from '../../resource.ts';
import { entryFields } from './entry-fields.ts';

export const Breed = defineResource({
  name: 'Breed',
  kind: 'Breed',
  scopes: ['catalog:read'],
  fields: {
    id: f.id(),
    name: f.column('name', 'String'),
    species_id: f.ref('species', 'Species', { nullable: true }),
    ...entryFields(),
  },
});
