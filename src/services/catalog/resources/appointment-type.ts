import { defineResource, f } from '../../resource.ts';
import { entryFields } from './entry-fields.ts';

export const AppointmentTypeItem = defineResource({
  name: 'AppointmentTypeItem',
  kind: 'AppointmentType',
  scopes: ['catalog:read'],
  fields: {
    id: f.id(),
    name: f.column('name', 'String'),
    duration_minutes: f.column('durationMinutes', 'Int', { description: 'Default duration.' }),
    color: f.column('color', 'String', { nullable: true }),
    ...entryFields(),
  },
});
