import { defineResource, f } from '../../resource.ts';
import { entryFields } from './entry-fields.ts';

export const Provider = defineResource({
  name: 'Provider',
  kind: 'Provider',
  scopes: ['catalog:read'],
  description: 'Someone appointments are booked with: a dentist, a hygienist, a veterinarian, ….',
  fields: {
    id: f.id({ description: 'The provider id (prv_…).' }),
    name: f.column('name', 'String', { description: 'Their name.' }),
    type: f.column('type', 'String', { description: 'e.g. dentist, hygienist, veterinarian' }),
    color: f.column('color', 'String', {
      nullable: true,
      description: 'Display color (#rrggbb); null when none.',
    }),
    ...entryFields(),
  },
});
