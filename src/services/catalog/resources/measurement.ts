import { defineResource, f } from '../../resource.ts';
import { entryFields } from './entry-fields.ts';

export const Measurement = defineResource({
  name: 'Measurement',
  kind: 'Measurement',
  scopes: ['catalog:read', 'measurements:read'],
  fields: {
    id: f.id(),
    name: f.column('name', 'String'),
    unit: f.column('unit', 'String', { nullable: true }),
    is_required: f.column('isRequired', 'Boolean'),
    ...entryFields(),
  },
});
