import { defineResource, f } from '../../resource.ts';
import { entryFields } from './entry-fields.ts';

export const AppointmentStatusItem = defineResource({
  name: 'AppointmentStatusItem',
  kind: 'AppointmentStatus',
  scopes: ['catalog:read'],
  fields: {
    id: f.id(),
    name: f.column('name', 'String'),
    color: f.column('color', 'String'),
    enabled: f.column('enabled', 'Boolean'),
    ...entryFields(),
  },
});
