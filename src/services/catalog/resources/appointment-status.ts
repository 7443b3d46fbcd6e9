import { defineResource, f } from '../../resource.ts';
import { entryFields } from './entry-fields.ts';

export const AppointmentStatusItem = defineResource({
  name: 'AppointmentStatusItem',
  kind: 'AppointmentStatus',
  scopes: ['catalog:read'],
  description: 'An appointment status the clinic uses (Scheduled, Confirmed, …), in its configured order.',
  fields: {
    id: f.id({ description: 'The status id (aps_…).' }),
    name: f.column('name', 'String', { description: 'The status, as the clinic named it.' }),
    color: f.column('color', 'String', { description: 'Display color (#rrggbb).' }),
    enabled: f.column('enabled', 'Boolean', {
      description: 'Whether staff can set it on an appointment.',
    }),
    ...entryFields(),
  },
});
