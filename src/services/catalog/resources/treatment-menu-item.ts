import { defineResource, f } from '../../resource.ts';
import { entryFields } from './entry-fields.ts';

export const TreatmentMenuItem = defineResource({
  name: 'TreatmentMenuItem',
  kind: 'TreatmentMenuItem',
  scopes: ['catalog:read'],
  description: "A procedure on the clinic's treatment menu.",
  fields: {
    id: f.id({ description: 'The menu item id (trm_…).' }),
    name: f.column('name', 'String', { description: 'Its name.' }),
    code: f.column('code', 'String', { nullable: true, description: 'Its code; null when it has none.' }),
    price: f.column('price', 'Float', {
      nullable: true,
      description: "Its price, in the clinic's currency (a new treatment's default); null when none.",
    }),
    color: f.column('color', 'String', {
      nullable: true,
      description: 'Display color (#rrggbb); null when none.',
    }),
    category_id: f.ref('category', 'TreatmentCategory', {
      nullable: true,
      description: 'Its menu category (trc_…); null when none.',
    }),
    ...entryFields(),
  },
});
