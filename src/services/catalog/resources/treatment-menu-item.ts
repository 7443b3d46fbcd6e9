import { defineResource, f } from '../../resource.ts';
import { entryFields } from './entry-fields.ts';

export const TreatmentMenuItem = defineResource({
  name: 'TreatmentMenuItem',
  kind: 'TreatmentMenuItem',
  scopes: ['catalog:read'],
  fields: {
    id: f.id(),
    name: f.column('name', 'String'),
    code: f.column('code', 'String', { nullable: true }),
    price: f.column('price', 'Float', { nullable: true }),
    color: f.column('color', 'String', { nullable: true }),
    category_id: f.ref('category', 'TreatmentCategory', { nullable: true }),
    ...entryFields(),
  },
});
