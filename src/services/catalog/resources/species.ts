import { defineResource, f } from '../../resource.ts';
import { entryFields } from './entry-fields.ts';

export const Species = defineResource({
  name: 'Species',
  kind: 'Species',
  scopes: ['catalog:read'],
  fields: { id: f.id(), name: f.column('name', 'String'), ...entryFields() },
});
