import { defineResource, f } from '../../resource.ts';
import { entryFields } from './entry-fields.ts';

export const Provider = defineResource({
  name: 'Provider',
  kind: 'Provider',
  scopes: ['catalog:read'],
  fields: {
    id: f.id(),
    name: f.column('name', 'String'),
    type: f.column('type', 'String', { description: 'e.g. dentist, hygienist, veterinarian' }),
    color: f.column('color', 'String', { nullable: true }),
    ...entryFields(),
  },
});
