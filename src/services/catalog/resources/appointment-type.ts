import { defineResource, f } from '../../resource.ts';
import { entryFields } from './entry-fields.ts';

export const AppointmentTypeItem = defineResource({
  name: 'AppointmentTypeItem',
  kind: 'AppointmentType',
  scopes: ['catalog:read'],
  description: 'A kind of appointment the clinic books, with its default duration.',
  fields: {
    id: f.id({ description: 'The appointment type id (apt_…).' }),
    name: f.column('name', 'String', { description: 'Its name, e.g. Checkup.' }),
    duration_minutes: f.column('durationMinutes', 'Int', { description: 'Default duration.' }),
    color: f.column('color', 'String', {
      nullable: true,
      description: 'Display color (#rrggbb); null when none.',
    }),
    ...entryFields(),
  },
});
