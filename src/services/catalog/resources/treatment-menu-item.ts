import { defineResource, f } from '../../resource.ts';
import { color, idOf } from '../../write-input.ts';
import { entryFields } from './entry-fields.ts';
import { code, label, price } from './entry-inputs.ts';

export const TreatmentMenuItem = defineResource({
  name: 'TreatmentMenuItem',
  kind: 'TreatmentMenuItem',
  scopes: ['catalog:read'],
  description: "A procedure on the clinic's treatment menu.",
  fields: {
    id: f.id({ description: 'The menu item id (trm_…).' }),
    name: f.column('name', 'String', { description: 'Its name.', write: { on: 'both', input: label } }),
    code: f.column('code', 'String', {
      nullable: true,
      description: 'Its code; null when it has none.',
      write: { on: 'both', input: code },
    }),
    price: f.column('price', 'Float', {
      nullable: true,
      description: "Its price, in the clinic's currency (a new treatment's default); null when none.",
      write: { on: 'both', input: price },
    }),
    color: f.column('color', 'String', {
      nullable: true,
      description: 'Display color (#rrggbb); null when none.',
      write: { on: 'both', input: color },
    }),
    category_id: f.ref('category', 'TreatmentCategory', {
      nullable: true,
      description: 'Its menu category (trc_…); null when none.',
      write: { on: 'both', input: idOf('TreatmentCategory') },
    }),
    ...entryFields(),
  },
});
